"""Every catalogued bad input: its message and line, exit status 1, no traceback, site/ untouched."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from helpers import FIXTURES, run_cli

CASES = yaml.safe_load((FIXTURES / "bad" / "cases.yaml").read_text())


def apply_case(root: Path, case: dict) -> None:
    """Make the edits a case describes inside a course copy: its own, then each under `also`."""
    for edit in [case, *case.get("also", [])]:
        apply_edit(root, edit)


def apply_edit(root: Path, case: dict) -> None:
    """Make one file edit inside a course copy."""
    target = root / case["file"]
    if case.get("delete"):
        target.unlink()
        return
    text = case.get("text")
    if text is None:
        text = target.read_text()
        for old, new in case.get("replace", []):
            assert old in text, f"case {case['name']!r}: {old!r} not found in {case['file']}"
            text = text.replace(old, new)
    target.write_bytes(text.encode(case.get("encoding", "utf-8")))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bad_input_is_reported_at_its_line_and_leaves_site_untouched(case, mini_course, capsys):
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    before = {p: p.read_bytes() for p in (mini_course / "site").rglob("*") if p.is_file()}
    apply_case(mini_course, case)
    status, out, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 1
    assert "Traceback" not in err
    lines = err.splitlines()
    assert any(line.startswith(case["expect"]) for line in lines), err
    if "hint" in case:
        assert any(case["hint"] in line for line in lines if line.strip().startswith("hint:")), err
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
    assert len(CASES) >= 15
    assert len({c["name"] for c in CASES}) == len(CASES)
