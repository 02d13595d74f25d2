"""The select-all and numeric helpers of the page (reading a number, scoring, variants, storage), under Node."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from coursegen.theme import messages

SCRIPT = Path(__file__).parent / "numeric_checks.mjs"
NODE = shutil.which("node")
MESSAGES_JS = Path(tempfile.mkdtemp()) / "messages.js"  # the English catalogue, as test_progress_store.py writes it
MESSAGES_JS.write_bytes(messages.script(messages.reference(Path(__file__).resolve().parents[3])))


def run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COURSEGEN_MESSAGES_JS": MESSAGES_JS.as_uri()}
    return subprocess.run([NODE, str(SCRIPT), *args], capture_output=True, text=True, timeout=60, env=env)


CHECKS = json.loads(run().stdout) if NODE else []


def test_the_checks_are_found():
    assert NODE and len(CHECKS) >= 5


@pytest.mark.parametrize("name", CHECKS)
def test_numeric_and_select_all_helper(name):
    result = run(name)
    assert result.returncode == 0, result.stderr
