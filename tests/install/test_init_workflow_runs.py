"""The GitHub Pages workflow `init` writes, run here: its `run:` steps in order, on a fresh `init` course,
in a fresh virtual environment, as the runner runs them (bash -eo pipefail, in the checkout).

The `uses:` steps are GitHub's own (checkout: the course folder is the checkout; setup-python: the fresh
venv, first on PATH; configure-pages, upload-pages-artifact: the test reads site/ instead). There is no
index here, so pip is configured (by its environment variables, not by editing the step) to take
coursegen from the wheel of this repository and coursegen's dependencies from the test venv, which
the fresh venv sees through a `.pth` line (helpers.make_venv): never from the base interpreter, whose
site-packages are empty on a clean machine.

Slow (a wheel, a venv, an install and a build: about half a minute), but part of the normal suite.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from helpers import REPO, clean_env, make_venv, read_yaml, run_workflow_step
from test_wheel import run, wheel  # noqa: F401 - `wheel` is the module-scoped fixture this file uses too

from coursegen import __version__

pytestmark = pytest.mark.slow
HASH_FILES = re.compile(r"hashFiles\('([^']+)'\) != ''")


def condition_holds(condition: str, course: Path) -> bool:
    """Evaluate a step's `if:`; only the kind the workflow uses is known, anything else fails the test."""
    found = HASH_FILES.fullmatch(condition.strip())
    assert found, f"the test cannot evaluate the condition {condition!r}: teach it, or keep to hashFiles(…) != ''"
    return any(course.glob(found.group(1)))


def run_workflow(course: Path, venv: Path, pip_env: dict[str, str]) -> list[str]:
    """Run the build job's `run:` steps in order; return the commands run (skipped steps are left out)."""
    flow = read_yaml((course / ".github" / "workflows" / "pages.yml").read_text())
    env = clean_env()
    env.update(pip_env, PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}", GITHUB_WORKSPACE=str(course))
    ran = []
    for step in flow["jobs"]["build"]["steps"]:
        if "if" in step and not condition_holds(step["if"], course):
            continue
        if "run" in step:
            done = run_workflow_step(step["run"], course, env)
            assert done.returncode == 0, f"step {step.get('name', step['run'])!r} failed:\n{done.stdout}\n{done.stderr}"
            ran.append(step["run"])
    return ran


@pytest.fixture
def course(tmp_path, wheel) -> Path:  # noqa: F811 - the imported fixture, asked for by name
    """A fresh `init` course, made by the wheel's own coursegen in a venv of its own."""
    maker = make_venv(tmp_path / "maker").parent.parent
    run([maker / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel], cwd=tmp_path)
    run([maker / "bin" / "coursegen", "init", "tides", "--title", "Tides"], cwd=tmp_path)
    # Offline, pip could not fetch the pins of coursegen's own dependencies (tests/authoring/test_init.py
    # checks them): the runner has them already, through the .pth, at those very versions.
    requirements = tmp_path / "tides" / "requirements.txt"
    lines = requirements.read_text().splitlines(keepends=True)
    requirements.write_text("".join(line for line in lines if "==" not in line or line.startswith("coursegen==")))
    return tmp_path / "tides"


# Offline, pip takes coursegen from the wheel folder (as it would from PyPI) and finds every dependency
# already installed through the .pth; ignoring what is installed keeps the test venv's own (editable)
# coursegen from counting as the pinned one, and no-deps keeps pip from reinstalling its dependencies.
OFFLINE_PIP = {"PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1", "PIP_IGNORE_INSTALLED": "1"}


def test_the_workflow_of_a_new_course_installs_the_pinned_coursegen_and_builds_the_site(course, wheel, tmp_path):  # noqa: F811
    assert f"\ncoursegen=={__version__}\n" in (course / "requirements.txt").read_text()
    venv = make_venv(tmp_path / "runner").parent.parent
    ran = run_workflow(course, venv, {**OFFLINE_PIP, "PIP_FIND_LINKS": str(wheel.parent)})
    assert ran == ["python -m pip install -r requirements.txt", "coursegen build --strict"]  # no npm: no lock file
    check_the_runner_built_the_site_with_its_own_coursegen(course, venv)


