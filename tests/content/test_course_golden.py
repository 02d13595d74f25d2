"""Golden snapshots of every page of the sample course.

A mismatch writes `<page>-changed.html` beside the golden file for review; accept deliberate
changes with `pytest tests/content --update-golden` (CI never does).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import REPO, check_golden, copy_course

from coursegen.pipeline import build_site

GOLDEN = Path(__file__).resolve().parent / "golden"
PAGES = ("index", "k3-at-a-glance", "kda", "sequence-axis", "depth-axis", "review-a")


@pytest.fixture(scope="module")
def course_outputs(tmp_path_factory):
    """The sample course built once for all snapshots."""
    return build_site(copy_course(REPO, tmp_path_factory.mktemp("golden") / "course")).outputs


@pytest.mark.parametrize("name", PAGES)
def test_each_course_page_matches_its_golden_snapshot(name, course_outputs, request):
    check_golden(
        course_outputs[f"{name}.html"].decode(),
        GOLDEN,
        name,
        f"{name}.html",
        request.config.getoption("--update-golden"),
    )
