"""A learner opens the course in Chromium and walks it by its navigation links."""

from __future__ import annotations

import re

import pytest
from helpers import run_cli, serving
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_index_and_lessons_load_and_prev_next_links_work(sample_course, page_and_watch, capsys):
    assert run_cli(capsys, "--root", sample_course, "build")[0] == 0
    page, watch = page_and_watch
    with serving(sample_course / "site") as base:
        page.goto(base + "index.html")
        assert page.title().startswith("Kimi K3")
        page.locator(".course-map a").first.click()
        expect(page).not_to_have_url(re.compile(r"index\.html$"))
        first_url = page.url
        expect(page.locator("h1")).to_be_visible()
        page.locator("nav.unit-nav a[rel=next]").first.click()
        expect(page).not_to_have_url(first_url)
        expect(page.locator("h1")).to_be_visible()
        page.locator("nav.unit-nav a[rel=prev]").first.click()
        expect(page).to_have_url(first_url)
    watch.assert_clean()


def test_theme_toggle_persists_across_pages(sample_course, page_and_watch, capsys):
    assert run_cli(capsys, "--root", sample_course, "build")[0] == 0
    page, watch = page_and_watch
    with serving(sample_course / "site") as base:
        page.goto(base + "index.html")
        toggle = page.locator("[data-theme-toggle]")
        expect(toggle).to_have_attribute("aria-pressed", re.compile("^(true|false)$"))  # the script has run
        before = toggle.get_attribute("aria-pressed")
        toggle.click()
        expect(toggle).not_to_have_attribute("aria-pressed", before)
        page.goto(base + "kda.html")
        expect(page.locator("[data-theme-toggle]")).not_to_have_attribute("aria-pressed", before)
    watch.assert_clean()


def test_theme_toggle_follows_the_system_until_the_learner_chooses(sample_course, page_and_watch, capsys):
    assert run_cli(capsys, "--root", sample_course, "build")[0] == 0
    page, watch = page_and_watch
    with serving(sample_course / "site") as base:
        page.emulate_media(color_scheme="light")
        page.goto(base + "kda.html")
        toggle = page.locator("[data-theme-toggle]")
        expect(toggle).to_have_attribute("aria-pressed", "false")
        page.emulate_media(color_scheme="dark")  # the system turns dark while the page is open
        expect(toggle).to_have_attribute("aria-pressed", "true")
        toggle.click()  # the learner's choice wins from now on
        expect(toggle).to_have_attribute("aria-pressed", "false")
        expect(page.locator("html")).to_have_attribute("data-theme", "light")
    watch.assert_clean()
