"""Test helpers: course copies to break, the CLI as a function, a static server."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from coursegen.cli import main as cli_main
from coursegen.serve.server import make_server

# Playwright waits 5 s for an expectation and 30 s for an action by default: at load 8 a page's scripts can
# take longer than that. Browser tests wait up to this instead: only a hang guard, never a measure of speed
# (a wait ends as soon as its condition holds).
WAIT_GUARD_MS = 120_000

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
NPM_PYODIDE = REPO / "node_modules" / "pyodide"  # the pinned npm runtime: no numpy or ml-dtypes wheels
LIVE_DIST = os.environ.get("COURSEGEN_PYODIDE_DIST", "")  # a complete distribution, where one is supplied
COURSE_PARTS = ("course.yaml", "references.bib", "lessons", "reviews", "templates", "widgets", "kernels", "media")


def copy_course(source: Path, dest: Path, templates_from: Path = REPO) -> Path:
    """Copy a course (and the repository's templates, widgets and kernels) into `dest`."""
    dest.mkdir(parents=True)
    for part in COURSE_PARTS:
        origin = source / part if (source / part).exists() else templates_from / part
        if origin.is_dir():
            shutil.copytree(origin, dest / part)
        elif origin.is_file():
            shutil.copy(origin, dest / part)
    for extra in ("package.json", "node_modules"):
        if (REPO / extra).exists() and not (dest / extra).exists():
            (dest / extra).symlink_to(REPO / extra)
    return dest


def make_venv(folder: Path) -> Path:
    """Make a fresh venv in `folder` whose third-party packages are this test run's own, and return its python.

    The venv's site-packages gets a .pth line naming the test venv's site-packages, so pip, setuptools, numpy and
    the rest come from the pinned lock and never from the base interpreter (`--system-site-packages` would see the
    base's, which on a clean machine has none). A path named in a .pth file is not scanned for .pth files itself,
    so the editable coursegen of the test venv stays out: a test installs the coursegen it means to test.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", folder], check=True, env=clean_env())
    python = folder / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        env=clean_env(),
    ).stdout.strip()
    ours = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (Path(site) / "coursegen-test-packages.pth").write_text("".join(f"{path}\n" for path in ours))
    return python


def without_time_limit(course: Path) -> None:
    """Give a course copied from the mini fixture (whose `limits: {seconds: 2}` the tests of the time limit need)
    the largest limit course.yaml accepts, for a test about something else: importing numpy alone can take
    longer than 2 s, or 30, on a loaded machine, and a test's outcome must not depend on the machine's speed."""
    from coursegen.author_code import MAX_SECONDS

    config = course / "course.yaml"
    text = config.read_text()
    assert "seconds: 2\n" in text
    config.write_text(text.replace("seconds: 2\n", f"seconds: {MAX_SECONDS}\n", 1))


def clean_env() -> dict[str, str]:
    """The environment without PYTHONPATH or VIRTUAL_ENV, so nothing of this run leaks into a child's sys.path."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def link_pyodide(course: Path) -> str:
    """Link the complete Pyodide (COURSEGEN_PYODIDE_DIST) or else the npm runtime into the course as pyodide-dist
    (course.yaml may name only folders inside the course); return that folder's name."""
    (course / "pyodide-dist").symlink_to(Path(LIVE_DIST or NPM_PYODIDE).resolve())
    return "pyodide-dist"


def require_complete_pyodide(status: int, err: str, packages: list[str]) -> None:
    """Judge a `--strict` build against link_pyodide's folder. With a complete distribution it must succeed.
    Without one it must stop at exactly the point where the missing wheels of `packages` are named, and the
    test is skipped there: a broken setup fails instead of hiding behind the skip."""
    if LIVE_DIST:
        assert status == 0, err
        return
    assert status == 1, err
    assert "cannot serve what the widgets need for live Python" in err, err
    for package in packages:
        assert f"{package}: " in err and "is not in the distribution" in err, (package, err)
    pytest.skip(
        f"the npm Pyodide lacks {', '.join(packages)} (the build names them); set COURSEGEN_PYODIDE_DIST to a "
        "complete Pyodide distribution to run the live part"
    )


def read_yaml(text: str):
    """Return a YAML document as plain data (ruamel.yaml's safe loader, YAML 1.2: `on` is a key, not true)."""
    return YAML(typ="safe", pure=True).load(text)


def run_cli(capsys, *args) -> tuple[int, str, str]:
    """Run the CLI in-process; return (exit status, stdout, stderr)."""
    try:
        status = cli_main([str(a) for a in args])
    except SystemExit as exit_:
        status = exit_.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def build_fixture_site(fixture: str, package: str, folder: Path) -> Path:
    """Build a copy of tests/fixtures/`fixture` (with its own package folder `package`) in `folder` with
    `--strict`, for a module's browser tests; return its site folder."""

    class NoCapture:  # a module-scoped fixture has no capsys: the build's output goes to the test's log
        def readouterr(self):
            return type("Captured", (), {"out": "", "err": ""})()

    course = copy_course(FIXTURES / fixture, folder / "course")
    shutil.copytree(FIXTURES / fixture / package, course / package)
    status, _, err = run_cli(NoCapture(), "--root", course, "build", "--strict")
    assert status == 0, err
    return course / "site"


@contextlib.contextmanager
def serving(folder: Path):
    """Serve `folder` on a free 127.0.0.1 port; yield its base URL."""
    server = make_server(folder, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def check_golden(actual: str, golden_dir: Path, name: str, shown: str, update: bool) -> None:
    """Fail unless `actual` equals golden_dir/<name>.html; on a mismatch write <name>-changed.html beside it."""
    import pytest

    expected_file, changed_file = golden_dir / f"{name}.html", golden_dir / f"{name}-changed.html"
    if update:
        golden_dir.mkdir(exist_ok=True)
        expected_file.write_text(actual)
        changed_file.unlink(missing_ok=True)
    expected = expected_file.read_text() if expected_file.exists() else ""
    if actual != expected:
        changed_file.write_text(actual)
        pytest.fail(
            f"{shown} differs from {expected_file.name}; review {changed_file.name} and accept with --update-golden"
        )
    changed_file.unlink(missing_ok=True)


# Texts whose words are easy to cut differently: the build (Python) and search-index.js must agree.
TRICKY_TEXTS = [
    "K3's g_min: 2×Tile—ÉTÉ",
    "naïve café über straße",
    "a–b c—d e/f g.h i,j",
    "ΣΥΝΟΛΟ σύνολο Ωμέγα",
    "数字 123 ٣٤٥ ⅷ ½",
    "x\u0301y",  # a combining mark splits a word, here and in the browser
    "tab\tnew\nline\u00a0nbsp",
]


def run_workflow_step(command: str, cwd: Path, env: dict[str, str]):
    """Run a GitHub Actions `run:` step as the runner's default shell does (bash, -e, -o pipefail)."""
    import subprocess

    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
