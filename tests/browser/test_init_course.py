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
        page.locator(f"{WIDGET}-steps").focus()
        page.keyboard.press("ArrowRight")  # 11 steps: baked too, so still no Python (the CDN would be a request)
        assert amount.text_content() == "189.83"
        source = page.locator(f"{WIDGET} [data-widget-source]")
        assert source.text_content() == "Showing results computed when this page was built."
        page.goto(base + "practice.html")
        page.get_by_role("button", name="Search").click()
        page.keyboard.type("table of contents")
        page.wait_for_selector("[data-search-results] a")
    watch.assert_clean()


@pytest.mark.parametrize("scheme, colour", [("light", "rgb(10, 125, 90)"), ("dark", "rgb(127, 224, 189)")])
def test_the_accent_of_course_yaml_colours_links_in_both_schemes(tmp_path, capsys, context_factory, scheme, colour):
    from playwright.sync_api import expect

    course = tmp_path / "knots"
    assert run_cli(capsys, "init", course)[0] == 0
    with (course / "course.yaml").open("a") as config:
        config.write('theme:\n  accent: "#0a7d5a"\n  accent_dark: "#7fe0bd"\n')
    lesson = course / "lessons" / "01-welcome.md"
    lesson.write_text(lesson.read_text() + "\nThen [practise](../reviews/02-practice.md).\n")
    assert run_cli(capsys, "--root", course, "build", "--strict")[0] == 0
    page = context_factory(color_scheme=scheme).new_page()
    with serving(course / "site") as base:
        page.goto(base + "welcome.html")
        expect(page.get_by_role("link", name="practise", exact=True)).to_have_css("color", colour)
