"""A new author's walk: the wheel of this repository, installed (not editable) into a fresh virtual
environment, used from an empty folder outside the repository to start, override and build a course.

Slow (a wheel build and a venv, about half a minute), but part of the normal suite.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import REPO, clean_env, make_venv

pytestmark = pytest.mark.slow
SOURCES = ("pyproject.toml", "README.md", "coursegen", "templates")


def run(args, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    """Run a command with no PYTHONPATH, so nothing of this repository leaks into the venv."""
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=600)
    if check:
        assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from a copy of the engine's sources (the worktree stays clean)."""
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        copy = shutil.copytree if (REPO / name).is_dir() else shutil.copy
        copy(
            REPO / name,
            source / name,
            **({"ignore": shutil.ignore_patterns("__pycache__")} if (REPO / name).is_dir() else {}),
        )
    out = tmp_path_factory.mktemp("wheel")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", out, source], cwd=out)
    return next(out.glob("coursegen-*.whl"))


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheel) -> Path:
    """A fresh venv (the test run's packages visible for the dependencies) with the wheel installed."""
    folder = tmp_path_factory.mktemp("venv")
    make_venv(folder)
    run(
        [folder / "bin" / "python", "-m", "pip", "install", "--no-deps", "--no-index", "--force-reinstall", wheel],
        cwd=folder,
    )
    return folder


@pytest.fixture
def coursegen(venv, tmp_path):
    """Run the venv's `coursegen` in a new empty folder outside the repository."""
    folder = tmp_path / "my-course"
    folder.mkdir()

    def command(*args, check: bool = True):
        return run([venv / "bin" / "coursegen", *args], cwd=folder, check=check)

    command.folder = folder
    return command


def test_the_wheel_holds_the_engine_and_its_theme_and_no_course(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("kernels/")]
    assert not [n for n in names if n.split("/")[0] not in ("coursegen",) and ".dist-info/" not in n]
    theme = {n.removeprefix("coursegen/default_theme/") for n in names if n.startswith("coursegen/default_theme/")}
    expected = {
        p.relative_to(REPO / "templates").as_posix()
        for p in (REPO / "templates").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert theme == expected  # every file of templates/, and nothing else
    assert {
        "base.html",
        "partials/header.html",
        "partials/footer.html",
        "assets/sw.js",
        "assets/pyodide-worker.js",
        "assets/search.js",
        "assets/vendor/ts-fsrs.js",
    } <= theme
    assert "coursegen/authoring/skeletons/course/widgets/growth-steps/widget.py" in names
    # Temml and its licence: the build converts math with them, with no Node on the machine
    assert {"coursegen/features/math/vendor/temml.min.js", "coursegen/features/math/vendor/temml.LICENSE.txt"} <= set(
        names
    )
    engine = {
        p.relative_to(REPO).as_posix() for p in (REPO / "coursegen").rglob("*.py") if "__pycache__" not in p.parts
    }
    assert engine <= set(names)  # every sub-package ships (pyproject lists them one by one)


def test_the_installed_command_comes_from_the_venv(venv, coursegen):
    where = run([venv / "bin" / "python", "-c", "import coursegen; print(coursegen.__file__)"], cwd=coursegen.folder)
    assert Path(where.stdout.strip()).is_relative_to(venv)
    assert coursegen("--version").stdout.strip().startswith("coursegen ")


def test_init_build_and_check_strict_in_an_empty_folder(coursegen):
    assert "created a course in ." in coursegen("init", "--title", "Knots and hitches").stdout
    assert coursegen("check", "--strict").stderr == ""
    coursegen("build", "--strict")
    site = coursegen.folder / "site"
    assert {"index.html", "welcome.html", "practice.html", "404.html", "sw.js"} <= {p.name for p in site.iterdir()}
    assert "Knots and hitches" in (site / "index.html").read_text()
    again = coursegen("init", check=False)
    assert again.returncode == 1 and "a course already exists here" in again.stderr and "Traceback" not in again.stderr


def test_the_installed_wheel_typesets_math_with_its_own_temml(coursegen):
    """No Node, no repository: the vendored Temml inside the wheel converts the formulas."""
    coursegen("init", "--title", "Slopes")
    lesson = coursegen.folder / "lessons" / "01-welcome.md"
    lesson.write_text(
        lesson.read_text() + "\n$$f'(x) = \\lim_{h\\to 0} \\frac{f(x+h)-f(x)}{h}$$ (slope)\n\nSee {eq}`slope`.\n"
    )
    coursegen("build", "--strict")
    page = (coursegen.folder / "site" / "welcome.html").read_text()
    assert "<mrow><mi>f</mi><mo" in page and '<a class="eqref" href="#eq-slope">(1.1)</a>' in page


def test_one_partial_and_one_asset_of_the_course_override_the_installed_theme(coursegen):
    coursegen("init")
    own = coursegen.folder / "templates"
    (own / "partials").mkdir(parents=True)
    (own / "partials" / "footer.html").write_text('<footer class="site-footer"><p>Made by the knot club</p></footer>\n')
    (own / "assets").mkdir()
    (own / "assets" / "favicon.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"><title>knot</title></svg>\n')
    coursegen("build", "--strict")
    site = coursegen.folder / "site"
    page = (site / "welcome.html").read_text()
    assert "Made by the knot club" in page and "data-search-open" in page  # own footer, the theme's header
    icon = next((site / "assets").glob("favicon.*.svg"))
    assert "<title>knot</title>" in icon.read_text() and f'href="assets/{icon.name}"' in page


def test_an_accent_in_course_yaml_reaches_both_schemes(coursegen):
    coursegen("init")
    with (coursegen.folder / "course.yaml").open("a") as config:
        config.write('theme:\n  accent: "#0a7d5a"\n')
    coursegen("build", "--strict")
    site = coursegen.folder / "site"
    sheet = next((site / "assets").glob("theme.*.css"))
    css = sheet.read_text()
    assert ":root { --accent: #0a7d5a; }" in css
    assert ":root[data-theme=dark] { --accent: color-mix(in srgb, #0a7d5a 55%, white); }" in css
    assert f'<link rel="stylesheet" href="assets/{sheet.name}">' in (site / "welcome.html").read_text()


def test_an_editable_install_uses_the_source_templates_folder_as_its_theme(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name in SOURCES:
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy)(REPO / name, source / name)
    venv = tmp_path / "venv"
    make_venv(venv)  # setuptools (for the editable build) comes from the test run's pinned packages
    run(
        [
            venv / "bin" / "python",
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-e",
            source,
        ],
        cwd=tmp_path,
    )
    course = tmp_path / "course"
    course.mkdir()
    where = run(
        [venv / "bin" / "python", "-c", "from coursegen.theme import files; print(files.packaged_theme())"], cwd=course
    )
    assert Path(where.stdout.strip()) == source / "templates"
    run([venv / "bin" / "coursegen", "init"], cwd=course)
    run([venv / "bin" / "coursegen", "check", "--strict"], cwd=course)
