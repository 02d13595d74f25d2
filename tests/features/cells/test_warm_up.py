"""The next command's warm-up: its author-code worker imports what the last build's code cells imported, first thing.

The modules here live in a folder of the test's own, put on sys.path: the worker is a fork of the test
process (the command line runs in it), so it finds them as it finds numpy.
"""

from __future__ import annotations

import builtins
import os
import re
import shutil
import subprocess
import sys

import pytest
from helpers import REPO, clean_env, run_cli

from coursegen import disk_cache
from coursegen.author_code import AuthorCode, Limits
from coursegen.cache import CACHE_FOLDER

ROOMY = Limits(seconds=600)


@pytest.fixture
def mini_course(mini_course):
    """The mini course with a time limit no loaded machine reaches by importing the package (its own is 2 s)."""
    yaml = mini_course / "course.yaml"
    yaml.write_text(yaml.read_text().replace("seconds: 2", "seconds: 120"))
    return mini_course


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A folder on sys.path outside the course, for modules that stand for installed ones (numpy, matplotlib)."""
    folder = tmp_path / "installed"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


@pytest.fixture
def warm_ups(monkeypatch) -> list[tuple]:
    """The (names, worker pid) of every warm-up a command starts from now on."""
    found: list[tuple] = []
    original = AuthorCode.pre_import

    def recording(self, limits, root, function, args):
        original(self, limits, root, function, args)
        found.append((args[2], self.worker_pid()))

    monkeypatch.setattr(AuthorCode, "pre_import", recording)
    return found


def put(course, code: str) -> None:
    lesson = course / "lessons" / "02-second.md"
    text = re.sub(r"```\{code-cell\} python\n.*?\n```\n", "", lesson.read_text(), flags=re.S)
    lesson.write_text(text.replace("Text.", f"Text.\n\n```{{code-cell}} python\n{code}\n```\n", 1))


def build(capsys, course) -> str:
    status, _, err = run_cli(capsys, "--root", course, "build")
    assert status == 0 and "Traceback" not in err, err
    return (course / "site" / "second.html").read_text()


def cold(capsys, course, tmp_path) -> str:
    """Return second.html of a copy of `course` built with no cache (paths as in `course`)."""
    copy = tmp_path / "cold"
    shutil.copytree(course, copy, ignore=shutil.ignore_patterns("site", CACHE_FOLDER))
    return build(capsys, copy).replace(str(copy), str(course))


def test_a_rebuild_s_worker_imports_the_last_build_s_modules_first_and_runs_the_cells_with_them(
    mini_course, installed, warm_ups, capsys, tmp_path
):
    (installed / "first_module.py").write_text("import os\nIMPORTED_BY = os.getpid()\n")
    (installed / "second_module.py").write_text("VALUE = 2\n")
    put(mini_course, "import first_module, second_module\nimport os\nprint(first_module.IMPORTED_BY == os.getpid())")
    build(capsys, mini_course)
    assert warm_ups == []  # no cache yet: nothing to warm up
    put(mini_course, "import first_module, second_module\nimport os\nprint(first_module.IMPORTED_BY == os.getpid())\n1")
    html = build(capsys, mini_course)
    assert [names for names, _ in warm_ups] == [("first_module", "second_module", "os")]
    assert '<pre class="cell-stdout" tabindex="0">True\n</pre>' in html  # imported in the worker that ran the cell
    assert html == cold(capsys, mini_course, tmp_path)


def test_the_next_warm_up_names_what_the_cells_import_now(mini_course, installed, warm_ups, capsys):
    (installed / "dropped_module.py").write_text("VALUE = 1\n")
    put(mini_course, "import dropped_module\ndropped_module.VALUE")
    build(capsys, mini_course)
    put(mini_course, "6 * 7")
    build(capsys, mini_course)  # warmed up with dropped_module, which no cell imports any more
    put(mini_course, "6 * 8")
    build(capsys, mini_course)
    assert [names for names, _ in warm_ups] == [("dropped_module",)]


def test_a_warm_up_naming_a_module_that_is_gone_changes_nothing(mini_course, installed, warm_ups, capsys, tmp_path):
    (installed / "gone_module.py").write_text("VALUE = 1\n")
    put(mini_course, "import gone_module\ngone_module.VALUE")
    build(capsys, mini_course)
    (installed / "gone_module.py").unlink()
    put(mini_course, "6 * 7")
    html = build(capsys, mini_course)
    assert [names for names, _ in warm_ups] == [("gone_module",)]
    assert '<pre class="cell-text" tabindex="0">42</pre>' in html
    assert html == cold(capsys, mini_course, tmp_path)


def test_a_warm_up_that_ends_the_worker_leaves_the_cells_a_fresh_one(
    mini_course, installed, warm_ups, capsys, tmp_path
):
    (installed / "deadly_module.py").write_text("VALUE = 1\n")
    put(mini_course, "import deadly_module\ndeadly_module.VALUE")
    build(capsys, mini_course)
    (installed / "deadly_module.py").write_text("import os\nos._exit(3)\n")  # now its import ends the worker
    put(mini_course, "import os\nprint(os.getpid() > 0)")
    html = build(capsys, mini_course)
    assert [names for names, _ in warm_ups] == [("deadly_module",)]
    assert '<pre class="cell-stdout" tabindex="0">True\n</pre>' in html
    assert html == cold(capsys, mini_course, tmp_path)


def test_a_warm_up_file_not_signed_by_this_user_is_never_used(mini_course, installed, warm_ups, capsys):
    (installed / "planted_module.py").write_text("VALUE = 1\n")
    put(mini_course, "import planted_module\nplanted_module.VALUE")
    build(capsys, mini_course)
    put(mini_course, "import planted_module\nplanted_module.VALUE + 1")
    build(capsys, mini_course)
    assert [names for names, _ in warm_ups] == [("planted_module",)]  # signed by this user: used
    file = mini_course / CACHE_FOLDER / disk_cache.WARM_UP_FILE
    file.write_bytes(file.read_bytes().replace(b"planted_module", b"antigravity\0\0\0"))
    put(mini_course, "6 * 7")
    build(capsys, mini_course)
    assert [names for names, _ in warm_ups] == [("planted_module",)]


def test_a_pre_import_that_takes_longer_than_a_call_may_is_waited_for_under_the_import_limit(tmp_path):
    runtime = AuthorCode()
    try:
        runtime.pre_import(Limits(seconds=0.5, import_seconds=600), tmp_path, exec, ("import time; time.sleep(3)",))
        assert runtime.call(Limits(seconds=0.5, import_seconds=600), tmp_path, builtins.eval, "6 * 7") == 42
    finally:
        runtime.close()


def test_a_pre_import_that_ends_the_worker_is_forgotten_with_it(tmp_path):
    runtime = AuthorCode()
    try:
        runtime.pre_import(ROOMY, tmp_path, os._exit, (3,))
        assert runtime.call(ROOMY, tmp_path, builtins.eval, "6 * 7") == 42
    finally:
        runtime.close()


def test_a_command_warms_up_the_modules_of_the_pages_changed_since_and_all_after_course_yaml_changed(
    mini_course, installed, warm_ups, capsys
):
    for name in ("first_module", "second_module"):
        (installed / f"{name}.py").write_text("VALUE = 1\n")
    put(mini_course, "import second_module\nsecond_module.VALUE")
    build(capsys, mini_course)
    first = mini_course / "lessons" / "01-first.md"
    first.write_text(first.read_text() + "\nMore prose.\n")
    build(capsys, mini_course)
    assert warm_ups == []  # a page without cells changed: no worker started for it
    first.write_text(first.read_text() + "\n```{code-cell} python\nimport first_module\nfirst_module.VALUE\n```\n")
    build(capsys, mini_course)
    first.write_text(first.read_text() + "\nEven more prose.\n")
    build(capsys, mini_course)
    assert [names for names, _ in warm_ups] == [("first_module",)]  # its cells run again: lesson 2's do not
    yaml = mini_course / "course.yaml"
    yaml.write_text(yaml.read_text().replace("title: Mini course", "title: Mini course, again"))
    build(capsys, mini_course)
    assert [names for names, _ in warm_ups][1:] == [("first_module", "second_module")]


STARTED_BEFORE_THE_BUILD = """
import sys
from coursegen import cli
from coursegen.author_code import AuthorCode

original = AuthorCode.pre_import

def recording(self, limits, root, function, args):
    print("warm-up of", args[2], "with the build imported:", "coursegen.pipeline" in sys.modules)
    original(self, limits, root, function, args)

AuthorCode.pre_import = recording
sys.exit(cli.main(["--root", sys.argv[1], "build"]))
"""


def test_the_worker_starts_importing_before_the_command_imports_the_build(mini_course, installed, capsys):
    (installed / "early_module.py").write_text("VALUE = 1\n")
    put(mini_course, "import early_module\nearly_module.VALUE")
    build(capsys, mini_course)
    put(mini_course, "import early_module\nearly_module.VALUE + 1")
    env = {**clean_env(), "PYTHONPATH": os.pathsep.join([str(REPO), str(installed)])}
    found = subprocess.run(
        [sys.executable, "-c", STARTED_BEFORE_THE_BUILD, str(mini_course)], env=env, capture_output=True, text=True
    )
    assert found.returncode == 0, found.stderr
    assert "warm-up of ('early_module',) with the build imported: False" in found.stdout
