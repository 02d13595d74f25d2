"""The browser-side store, schedule, shuffle and tally counts, checked under Node (no browser needed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from coursegen.theme import messages

SCRIPT = Path(__file__).parent / "progress_checks.mjs"
NODE = shutil.which("node")


# coursegen/messages.js is made per course, not a theme file: the English one, for theme_modules.mjs.
MESSAGES_JS = Path(tempfile.mkdtemp()) / "messages.js"
MESSAGES_JS.write_bytes(messages.script(messages.reference(Path(__file__).resolve().parents[3])))


def run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COURSEGEN_MESSAGES_JS": MESSAGES_JS.as_uri()}
    return subprocess.run([NODE, str(SCRIPT), *args], capture_output=True, text=True, timeout=60, env=env)


CHECKS = json.loads(run().stdout) if NODE else []


def test_node_is_available_for_these_checks():
    assert NODE, "node is needed to run the browser-side checks (Node 20 is part of the setup)"
    assert len(CHECKS) >= 9


@pytest.mark.parametrize("name", CHECKS)
def test_browser_side_check(name):
    result = run(name)
    assert result.returncode == 0, result.stderr