def test_the_requirements_line_may_name_a_wheel_committed_to_the_course(course, wheel, tmp_path):  # noqa: F811
    """docs/start.md: until coursegen is on an index, the pinned line may name a wheel in the repository."""
    (course / "wheels").mkdir()
    shutil.copy(wheel, course / "wheels" / wheel.name)
    requirements = course / "requirements.txt"
    text = requirements.read_text().replace(f"\ncoursegen=={__version__}\n", f"\n./wheels/{wheel.name}\n")
    requirements.write_text(text)
    venv, nowhere = make_venv(tmp_path / "runner").parent.parent, tmp_path / "no-index"
    nowhere.mkdir()
    assert run_workflow(course, venv, {**OFFLINE_PIP, "PIP_FIND_LINKS": str(nowhere)})[0].endswith(
        "-r requirements.txt"
    )
    check_the_runner_built_the_site_with_its_own_coursegen(course, venv)


def check_the_runner_built_the_site_with_its_own_coursegen(course: Path, venv: Path) -> None:
    python = venv / "bin" / "python"
    where = run([python, "-c", "import coursegen; print(coursegen.__file__)"], cwd=course).stdout.strip()
    assert Path(where).is_relative_to(venv), where  # the wheel, installed into the runner's venv
    run([python, "-m", "pip", "check"], cwd=course)  # every dependency of the wheel is satisfied
    site = course / "site"  # what upload-pages-artifact uploads
    assert {"index.html", "welcome.html", "practice.html", "404.html"} <= {p.name for p in site.iterdir()}
    assert "Tides" in (site / "index.html").read_text()


def pin_pyodide_with_npm(course: Path) -> None:
    """Write the package.json and package-lock.json that `npm install pyodide@314.0.7` writes, taking the
    locked entries (pyodide and what it depends on) from this repository's lock, so `npm ci` can install them
    offline from npm's cache (scripts/test.sh's own `npm ci` filled it)."""
    packages = json.loads((REPO / "package-lock.json").read_text())["packages"]
    locked: dict[str, dict] = {}
    todo = ["pyodide"]
    while todo:
        key = f"node_modules/{todo.pop()}"
        if key not in locked:
            locked[key] = packages[key]
            todo.extend(packages[key].get("dependencies", {}))
    manifest = {"dependencies": {"pyodide": "^" + locked["node_modules/pyodide"]["version"]}}
    (course / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    lock = {"name": "tides", "lockfileVersion": 3, "requires": True, "packages": {"": manifest, **locked}}
    (course / "package-lock.json").write_text(json.dumps(lock, indent=2) + "\n")


def test_a_course_that_self_hosts_pyodide_gets_it_from_its_npm_lock(course, wheel, tmp_path):  # noqa: F811
    """docs/hosting.md: a course with a package-lock.json runs the Node steps, and the build copies that Pyodide."""
    pin_pyodide_with_npm(course)
    config = course / "course.yaml"
    config.write_text(config.read_text() + "pyodide:\n  source: local\n")
    venv = make_venv(tmp_path / "runner").parent.parent
    ran = run_workflow(course, venv, {**OFFLINE_PIP, "PIP_FIND_LINKS": str(wheel.parent), "npm_config_offline": "true"})
    assert ran == [
        "python -m pip install -r requirements.txt",
        "npm ci --omit=dev --no-audit --no-fund",
        "coursegen build --strict",
    ]
    check_the_runner_built_the_site_with_its_own_coursegen(course, venv)
    site = course / "site"
    assert (site / "pyodide" / "pyodide.mjs").read_bytes() == (course / "node_modules/pyodide/pyodide.mjs").read_bytes()
    assert "cdn.jsdelivr.net" not in (site / "welcome.html").read_text()
