"""The header menu on a phone holds the course's units: every unit the wide screen's list shows, numbered and
grouped the same way, the current one marked, so any lesson is two taps away (the menu, then the unit), with
JavaScript or without it."""

from __future__ import annotations

import importlib.util
import re

import pytest
from helpers import REPO, serving
from pages import open_page
from playwright.sync_api import expect
from test_a11y import serious_violations

from coursegen.cli import main as cli_main

pytestmark = pytest.mark.browser
PHONE = {"viewport": {"width": 390, "height": 844}}
DESKTOP = {"viewport": {"width": 1280, "height": 900}}
FIRST = "k3-at-a-glance.html"  # Lesson 1: ten sections, and Lesson 4 is neither its previous nor its next
THIRD = "sequence-axis.html"
FOURTH = re.compile(r"^4\s+Depth axis")


@pytest.fixture(scope="module")
def site(sample_site):
    """The sample course's site, built once for the session and served (conftest.sample_site)."""
    return sample_site


def open_menu(page):
    """Open the header menu with a tap on its button; return the button."""
    summary = page.locator(".site-header .site-menu summary")
    expect(summary).to_be_visible()
    assert summary.bounding_box()["y"] < 60
    summary.click()
    expect(page.locator(".site-menu")).to_have_attribute("open", "")
    return summary


def unit_links(page) -> list[str]:
    """Return the names of the unit links on screen (the first screen, the page unscrolled), in order."""
    return page.evaluate(
        """() => [...document.querySelectorAll("a[href$='.html']")].filter((a) => {
               const box = a.getBoundingClientRect(), hit = document.elementFromPoint(box.x + 4, box.y + box.height / 2);
               return box.height > 0 && box.bottom <= innerHeight && a.contains(hit) && a.closest('nav');
             }).map((a) => a.textContent.replace(/\\s+/g, ' ').trim())"""
    )


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_the_phone_menu_reaches_lesson_4_in_two_taps(site, context_factory, javascript):
    page = open_page(context_factory(java_script_enabled=javascript, **PHONE), site, FIRST)
    open_menu(page)
    lesson4 = page.get_by_role("link", name=FOURTH)
    visible = [link for link in lesson4.all() if link.is_visible()]
    assert len(visible) == 1, "one link to Lesson 4 shows once the menu is open"
    expect(visible[0]).to_be_in_viewport()  # no scrolling: the second tap
    assert page.evaluate("scrollY") == 0
    visible[0].click()
    expect(page).to_have_url(re.compile(r"/depth-axis\.html$"))


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_the_phone_menu_lists_every_unit_as_the_wide_screen_does_and_marks_this_one(site, context_factory, javascript):
    wide = open_page(context_factory(**DESKTOP), site, THIRD)
    sidebar = [" ".join(text.split()) for text in wide.locator(".course-units").first.locator("li").all_inner_texts()]
    assert "1 K3 at a glance" in sidebar

    page = open_page(context_factory(java_script_enabled=javascript, **PHONE), site, THIRD)
    current = page.locator("a[aria-current=page]")
    expect(current).not_to_be_in_viewport()  # closed, the menu leaves the first screen to the text
    open_menu(page)
    on_screen = unit_links(page)
    names = [item for item in sidebar if re.match(r"^[0-9A-Z]+ ", item)]  # the units, not the part headings
    assert [name for name in on_screen if name in names] == names
    expect(current).to_have_count(1)
    expect(current).to_be_in_viewport()
    expect(current).to_have_text(re.compile(r"^\s*3\s+Sequence axis"))
    assert current.evaluate("e => e.getAttribute('href')") == THIRD
    parts = page.locator(".course-units-part").filter(has_text="Review")
    expect(parts).to_be_in_viewport()  # the review's group heading, as the wide list shows it
    for link in page.locator(".course-units ol a").all():
        assert link.bounding_box()["height"] >= 24


def test_the_phone_menu_keeps_keyboard_order_and_closes_on_escape_from_the_list(site, context_factory):
    page = open_page(context_factory(**PHONE), site, THIRD)
    summary = open_menu(page)
    summary.focus()
    page.keyboard.press("Tab")
    first = page.evaluate("document.activeElement.closest('nav')?.className")
    assert first and "course-units" in first, first  # the list comes right after the button
    tops = []
    for _ in range(4):
        page.keyboard.press("Tab")
        tops.append(page.evaluate("document.activeElement.getBoundingClientRect().top"))
    assert tops == sorted(tops) and tops[-1] < 844  # down the open menu, on the first screen
    page.keyboard.press("Escape")
    expect(page.locator(".site-menu")).not_to_have_attribute("open", "")
    expect(summary).to_be_focused()


def test_a_wide_screen_shows_the_unit_list_beside_the_text_and_no_menu(site, context_factory):
    page = open_page(context_factory(**DESKTOP), site, THIRD)
    expect(page.locator(".site-menu")).to_be_hidden()
    expect(page.locator(".site-menu-panel")).to_be_hidden()
    units = page.locator(".course-units")
    expect(units).to_have_count(1)  # one list in the page, whatever the width
    box, main = units.bounding_box(), page.locator("main").bounding_box()
    assert box["x"] + box["width"] <= main["x"]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_open_phone_menu_passes_axe(site, context_factory, theme):
    context = context_factory(color_scheme=theme, bypass_csp=True, service_workers="block", **PHONE)
    found = {}
    for name in (FIRST, THIRD, "review-a.html"):
        page = open_page(context, site, name)
        open_menu(page)
        found[name] = serious_violations(page)
        page.close()
    assert found == {name: [] for name in (FIRST, THIRD, "review-a.html")}


@pytest.fixture(scope="module")
def long_course(tmp_path_factory):
    """A generated course of 80 lessons (benchmarks/generated_course.py), built once and served."""
    spec = importlib.util.spec_from_file_location("generated_course", REPO / "benchmarks" / "generated_course.py")
    generated = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generated)
    root = generated.write_course(tmp_path_factory.mktemp("long-menu") / "course", count=80)
    generated.copy_engine_parts(REPO, root)
    assert cli_main(["--root", str(root), "build"]) == 0
    with serving(root / "site") as base:
        yield base


def test_a_long_unit_list_scrolls_inside_the_open_menu_to_the_current_unit(long_course, context_factory):
    page = open_page(context_factory(**PHONE), long_course, "lesson-70.html")
    open_menu(page)
    current = page.locator("a[aria-current=page]")
    expect(current).to_have_text(re.compile(r"^\s*70\s+Lesson 70"))
    expect(current).to_be_in_viewport()  # the list scrolled itself, the page did not
    assert page.evaluate("scrollY") == 0
    sections = page.locator(".site-menu-panel .site-menu-heading").first
    assert sections.bounding_box()["y"] < 844  # the sections still start on the first screen
