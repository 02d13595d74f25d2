"""Golden snapshots of each page type, from the fixed mini course.

A mismatch writes `<name>-changed.html` beside the golden file for review; accept changes with
`pytest --update-golden` (CI never does).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coursegen.pipeline import build_site

GOLDEN = Path(__file__).resolve().parent / "golden"
PAGES = {
    "index": "index.html",
    "lesson": "first.html",
    "lesson-2": "second.html",
    "review": "check.html",
    "404": "404.html",
}


@pytest.fixture(scope="module")
def mini_outputs(tmp_path_factory):
    from helpers import FIXTURES, copy_course

    return build_site(copy_course(FIXTURES / "mini", tmp_path_factory.mktemp("golden") / "mini")).outputs


@pytest.mark.parametrize("name", PAGES)
def test_page_matches_its_golden_snapshot(name, mini_outputs, request):
    from helpers import check_golden

    check_golden(
        mini_outputs[PAGES[name]].decode(), GOLDEN, name, PAGES[name], request.config.getoption("--update-golden")
    )
