"""The course's own Python always runs as its current text says, never from a .pyc made from an older text.

Python trusts a `__pycache__/*.pyc` whose recorded modification time (whole seconds) and size match the
source's. `ANSWER = 41` saved as `ANSWER = 42` within one second (or copied with `cp -p`) keeps both, so
each test here saves such an edit with bytecode writing on and checks the number the build computes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import clean_env, without_time_limit

from coursegen.pipeline import BuildOptions, build_site
from coursegen.session import Session

ONE = BuildOptions(jobs=1)
NUMBER = '<span class="calc" data-calc="consts.ANSWER">{}</span>'


@pytest.fixture(autouse=True)
def bytecode_written(monkeypatch):
    """Python's default: imports write __pycache__ (in this process, its forked workers and child processes)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)


@pytest.fixture
def course(mini_course) -> Path:
    """The mini course with a package of one constant, which its second lesson computes with."""
    shutil.rmtree(mini_course / "kernels")
    (mini_course / "kernels").mkdir()
    (mini_course / "kernels" / "__init__.py").write_text("")
    (mini_course / "kernels" / "consts.py").write_text("ANSWER = 41\n")
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", "The answer is {calc}`consts.ANSWER | d`.", 1))
    without_time_limit(mini_course)  # the time limit is not what these tests are about
    return mini_course


def save_in_the_same_second(file: Path, text: str, same_time: bool) -> None:
    """Write `text` over the file (of the same size), its modification time then set back to the old one
    (`same_time`: to the nanosecond, as `cp -p` does) or to another moment of the same second."""
    before = file.stat()
    assert len(text.encode()) == before.st_size
    file.write_text(text)
    second, part = divmod(before.st_mtime_ns, 10**9)
    mtime = before.st_mtime_ns if same_time else second * 10**9 + (part + 500_000_000) % 10**9
    os.utime(file, ns=(before.st_atime_ns, mtime))
    assert int(file.stat().st_mtime) == int(before.st_mtime) and file.stat().st_size == before.st_size


def plain_import(course: Path, code: str) -> None:
    """Run `code` in a plain Python in the course folder, as an author might: it leaves __pycache__ behind."""
    subprocess.run([sys.executable, "-c", code], cwd=course, env=clean_env(), check=True, timeout=600)


def page(course: Path, result) -> str:
    return result.outputs["second.html"].decode()


@pytest.mark.parametrize("same_time", [True, False], ids=["mtime restored", "same second"])
def test_a_kernel_saved_twice_within_a_second_gives_the_new_number_in_a_long_lived_session(course, same_time):
    session = Session()
    try:
        assert NUMBER.format(41) in page(course, build_site(course, ONE, session))
        session.trust_watcher()  # serve's way: the watcher names what changed
        save_in_the_same_second(course / "kernels" / "consts.py", "ANSWER = 42\n", same_time)
        session.note_changes(course, ["kernels/consts.py"])
        assert NUMBER.format(42) in page(course, build_site(course, ONE, session))
    finally:
        session.close()


@pytest.mark.parametrize("same_time", [True, False], ids=["mtime restored", "same second"])
def test_a_kernel_saved_twice_within_a_second_gives_the_new_number_in_a_build_after_a_build(course, same_time):
    assert NUMBER.format(41) in page(course, build_site(course, ONE))
    save_in_the_same_second(course / "kernels" / "consts.py", "ANSWER = 42\n", same_time)
    assert NUMBER.format(42) in page(course, build_site(course, ONE))


def test_a_stale_pyc_left_by_a_plain_import_is_not_trusted(course):
    plain_import(course, "import kernels.consts")
    assert list((course / "kernels" / "__pycache__").glob("consts.*.pyc"))  # what a later build must not trust
    save_in_the_same_second(course / "kernels" / "consts.py", "ANSWER = 42\n", same_time=False)
    assert NUMBER.format(42) in page(course, build_site(course, ONE))


def test_the_worker_writes_no_bytecode_into_the_course(course):
    build_site(course, ONE)
    assert not (course / "kernels" / "__pycache__").exists()


def add_extension(course: Path, entry: str, file: Path, helper: bool) -> None:
    """An extension whose `check` warns with the number its module (and the course module it imports) hold."""
    file.parent.mkdir(exist_ok=True)
    (course / "answer_helper.py").write_text("EXTRA = 1\n")
    file.write_text(
        ("from answer_helper import EXTRA\n" if helper else "EXTRA = 1\n")
        + "\nANSWER = 41\n\n\ndef check(course, root, problems):\n"
        "    problems.warning('course.yaml', 1, f'the answer is {ANSWER + EXTRA - 1}')\n"
    )
    config = course / "course.yaml"
    config.write_text(config.read_text().replace("limits:", f"extensions: [{entry}]\nlimits:", 1))


def warnings(result) -> list[str]:
    return [w.message for w in result.warnings if w.message.startswith("the answer")]


@pytest.mark.parametrize("kind", ["file", "module"])
def test_an_extension_and_what_it_imports_are_loaded_from_their_text_not_a_stale_pyc(course, kind, monkeypatch):
    # A module name unique to this test: the build process imports it once (a second build of this
    # process would find it in sys.modules; serve forgets course modules when they change).
    name = f"answer_ext_{kind}_{os.getpid()}"
    module = kind == "module"  # listed by module name, found in the course folder; it imports a course module
    file = course / f"{name}.py" if module else course / "extensions" / f"{name}.py"
    add_extension(course, name if module else f"extensions/{name}.py", file, helper=module)
    plain_import(course, f"import sys; sys.path[:0] = [{str(file.parent)!r}, '.']; import {name}")
    assert list(file.parent.glob(f"__pycache__/{name}.*.pyc"))  # what the build must not trust
    save_in_the_same_second(file, file.read_text().replace("41", "42"), same_time=False)
    expected = 42
    if module:
        assert list(course.glob("__pycache__/answer_helper.*.pyc"))
        save_in_the_same_second(course / "answer_helper.py", "EXTRA = 2\n", same_time=False)
        expected = 43
    for loaded in ("answer_helper", name):
        monkeypatch.delitem(sys.modules, loaded, raising=False)
    try:
        assert warnings(build_site(course, ONE)) == [f"the answer is {expected}"]
    finally:
        for loaded in ("answer_helper", name):
            sys.modules.pop(loaded, None)
