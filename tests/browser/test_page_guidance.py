"""What guides a learner through a lesson in Chromium: the keyboard meets the course's units early on a wide
screen, the theme toggle shows its state, the Copy button reads on a revealed solution, "On this page" fits
its numbers and marks the section being read, and each heading has a permalink that moves nothing."""

from __future__ import annotations

import pytest
from helpers import REPO
from pages import open_page
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
LESSON = "sequence-axis.html"  # ten sections, widgets, code, an exercise with a reference solution
FOCUSED = """() => { const el = document.activeElement;
  return el.closest('.course-units') ? 'units' : el.closest('main') ? 'main' : el.tagName; }"""


@pytest.fixture(scope="module")
def site(sample_site):
    """The sample course's site, built once for the session and served (conftest.sample_site)."""
    return sample_site


def tab_order(page, stops: int = 40) -> list[str]:
    """Press Tab `stops` times from the top of the page; return where each focus landed ('units', 'main', a tag)."""
    page.evaluate("() => window.scrollTo(0, 0)")
    page.locator("body").focus()
    where = []
    for _ in range(stops):
        page.keyboard.press("Tab")
        where.append(page.evaluate(FOCUSED))
    return where


def test_on_a_wide_screen_the_keyboard_reaches_the_course_s_units_before_the_text(site, context_factory):
    page = open_page(context_factory(viewport=DESKTOP), site, LESSON)
    order = tab_order(page)
    assert "units" in order, f"the unit list is not among the first {len(order)} tab stops: {order}"
    assert order.index("units") < order.index("main")


def test_on_a_phone_the_keyboard_follows_the_text_before_the_units_shown_after_it(site, context_factory):
    page = open_page(context_factory(viewport=PHONE), site, "review-a.html")
    order = tab_order(page, 12)
    assert "main" in order and ("units" not in order or order.index("main") < order.index("units"))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_theme_toggle_is_named_for_the_dark_theme_and_shows_whether_it_is_on(scheme, site, context_factory):
    page = open_page(context_factory(color_scheme=scheme), site, LESSON)
    toggle = page.locator("[data-theme-toggle]")
    expect(toggle).to_have_attribute("aria-pressed", "true" if scheme == "dark" else "false")
    expect(toggle).to_have_accessible_name("Dark theme")  # pressed: the dark theme is on
    look = "el => [getComputedStyle(el, '::before').backgroundColor, getComputedStyle(el, '::before').backgroundImage]"
    before = toggle.evaluate(look)
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "false" if scheme == "dark" else "true")
    assert toggle.evaluate(look) != before, "pressed and not pressed look the same"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_copy_button_of_a_revealed_reference_solution_is_readable(scheme, site, context_factory):
    page = open_page(context_factory(color_scheme=scheme, bypass_csp=True), site, LESSON)
    page.evaluate("""() => document.querySelectorAll('.question-exercise details').forEach(d => {
        d.hidden = false; d.open = true; })""")
    buttons = page.locator(".question-exercise details .code-copy")
    expect(buttons.first).to_be_visible()
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("""() => axe.run({include: [['.question-exercise details .code-copy']]},
        {runOnly: ['color-contrast'], resultTypes: ['violations']})""")
    assert [(v["id"], [n["any"][0]["message"] for n in v["nodes"]]) for v in found["violations"]] == []


def test_on_this_page_fits_a_two_digit_number_inside_its_rule(site, context_factory):
    page = open_page(context_factory(viewport=DESKTOP), site, LESSON)
    tenth = page.locator(".toc > ol > li").nth(9)
    room, needed = tenth.evaluate("""li => {
        const list = li.parentElement, style = getComputedStyle(li);
        const canvas = document.createElement('canvas').getContext('2d');
        canvas.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        return [parseFloat(getComputedStyle(list).paddingLeft), canvas.measureText('10. ').width];
    }""")
    assert needed <= room - 2, f"the marker '10. ' needs {needed:.1f} px and has {room:.1f}"


def test_on_this_page_marks_the_section_being_read(site, context_factory):
    page = open_page(context_factory(viewport=DESKTOP), site, LESSON)
    links = page.locator(".toc a")
    current = page.locator('.toc a[aria-current="location"]')
    for index in (3, 6, 1):
        target = links.nth(index).get_attribute("href")[1:]
        page.evaluate("id => document.getElementById(id).scrollIntoView()", target)
        expect(current).to_have_count(1)
        expect(current).to_have_attribute("href", f"#{target}")


def test_each_heading_has_a_permalink_shown_on_hover_or_focus_that_moves_nothing(site, context_factory):
    plain = open_page(context_factory(viewport=DESKTOP, java_script_enabled=False), site, LESSON)
    page = open_page(context_factory(viewport=DESKTOP), site, LESSON)
    headings = page.locator(".unit-body h2[id]")
    assert headings.count() >= 5
    box = "h => { const r = h.getBoundingClientRect(); return [r.x, r.width, r.height]; }"
    for index in range(headings.count()):
        heading = headings.nth(index)
        name = heading.get_attribute("id")
        link = heading.locator("a.heading-link")
        expect(link).to_have_attribute("href", f"#{name}")
        expect(link).to_have_accessible_name(
            f"Link to the section “{heading.evaluate('h => h.firstChild.textContent')}”"
        )
        assert heading.evaluate(box) == plain.locator(f"[id='{name}']").evaluate(box)  # the link takes no room
    heading, link = headings.nth(2), headings.nth(2).locator("a.heading-link")
    assert link.evaluate("a => getComputedStyle(a).opacity") == "0"
    heading.hover()
    expect(link).to_have_css("opacity", "1")
    link.focus()
    page.mouse.move(0, 0)
    expect(link).to_have_css("opacity", "1")
    link.click()
    assert page.url.endswith(f"#{heading.get_attribute('id')}")
