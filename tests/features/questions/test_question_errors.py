"""Broken question blocks are reported as `path:line: message` with a hint, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import read_yaml, run_cli

CASES = read_yaml((Path(__file__).parent / "bad_questions.yaml").read_text())


def edit(root: Path, case: dict) -> None:
    """Apply a case's replacements to its file inside a course copy."""
    target = root / case["file"]
    text = target.read_text()
    for old, new in case["replace"]:
        assert old in text, f"{case['name']}: {old!r} not in {case['file']}"
        text = text.replace(old, new)
    target.write_text(text)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_a_broken_question_is_reported_at_its_line_and_stops_the_build(case, review_course, capsys):
    edit(review_course, case)
    status, _, err = run_cli(capsys, "--root", review_course, "build")
    assert status == 1 and "Traceback" not in err
    lines = err.splitlines()
    assert any(line.startswith(case["expect"]) for line in lines), err
    if "hint" in case:
        assert any(case["hint"] in line for line in lines if line.strip().startswith("hint:")), err
    assert not (review_course / "site").exists()


def test_the_unedited_review_fixture_builds_cleanly(review_course, capsys):
    status, _, err = run_cli(capsys, "--root", review_course, "build")
    assert status == 0, err
