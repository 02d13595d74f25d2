"""Every catalogued bad input: its message and line, exit status 1, no traceback, site/ untouched, bounded time."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest
from helpers import FIXTURES, read_yaml, run_cli, without_time_limit

from coursegen.cli import main as cli_main

CASES = read_yaml((FIXTURES / "bad" / "cases.yaml").read_text())
HANG_GUARD = 600  # seconds: only stops a hang; a bad input's build takes a few seconds, or many more at load 8


def about_the_time_limit(case: dict) -> bool:
    """Return True when a case is about course.yaml's `limits: {seconds: 2}` (it expects a stop at 2 s, or edits the
    limit itself). Every other case gets the largest limit: a widget's first call imports what widget.py imports,
    and on a busy machine that alone can take more than 2 s, which would fail a case about something else."""
    edits = [case, *case.get("also", [])]
    return "within 2 s" in case["expect"] or any(
        "seconds:" in old for edit in edits for old, _ in edit.get("replace", [])
    )


def apply_case(root: Path, case: dict) -> None:
    """Make the edit a case describes inside a course copy (its `also` edits first)."""
    for edit in case.get("also", []):
        apply_case(root, edit)
    target = root / case["file"]
    if case.get("delete"):
        target.unlink()
        return
    if "make" in case:
        make_entry(target, case["make"], case.get("target", ""))
        return
    text = case.get("text")
    if text is None:
        text = target.read_text()
        for old, new in case.get("replace", []):
            assert old in text, f"case {case['name']!r}: {old!r} not found in {case['file']}"
            text = text.replace(old, new)
    target.write_bytes(text.encode(case.get("encoding", "utf-8")))


def make_entry(target: Path, kind: str, link_to: str) -> None:
    """Put a symbolic link (to `link_to`, taken as written), a FIFO, a folder or an empty file where `target` is."""
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if kind == "symlink":
        target.symlink_to(link_to)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "dir":
        target.mkdir()
    elif kind == "file":
        target.write_text("")
    else:
        raise AssertionError(f"unknown make: {kind!r}")


def run_bounded(capsys, *args) -> tuple[int, str, str]:
    """Run the CLI like run_cli, but in a thread given HANG_GUARD seconds: a hang fails the test."""
    outcome = {}

    def run():
        try:
            outcome["status"] = cli_main([str(a) for a in args])
        except SystemExit as exit_:
            outcome["status"] = exit_.code
        except BaseException as err:  # noqa: BLE001 - reported below with the test's failure
            outcome["error"] = err

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(HANG_GUARD)
    assert not worker.is_alive(), f"the build did not finish within {HANG_GUARD} s"
    if "error" in outcome:
        raise outcome["error"]
    captured = capsys.readouterr()
    return outcome["status"], captured.out, captured.err


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bad_input_is_reported_at_its_line_and_leaves_site_untouched(case, mini_course, capsys, monkeypatch):
    if not about_the_time_limit(case):
        without_time_limit(mini_course)
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    before = {p: p.read_bytes() for p in (mini_course / "site").rglob("*") if p.is_file()}
    apply_case(mini_course, case)
    for name, value in case.get("env", {}).items():
        monkeypatch.setenv(name, value)
    status, _out, err = run_bounded(capsys, "--root", mini_course, "build")
    assert status == 1
    assert "Traceback" not in err
    lines = err.splitlines()
    assert any(line.startswith(case["expect"]) for line in lines), err
    if "hint" in case:
        assert any(case["hint"] in line for line in lines if line.strip().startswith("hint:")), err
    if "problems" in case:  # no follow-on problems
        assert f"{case['problems']} problem(s); nothing was written" in lines, err
    after = {p: p.read_bytes() for p in (mini_course / "site").rglob("*") if p.is_file()}
    assert after == before


def test_all_problems_are_reported_at_once_sorted(mini_course, capsys):
    apply_case(mini_course, CASES[2])  # unknown key in lesson 2
    (mini_course / "lessons" / "01-first.md").write_text("---\ntitel: x\n---\n\nBody.\n")
    status, _, err = run_cli(capsys, "--root", mini_course, "check")
    assert status == 1
    located = [line.split(":")[0] for line in err.splitlines() if line.startswith("lessons/")]
    assert located == sorted(located) and "lessons/01-first.md" in located and "lessons/02-second.md" in located


def test_the_bad_input_catalog_is_large_and_every_case_is_unique():
    assert len(CASES) >= 80
    assert len({c["name"] for c in CASES}) == len(CASES)
