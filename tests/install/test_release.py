"""Release-ready: pypa's build makes an sdist and a wheel of this repository that `twine check --strict`
passes, the version is set in one place, CHANGELOG.md has its entry, and .github/workflows/release.yml
builds, checks and publishes by trusted publishing, refusing a tag that names another version.

Slow (two builds of the package, about twenty seconds), but part of the normal suite.
"""

from __future__ import annotations

import email
import os
import re
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from helpers import REPO, clean_env, read_yaml, run_workflow_step
from test_wheel import SOURCES, run

from coursegen import __version__

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent  # the test venv's commands: pyproject-build, twine
RELEASE = REPO / ".github" / "workflows" / "release.yml"


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """sdist and wheel, built by `pyproject-build` (the wheel from the sdist) from a copy of the sources."""
    source = tmp_path_factory.mktemp("source")
    for name in (*SOURCES, "build.py"):  # build.py too: `python -m build` there would run it, not pypa's build
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(REPO / name, source / name)
    out = tmp_path_factory.mktemp("dist")
    built = run([BIN / "pyproject-build", "--no-isolation", "--outdir", out, source], cwd=source)
    (out.parent / f"{out.name}.log").write_text(built.stdout + built.stderr)  # beside dist/, which holds only the two
    return out


def test_building_says_nothing_of_packages_it_would_ignore(dist):
    """Every folder of data files (the theme's, the starter course's) is declared, so setuptools ships
    it without a "Package would be ignored" warning per folder."""
    log = (dist.parent / f"{dist.name}.log").read_text()
    assert "would be ignored" not in log and "is absent from the `packages` configuration" not in log, log


def test_pyproject_build_makes_an_sdist_and_a_wheel_that_twine_check_passes(dist):
    names = sorted(p.name for p in dist.iterdir())
    assert names == [f"coursegen-{__version__}-py3-none-any.whl", f"coursegen-{__version__}.tar.gz"]
    checked = run([BIN / "twine", "check", "--strict", *sorted(dist.iterdir())], cwd=dist)
    assert checked.stdout.count("PASSED") == 2, checked.stdout


def test_the_wheel_made_from_the_sdist_holds_the_theme_and_the_starter_course(dist):
    wheel = zipfile.ZipFile(dist / f"coursegen-{__version__}-py3-none-any.whl")
    names = set(wheel.namelist())
    assert {
        "coursegen/default_theme/base.html",
        "coursegen/default_theme/assets/pyodide-worker.js",
        "coursegen/authoring/skeletons/course/requirements.txt",
        "coursegen/authoring/skeletons/course/pages.yml",
        "coursegen/serve/livereload.js",
    } <= names
    with tarfile.open(dist / f"coursegen-{__version__}.tar.gz") as sdist:
        assert f"coursegen-{__version__}/templates/base.html" in sdist.getnames()


def test_ml_dtypes_is_required_only_by_the_bfloat16_extra(dist):
    wheel = zipfile.ZipFile(dist / f"coursegen-{__version__}-py3-none-any.whl")
    metadata = email.message_from_bytes(wheel.read(f"coursegen-{__version__}.dist-info/METADATA"))
    requires = metadata.get_all("Requires-Dist")
    assert [r for r in requires if r.startswith("ml_dtypes")] == [
        'ml_dtypes>=0.4; extra == "bfloat16"',
        'ml_dtypes>=0.4; extra == "test"',
    ]
    assert "bfloat16" in metadata.get_all("Provides-Extra")
    assert metadata["Version"] == __version__ and metadata["Description-Content-Type"] == "text/markdown"


def test_the_version_is_set_in_one_place():
    assert 'dynamic = ["version"]' in (REPO / "pyproject.toml").read_text()
    assert 'version = {attr = "coursegen.__version__"}' in (REPO / "pyproject.toml").read_text()
    setting = re.compile(r"^__version__ = ", re.M)
    assert [
        p.relative_to(REPO).as_posix() for p in (REPO / "coursegen").rglob("*.py") if setting.search(p.read_text())
    ] == ["coursegen/__init__.py"]


def test_the_changelog_has_an_entry_for_this_version():
    heading = re.compile(rf"^## \[{re.escape(__version__)}\] - (\d{{4}}-\d{{2}}-\d{{2}}|Unreleased)$", re.M)
    assert heading.search((REPO / "CHANGELOG.md").read_text())


def test_the_release_workflow_builds_checks_and_publishes_by_trusted_publishing():
    flow = read_yaml(RELEASE.read_text())
    assert flow["on"] == {"push": {"tags": ["v*"]}} and flow["permissions"] == {"contents": "read"}
    build, publish = flow["jobs"]["build"], flow["jobs"]["publish"]
    runs = [step["run"] for step in build["steps"] if "run" in step]
    assert "pyproject-build --no-isolation" in runs and "twine check --strict dist/*" in runs
    assert not any("python -m build" in command for command in runs)  # would run this repository's build.py
    assert runs.index("pyproject-build --no-isolation") < runs.index("twine check --strict dist/*")
    assert publish["needs"] == "build" and publish["environment"]["name"] == "pypi"
    assert publish["permissions"] == {"id-token": "write"}  # trusted publishing: no token, no password
    action = publish["steps"][-1]
    assert action["uses"].startswith("pypa/gh-action-pypi-publish@v") and "with" not in action
    for step in build["steps"] + publish["steps"]:
        if "uses" in step:
            assert re.fullmatch(r"[\w-]+/[\w-]+@v\d+\.\d+\.\d+", step["uses"]), step["uses"]


@pytest.mark.parametrize(
    "tag, entry, passes",
    [
        (f"v{__version__}", f"## [{__version__}] - 2026-12-01", True),
        ("v9.9.9", f"## [{__version__}] - 2026-12-01", False),
        (f"v{__version__}", f"## [{__version__}] - Unreleased", False),
    ],
)
def test_the_release_refuses_a_tag_of_another_version_or_an_undated_entry(tmp_path, tag, entry, passes):
    step = next(s for s in read_yaml(RELEASE.read_text())["jobs"]["build"]["steps"] if "CHANGELOG" in s.get("name", ""))
    shutil.copytree(REPO / "coursegen", tmp_path / "coursegen", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "CHANGELOG.md").write_text(f"# Changelog\n\n{entry}\n\n- Something.\n")
    env = clean_env()
    env.update(GITHUB_REF_NAME=tag, PATH=f"{BIN}{os.pathsep}{env['PATH']}")
    done = run_workflow_step(step["run"], tmp_path, env)
    assert (done.returncode == 0) == passes, done.stdout + done.stderr
