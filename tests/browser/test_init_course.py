"""The course `coursegen init` writes, in Chromium: every page clean, the widget answering, nothing
fetched from anywhere but the site itself."""
from __future__ import annotations

import pytest

from helpers import run_cli, serving

pytestmark = pytest.mark.browser
WIDGET = "#widget-growth-steps"


@pytest.fixture
def site(tmp_path, capsys):
    course = tmp_path / "knots"
    assert run_cli(capsys, "init", course, "--title", "Knots")[0] == 0
    status, _, err = run_cli(capsys, "--root", course, "build", "--strict")
    assert status == 0, err
    return course / "site"


def test_every_page_of_a_new_course_loads_without_errors_or_outside_requests(site, page_and_watch):
    page, watch = page_and_watch
    with serving(site) as base:
        for name in ("index.html", "welcome.html", "practice.html", "404.html"):
            page.goto(base + name)
            page.wait_for_load_state("networkidle")
            assert page.locator("footer.site-footer").is_visible()
        page.goto(base + "welcome.html")
        page.wait_for_selector(f"{WIDGET}[data-widget-ready]")
        amount = page.locator(f"{WIDGET} [data-out=amount_text]")
        assert amount.text_content() == "162.89"
        page.locator(f"{WIDGET}-rate").focus()
        page.keyboard.press("ArrowRight")  # 6 % per step: a baked state, no Python needed
        assert page.locator(f"{WIDGET} [data-out=doubling]").text_content() == "12"
        assert amount.text_content() == "179.08"
        page.goto(base + "practice.html")
        page.get_by_role("button", name="Search").click()
        page.keyboard.type("table of contents")
        page.wait_for_selector("[data-search-results] a")
    watch.assert_clean()
