"""The browser-side store, schedule, shuffle and tally counts, checked under Node (no browser needed)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parent / "progress_checks.mjs"
NODE = shutil.which("node")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([NODE, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


CHECKS = json.loads(run().stdout) if NODE else []


def test_node_is_available_for_these_checks():
    assert NODE, "node is needed to run the browser-side checks (Node 20 is part of the setup)"
    assert len(CHECKS) >= 9


@pytest.mark.parametrize("name", CHECKS)
def test_browser_side_check(name):
    result = run(name)
    assert result.returncode == 0, result.stderr
