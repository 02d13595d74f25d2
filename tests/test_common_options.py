"""The common options (README: --root, --drafts, --strict, --offline, --jobs) go before the command or after it."""

from __future__ import annotations

import pytest
from helpers import run_cli

from coursegen.cli import make_parser

SAME = [
    (["--root", "course", "build"], ["build", "--root", "course"]),
    (["--root", "course", "--strict", "check"], ["check", "--strict", "--root", "course"]),
    (["--drafts", "--offline", "--jobs", "2", "serve"], ["serve", "--jobs", "2", "--offline", "--drafts"]),
    (["--strict", "--jobs", "3", "check", "--root", "c"], ["--root", "c", "check", "--jobs", "3", "--strict"]),
    (["--root", "c", "new", "lesson", "T"], ["new", "lesson", "T", "--root", "c"]),
    (["--root", "c", "init", "d"], ["init", "d", "--root", "c"]),
]


@pytest.mark.parametrize(("before", "after"), SAME, ids=[" ".join(case[1]) for case in SAME])
def test_a_common_option_means_the_same_before_and_after_the_command(before, after):
    assert vars(make_parser().parse_args(before)) == vars(make_parser().parse_args(after))


def test_an_option_after_the_command_does_not_undo_one_given_before():
    args = make_parser().parse_args(["--root", "course", "--strict", "build", "--drafts"])
    assert (str(args.root), args.strict, args.drafts, args.offline, args.jobs) == ("course", True, True, False, None)


@pytest.mark.parametrize("where", ["before", "after"])
def test_build_root_builds_that_course_from_anywhere(where, mini_course, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["--root", mini_course, "build"] if where == "before" else ["build", "--root", mini_course]
    status, out, err = run_cli(capsys, *args)
    assert status == 0, err
    assert out.startswith("built ") and (mini_course / "site" / "index.html").is_file()


def test_new_takes_root_after_the_command(mini_course, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli(capsys, "new", "lesson", "Third steps", "--root", mini_course)
    assert status == 0, err
    assert out.startswith("created lessons/05-third-steps.md") and (mini_course / "lessons/05-third-steps.md").is_file()


def test_a_build_option_before_a_command_that_does_not_build_is_refused(capsys):
    status, _, err = run_cli(capsys, "--strict", "new", "lesson", "Title")
    assert status == 2 and err.rstrip().endswith("error: --strict applies to build, check and serve, not to new")
