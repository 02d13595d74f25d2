"""The default theme as a learner meets it in Chromium: the math font, the logo, the first phone screen,
the units beside the text, copy buttons, callout marks, search by arrow keys, touch targets, no layout shift."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import copy_course, serving
from pages import open_page
from playwright.sync_api import expect

from coursegen.cli import main as cli_main

pytestmark = pytest.mark.browser
COURSE = Path(__file__).resolve().parent.parent / "features" / "hosting" / "course"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
LOGO = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#1f5fbf"/></svg>'
)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The accessibility fixture course (a lesson with math, code, a callout, a widget; a review), with a logo."""
    root = copy_course(COURSE, tmp_path_factory.mktemp("theme") / "course")
    (root / "logo.svg").write_text(LOGO)
    config = root / "course.yaml"
    config.write_text(config.read_text() + "theme:\n  logo: logo.svg\n")
    assert cli_main(["--root", str(root), "build"]) == 0
    with serving(root / "site") as base:
        yield base


def fonts_of(page, selector: str) -> set[str]:
    """Return the families Chromium actually drew the text of every element matching `selector` in."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    families = set()
    for node in cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": selector})["nodeIds"]:
        families |= {f["familyName"] for f in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]}
    return families


def test_formulas_are_drawn_in_the_math_font_which_only_pages_with_math_load(site, context_factory):
    context = context_factory(service_workers="block")
    fetched = []
    context.on("request", lambda request: fetched.append(request.url))
    page = open_page(context, site, "moon.html")
    page.evaluate("() => document.fonts.ready")
    assert [url for url in fetched if "noto-sans-math" in url]  # preloaded with the page
    # font-display: optional: a font late for the first paint waits for the next one (the text never moves)
    page.reload()
    page.wait_for_load_state("networkidle")
    assert fonts_of(page, "math mi, math mn, math mo") == {"Noto Sans Math"}
    fetched.clear()
    for name in ("index.html", "recap.html", "404.html"):  # no formulas there: neither font nor stylesheet
        open_page(context, site, name)
    assert not [url for url in fetched if "noto-sans-math" in url or "/math." in url]


def test_the_logo_is_32_px_tall_and_the_title_sits_beside_it(site, context_factory):
    page = open_page(context_factory(viewport=DESKTOP), site, "moon.html")
    logo = page.locator(".site-logo").bounding_box()
    name = page.locator(".site-name").bounding_box()
    assert (logo["width"], logo["height"]) == (32, 32)  # the file is 64 px: the theme asks for 32
    assert name["x"] >= logo["x"] + logo["width"] + 4  # a gap, not on the logo's edge
    assert abs((name["y"] + name["height"] / 2) - (logo["y"] + logo["height"] / 2)) < 3


@pytest.mark.parametrize("name", ["moon.html", "recap.html"])
def test_on_a_phone_the_first_paragraph_starts_on_the_first_screen_in_one_header_row(name, site, context_factory):
    page = open_page(context_factory(viewport=PHONE), site, name)
    header = page.locator(".site-header").bounding_box()
    assert header["height"] <= 60  # title and both buttons in one row
    first = page.locator(".unit-body > p, .unit-body > .question").first.bounding_box()
    assert first["y"] + 24 <= PHONE["height"], f"the first paragraph starts at {first['y']} px"


def test_the_course_s_units_are_beside_the_text_on_a_wide_screen_and_after_it_on_a_phone(site, context_factory):
    wide = open_page(context_factory(viewport=DESKTOP), site, "recap.html")
    units, text = wide.locator("nav.course-units"), wide.locator("main").bounding_box()
    current = units.locator("a[aria-current=page]")
    expect(current).to_have_text(re.compile(r"^2\s+Recap the tides$"))
    assert units.bounding_box()["x"] + units.bounding_box()["width"] <= text["x"]  # to the left of the text
    assert units.bounding_box()["y"] < text["y"] + 100  # at its top
    toc = wide.locator(".toc")
    if toc.count():
        assert toc.bounding_box()["x"] >= text["x"] + text["width"]  # the sections, to its right
    narrow = open_page(context_factory(viewport=PHONE), site, "recap.html")
    box = narrow.locator("nav.course-units").bounding_box()
    assert box["y"] > narrow.locator("main").bounding_box()["y"] + 200  # after the text, not before it
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]


def test_each_code_block_gets_a_copy_button_that_copies_its_code(site, context_factory):
    context = context_factory(viewport=DESKTOP)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = open_page(context, site, "moon.html")
    block = page.locator(".unit-body .code-block:has(pre.highlight)").first
    block.locator(".code-copy").click()
    expect(block.locator(".code-copy")).to_have_text("Copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == 'print("high water")'
    assert page.locator(".unit-body pre.diagram").evaluate("pre => pre.parentElement.className") != "code-block"
    # a widget's code box is the Python live runs read: its button sits beside it, never inside
    code = page.locator("[data-widget-code]").first
    assert code.evaluate("el => el.parentElement.className") == "code-block"
    assert code.locator(".code-copy").count() == 0 and "Copy" not in code.text_content()


def test_each_callout_kind_has_its_own_mark(site, context_factory):
    page = open_page(context_factory(), site, "moon.html")
    mark = page.locator(".callout-note .callout-title").evaluate("el => getComputedStyle(el, '::before').content")
    assert mark == '"i"'


def test_arrow_down_moves_from_the_search_field_into_the_results_and_back(site, context_factory):
    page = open_page(context_factory(), site, "moon.html")
    page.keyboard.press("/")
    page.keyboard.type("moon")
    page.locator("[data-search-status]", has_text="for “moon”").wait_for()  # the last query's results
    links = page.locator("[data-search-results] a")
    page.keyboard.press("ArrowDown")
    expect(links.first).to_be_focused()
    if links.count() > 1:
        page.keyboard.press("ArrowDown")
        expect(links.nth(1)).to_be_focused()
        page.keyboard.press("ArrowUp")
        expect(links.first).to_be_focused()
    page.keyboard.press("ArrowUp")
    expect(page.locator("[data-search] input")).to_be_focused()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_controls_are_at_least_24_px_to_touch_and_drawn_in_the_accent_colour(scheme, site, context_factory):
    page = open_page(context_factory(viewport=PHONE, color_scheme=scheme), site, "moon.html")
    page.wait_for_selector("[data-widget-ready]")
    small = page.evaluate("""() => [...document.querySelectorAll('main button, main input, main select, main summary')]
        .filter(el => el.checkVisibility())
        .map(el => [el.outerHTML.slice(0, 100), el.getBoundingClientRect()])
        .filter(([, r]) => r.height < 24 || r.width < 24).map(([html, r]) => `${html}: ${r.width}x${r.height}`)""")
    assert small == []
    accent = page.evaluate("() => getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()")
    slider = page.locator("[data-widget] input[type=range]").first
    assert slider.evaluate("el => getComputedStyle(el).accentColor") == page.evaluate(
        "c => { const d = document.createElement('i'); d.style.color = c; document.body.append(d);"
        " const v = getComputedStyle(d).color; d.remove(); return v; }",
        accent,
    )
    box = page.locator("[data-widget] input[type=number]").first
    background = box.evaluate("el => getComputedStyle(el).backgroundColor")
    page_background = page.evaluate("() => getComputedStyle(document.documentElement).backgroundColor")
    assert background == page_background  # not a white box on a dark page


def test_nothing_moves_while_a_lesson_or_the_map_loads_and_the_theme_s_scripts_run(site, context_factory):
    context = context_factory(viewport=PHONE)
    context.add_init_script("""window.__shift = 0; new PerformanceObserver(list => { for (const e of list.getEntries())
        if (!e.hadRecentInput) window.__shift += e.value; }).observe({type: 'layout-shift', buffered: true});""")
    # (a review's questions still grow when review.js adds their answer boxes: not measured here)
    for name in ("moon.html", "index.html"):
        page = open_page(context, site, name)
        page.wait_for_load_state("networkidle")  # every script fetched and run, however slow the machine
        page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
        assert page.evaluate("() => window.__shift") < 0.01, name
