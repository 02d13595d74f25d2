"""A learner opens the course in Chromium and walks it by its navigation links."""
from __future__ import annotations

import pytest

from helpers import run_cli, serving

pytestmark = pytest.mark.browser


def test_index_and_lessons_load_and_prev_next_links_work(sample_course, page_and_watch, capsys):
    assert run_cli(capsys, "--root", sample_course, "build")[0] == 0
    page, watch = page_and_watch
    with serving(sample_course / "site") as base:
        page.goto(base + "index.html")
        assert page.title().startswith("Kimi K3")
        page.locator(".course-map a").first.click()
        first_url = page.url
        assert page.locator("h1").is_visible()
        page.locator("nav.unit-nav a[rel=next]").first.click()
        assert page.url != first_url and page.locator("h1").is_visible()
        page.locator("nav.unit-nav a[rel=prev]").first.click()
        assert page.url == first_url
    watch.assert_clean()


def test_theme_toggle_persists_across_pages(sample_course, page_and_watch, capsys):
    assert run_cli(capsys, "--root", sample_course, "build")[0] == 0
    page, watch = page_and_watch
    with serving(sample_course / "site") as base:
        page.goto(base + "index.html")
        toggle = page.locator("[data-theme-toggle]")
        before = toggle.get_attribute("aria-pressed")
        toggle.click()
        assert toggle.get_attribute("aria-pressed") != before
        page.goto(base + "kda.html")
        assert page.locator("[data-theme-toggle]").get_attribute("aria-pressed") != before
    watch.assert_clean()


def test_theme_toggle_follows_the_system_until_the_learner_chooses(sample_course, page_and_watch, capsys):
    assert run_cli(capsys, "--root", sample_course, "build")[0] == 0
    page, watch = page_and_watch
    with serving(sample_course / "site") as base:
        page.emulate_media(color_scheme="light")
        page.goto(base + "kda.html")
        toggle = page.locator("[data-theme-toggle]")
        assert toggle.get_attribute("aria-pressed") == "false"
        page.emulate_media(color_scheme="dark")  # the system turns dark while the page is open
        page.wait_for_function("document.querySelector('[data-theme-toggle]').getAttribute('aria-pressed') === 'true'")
        toggle.click()  # the learner's choice wins from now on
        assert toggle.get_attribute("aria-pressed") == "false"
        assert page.evaluate("document.documentElement.dataset.theme") == "light"
    watch.assert_clean()
