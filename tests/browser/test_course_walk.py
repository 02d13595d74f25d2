"""A learner reads the sample course in Chromium: by "next" links, on a phone, and on paper."""

from __future__ import annotations

import pytest
from helpers import run_cli, serving

pytestmark = pytest.mark.browser

WRITTEN = ["k3-at-a-glance", "kda", "sequence-axis", "depth-axis", "review-a"]
PHONE = {"width": 360, "height": 740}
PRINTED_PAGE = {"width": 700, "height": 1000}  # about an A4 page's printable width at 96 dpi


@pytest.fixture
def built(sample_course, capsys):
    """The sample course, built into its site/ folder."""
    assert run_cli(capsys, "--root", sample_course, "build")[0] == 0
    return sample_course / "site"


def test_next_links_walk_from_the_map_through_every_written_unit_and_back(built, page_and_watch):
    page, watch = page_and_watch
    visited = []
    with serving(built) as base:
        page.goto(base + "index.html")
        page.locator(".course-map a").first.click()
        while not page.url.endswith("index.html") and len(visited) < 14:
            visited.append(page.locator("article.unit").get_attribute("data-unit"))
            assert page.locator("h1").is_visible()
            page.locator("nav.unit-nav a[rel=next]").first.click()
    assert visited == WRITTEN
    watch.assert_clean()


def test_on_a_phone_no_page_scrolls_sideways(built, context_factory):
    page = context_factory(viewport=PHONE, java_script_enabled=False).new_page()
    with serving(built) as base:
        for slug in WRITTEN:
            page.goto(f"{base}{slug}.html")
            width = page.evaluate("() => document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{slug}.html is {width}px wide on a {PHONE['width']}px phone"


def test_printed_pages_hide_navigation_and_fit_every_diagram_and_table(built, context_factory):
    page = context_factory(viewport=PRINTED_PAGE, java_script_enabled=False).new_page()
    page.emulate_media(media="print")
    with serving(built) as base:
        for slug in WRITTEN:
            page.goto(f"{base}{slug}.html")
            assert not page.locator("nav.unit-nav").first.is_visible()
            clipped = page.evaluate("""() => [...document.querySelectorAll('pre.diagram, .unit-body table')]
                .filter(el => el.scrollWidth > el.clientWidth + 1).map(el => el.textContent.slice(0, 40))""")
            assert clipped == [], f"{slug}.html prints these cut off: {clipped}"


def test_lesson_ones_memory_widget_answers_from_baked_states(built, page_and_watch):
    page, watch = page_and_watch
    widget = "#widget-memory-per-sequence"
    with serving(built) as base:
        page.goto(base + "k3-at-a-glance.html")
        page.wait_for_selector(f"{widget}[data-widget-ready]")
        verdict = page.locator(f"{widget} [data-out=verdict]")
        assert verdict.text_content().startswith("At 1M tokens, K3's mix holds 24.2 GiB")
        page.select_option(f"{widget}-context", "8K")
        assert verdict.text_content().startswith("At 8K tokens")
        assert page.locator(f"{widget} [data-out=kda_text]").text_content() == "207 MiB"  # the state keeps its size
        assert page.locator(f"{widget} [data-marker]").get_attribute("x1") == "0"
        page.select_option(f"{widget}-head_dim", "64")
        assert "head dimension 64" in page.locator(f"{widget} [data-out=assumptions_text]").text_content()
        assert page.locator(f"{widget} [data-out=kda_text]").text_content() == "51.8 MiB"
    watch.assert_clean()
