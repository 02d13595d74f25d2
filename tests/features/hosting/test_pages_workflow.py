"""The GitHub Pages workflow cannot run here, so its structure is checked instead: the official actions,
each pinned to a version, pip cached, the build command the README documents, the artifact deployed."""

from __future__ import annotations

import re

import pytest
from helpers import REPO, read_yaml

WORKFLOW = REPO / ".github" / "workflows" / "pages.yml"


@pytest.fixture(scope="module")
def workflow() -> dict:
    return read_yaml(WORKFLOW.read_text())


def steps(workflow: dict, job: str) -> list[dict]:
    return workflow["jobs"][job]["steps"]


def uses(workflow: dict, job: str) -> dict[str, str]:
    """Return {action: version} for every `uses:` step of a job."""
    return dict(step["uses"].split("@") for step in steps(workflow, job) if "uses" in step)


def test_the_workflow_uses_the_official_pages_actions_each_pinned_to_a_release(workflow):
    actions = {**uses(workflow, "build"), **uses(workflow, "deploy")}
    assert {
        "actions/checkout",
        "actions/setup-python",
        "actions/configure-pages",
        "actions/upload-pages-artifact",
        "actions/deploy-pages",
    } <= set(actions)
    for action, version in actions.items():
        assert re.fullmatch(r"v\d+\.\d+\.\d+", version), f"{action} is pinned to {version!r}, not a release"


def test_the_build_job_caches_pip_and_runs_the_documented_build_command(workflow):
    python = next(s for s in steps(workflow, "build") if s.get("uses", "").startswith("actions/setup-python"))
    assert python["with"]["cache"] == "pip" and python["with"]["python-version"] == "3.11"
    commands = " ".join(s.get("run", "") for s in steps(workflow, "build"))
    assert (
        "python build.py build" in commands and 'pip install ".[bfloat16,plots]"' in commands
    )  # the sample course's extras
    upload = next(s for s in steps(workflow, "build") if s.get("uses", "").startswith("actions/upload-pages"))
    assert upload["with"]["path"] == "site"


def test_the_deploy_job_has_the_permissions_and_environment_pages_requires(workflow):
    # `on` is read by YAML 1.1 as the boolean True.
    triggers = workflow["on"]
    assert "push" in triggers and "workflow_dispatch" in triggers
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    deploy = workflow["jobs"]["deploy"]
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert "steps.deployment.outputs.page_url" in deploy["environment"]["url"]


def test_the_one_time_repository_setting_is_documented():
    text = WORKFLOW.read_text() + (REPO / "docs" / "hosting.md").read_text()
    assert "Source" in text and "GitHub Actions" in text
