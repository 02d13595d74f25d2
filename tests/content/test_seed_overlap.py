"""Every sentence in the project is ours: nothing repeats ten or more words of the seed pages."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import REPO

CHECKER = REPO.parent / "shared" / "tools" / "seed_overlap.py"


@pytest.mark.skipif(not CHECKER.is_file(), reason="../shared (the seeds and their checker) is not beside this clone")
def test_no_run_of_ten_words_is_shared_with_the_seeds():
    run = subprocess.run(
        [sys.executable, str(CHECKER), "--repo", str(REPO)], capture_output=True, text=True, timeout=120
    )
    shared = [line for line in run.stdout.splitlines() if "also in the source documents" in line]
    assert run.returncode == 0 and shared == [], "\n".join(shared) or run.stderr
