"""A build that starts from .coursegen-cache/ gives the site a cold build gives, whatever input was edited.

Every kind of input is edited here, in the ways that fool a file's stamp (a same-size save with its
modification time restored, as `cp -p`, `rsync --inplace -t` and `unzip -o` leave it) and in the self-hosted
Pyodide folder (a wheel removed and put back, the loader edited), and each cached command-line build is
compared byte for byte with a cold build of a copy of the course.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES, REPO, copy_course
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coursegen.cache import CACHE_FOLDER
from coursegen.cli import main

NPM = REPO / "node_modules" / "pyodide"
WHEEL = "affine-2.4.0-py3-none-any.whl"
WHEEL_BYTES = b"not really a wheel, but the bytes the lock file's sha256 names"
EXTENSION = """
from coursegen.stages.roles import register_role


def install(md):
    register_role(md, "answer", lambda token, env, line: "41")
"""
MUTATING = """

def check(course, root, problems):
    for unit in course.units:  # a mistake, but one an author can make: the course is not the extension's
        if unit.page is not None:
            unit.page.meta["title"] = unit.page.meta.get("title", "") + "!"
            unit.page.derived.setdefault("seen", []).append(1)
"""


def make_dist(folder: Path) -> Path:
    """A self-hosted Pyodide of the pinned release: the npm runtime (linked) and one package, `affine`."""
    folder.mkdir()
    for name in ("pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"):
        (folder / name).symlink_to(NPM / name)
    for name in ("pyodide.mjs", "package.json"):
        shutil.copy(NPM / name, folder / name)
    lock = json.loads((NPM / "pyodide-lock.json").read_text())
    entry = dict(lock["packages"]["affine"], sha256=hashlib.sha256(WHEEL_BYTES).hexdigest(), depends=[])
    (folder / "pyodide-lock.json").write_text(json.dumps({"info": lock["info"], "packages": {"affine": entry}}))
    (folder / WHEEL).write_bytes(WHEEL_BYTES)
    return folder


def make_course(folder: Path, mutating: bool = True) -> Path:
    """The live course (a pure-Python widget and package) whose widget needs `affine`, Pyodide self-hosted
    outside the course (linked in, as helpers.link_pyodide does), and an extension with a role (and a
    check that mutates the course it is given, when `mutating`)."""
    course = copy_course(FIXTURES / "live", folder / "course")
    shutil.copytree(FIXTURES / "live" / "tally", course / "tally")
    (course / "pyodide-dist").symlink_to(make_dist(folder / "dist"))
    spec = course / "widgets" / "square" / "spec.yaml"
    spec.write_text(spec.read_text().replace("packages: []", "packages: [affine]"))
    (course / "extensions").mkdir()
    (course / "extensions" / "mutate.py").write_text(EXTENSION + (MUTATING if mutating else ""))
    lesson = course / "lessons" / "01-square.md"
    lesson.write_text(lesson.read_text() + "\nThe answer is {answer}`it`.\n")
    config = course / "course.yaml"
    config.write_text(
        config.read_text().replace("  source: local\n", "  source: local\n  path: pyodide-dist\n")
        + "extensions: [extensions/mutate.py]\nlimits:\n  seconds: 3600\n"  # no time limit is tested here
    )
    return course


def swap(file: Path, one: str, other: str, keep_stamp: bool = False) -> None:
    """Replace `one` by `other` in the file, or back; with `keep_stamp` (the two of the same size), restore its
    size-and-modification-time stamp to the nanosecond afterwards, as `cp -p` would."""
    before = file.stat()
    text = file.read_text()
    file.write_text(text.replace(one, other, 1) if one in text else text.replace(other, one, 1))
    if keep_stamp:
        assert file.stat().st_size == before.st_size
        os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))


def toggle_wheel(course: Path) -> None:
    wheel = course / "pyodide-dist" / WHEEL
    if wheel.exists():
        wheel.unlink()
    else:
        wheel.write_bytes(WHEEL_BYTES)  # put back, as the build's hint says


def replace_in_place(course: Path) -> None:
    """Copy a lesson of the same size over the old one, its modification time restored (`cp -p`)."""
    lesson = course / "lessons" / "01-square.md"
    other = course.parent / "other.md"  # made outside the course: its folder's own stamp stays
    text = lesson.read_text()
    other.write_text(text.replace("x=3", "x=4") if "x=3" in text else text.replace("x=4", "x=3"))
    os.utime(other, ns=(lesson.stat().st_atime_ns, lesson.stat().st_mtime_ns))
    shutil.copy2(other, lesson)  # in place: the same inode
    other.unlink()


EDITS = {
    "edit a lesson": lambda c: swap(c / "lessons" / "01-square.md", "## Square", "## Squares"),
    "replace a lesson in place (cp -p)": replace_in_place,
    "save the package twice in a second": lambda c: swap(c / "tally" / "__init__.py", "squared is", "squared ==", True),
    "save a widget entry twice in a second": lambda c: swap(
        c / "widgets" / "square" / "widget.py", "one number", "one Number", True
    ),
    "edit a widget's template": lambda c: swap(
        c / "widgets" / "square" / "result.html", "aria-live", "data-x aria-live"
    ),
    "edit course.yaml": lambda c: swap(c / "course.yaml", "title: Live course", "title: Live Course"),
    "remove or put back a wheel": toggle_wheel,
    "edit pyodide.mjs": lambda c: swap(c / "pyodide-dist" / "pyodide.mjs", "\n", "\n// edited\n"),
    "edit pyodide.mjs, same size and time": lambda c: swap(
        c / "pyodide-dist" / "pyodide.mjs", "Pyodide", "PYODIDE", True
    ),
    "save the extension twice in a second": lambda c: swap(c / "extensions" / "mutate.py", '"41"', '"42"', True),
}


def site_of(course: Path) -> dict[str, bytes]:
    site = course / "site"
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def command_line_build(course: Path, capsys) -> dict[str, bytes]:
    status = main(["--root", str(course), "build"])
    err = capsys.readouterr().err
    assert status == 0 and "Traceback" not in err, err
    return site_of(course)


def cold_build(course: Path, folder: Path, capsys) -> dict[str, bytes]:
    """Build a copy of the course that has no cache and no site (the Pyodide link kept as a link)."""
    copy = folder / "cold"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(course, copy, symlinks=True, ignore=shutil.ignore_patterns("site", CACHE_FOLDER, "__pycache__"))
    site = command_line_build(copy, capsys)
    return {path: data.replace(str(copy).encode(), str(course).encode()) for path, data in site.items()}


@settings(
    max_examples=8,
    deadline=None,  # a build takes what it takes on a busy machine
    derandomize=True,  # the same edits on every run
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(edits=st.lists(st.sampled_from(sorted(EDITS)), min_size=1, max_size=4))
def test_a_cached_build_equals_a_cold_build_after_any_edits(edits, tmp_path_factory, capsys):
    folder = tmp_path_factory.mktemp("course")
    course = make_course(folder)
    first = command_line_build(course, capsys)
    assert first == cold_build(course, folder, capsys)
    for step, name in enumerate(edits):
        EDITS[name](course)
        assert command_line_build(course, capsys) == cold_build(course, folder, capsys), f"step {step}: {name}"


@pytest.mark.parametrize("name", sorted(EDITS))
def test_after_each_kind_of_edit_a_cached_build_equals_a_cold_build(name, tmp_path, capsys):
    course = make_course(tmp_path, mutating=False)
    command_line_build(course, capsys)
    EDITS[name](course)
    assert command_line_build(course, capsys) == cold_build(course, tmp_path, capsys)
    EDITS[name](course)  # and back
    assert command_line_build(course, capsys) == cold_build(course, tmp_path, capsys)


def test_an_extension_check_that_mutates_the_course_changes_no_later_build(tmp_path, capsys):
    course = make_course(tmp_path, mutating=True)
    command_line_build(course, capsys)
    EDITS["edit a lesson"](course)
    assert command_line_build(course, capsys) == cold_build(course, tmp_path, capsys)


def test_every_edit_changes_the_site(tmp_path, capsys):
    """Each edit above reaches the pages, so the comparison can tell a stale cache from a fresh one."""
    course = make_course(tmp_path)
    for name in sorted(EDITS):
        before = cold_build(course, tmp_path, capsys)
        EDITS[name](course)
        assert cold_build(course, tmp_path, capsys) != before, name
