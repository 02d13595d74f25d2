"""Accessibility in Chromium: axe-core on every page type in both themes, keyboard-only walks through a
lesson with a widget and a review, and text contrast in the dark theme measured on a screenshot."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from colours import TEXT_COLOURS, contrast, luminance, unreadable
from helpers import REPO, copy_course, serving
from pages import open_page
from PIL import Image
from playwright.sync_api import expect

from coursegen.cli import main as cli_main

pytestmark = pytest.mark.browser
COURSE = Path(__file__).resolve().parent.parent / "features" / "hosting" / "course"
AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"
PAGE_TYPES = {
    "course map": "index.html",
    "lesson with a widget": "moon.html",
    "review": "recap.html",
    "not found": "404.html",
    "review session": "review-session.html",
}
FOCUSABLE = "a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex='-1'])"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The accessibility fixture course (tests/features/hosting/course), built once and served."""
    root = copy_course(COURSE, tmp_path_factory.mktemp("a11y") / "course")
    (root / "site").mkdir()
    with serving(root / "site") as base:
        # base_url is where the site is served, so the 404 page's <base> reaches its stylesheet.
        config = root / "course.yaml"
        config.write_text(re.sub(r"(?m)^base_url:.*$", f"base_url: {base}", config.read_text()))
        assert cli_main(["--root", str(root), "build"]) == 0
        yield base


def serious_violations(page) -> list[str]:
    """Run axe-core on the page as it is now; return its serious and critical violations."""
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("kind", PAGE_TYPES)
def test_axe_finds_no_serious_violation(kind, theme, site, context_factory):
    # axe is injected as a script, which the pages' own CSP would (rightly) refuse.
    page = open_page(context_factory(color_scheme=theme, bypass_csp=True), site, PAGE_TYPES[kind])
    assert page.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches") == (theme == "dark")
    assert serious_violations(page) == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_axe_finds_no_serious_violation_with_search_open_and_answers_shown(theme, site, context_factory):
    page = open_page(context_factory(color_scheme=theme, bypass_csp=True), site, "moon.html")
    recall = page.locator("section[data-kind=recall]")
    recall.locator("textarea").fill("The pull differs across the planet")
    recall.locator(".question-reveal").click()
    page.locator("section[data-kind=choice] .choice-option").first.click()
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
    page.keyboard.press("/")
    page.locator("[data-search] input").fill("moon")
    page.locator("[data-search-status]", has_text="for “moon”").wait_for()
    assert serious_violations(page) == []


@pytest.fixture(scope="module")
def numeric_site(tmp_path_factory):
    """The select-all and numeric fixture course (tests/fixtures/numeric), built once and served."""
    root = copy_course(REPO / "tests" / "fixtures" / "numeric", tmp_path_factory.mktemp("numeric") / "course")
    assert cli_main(["--root", str(root), "build"]) == 0
    with serving(root / "site") as base:
        yield base


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
def test_select_all_and_numeric_questions_pass_axe_fit_a_phone_and_have_24px_targets(
    width, theme, numeric_site, context_factory
):
    context = context_factory(viewport={"width": width, "height": 844}, color_scheme=theme, bypass_csp=True)
    page = open_page(context, numeric_site, "check-numbers.html")
    page.wait_for_selector("html[data-review=ready]")
    assert serious_violations(page) == []
    choice = page.locator("section[data-kind=choice]")
    choice.locator(".choice-option").first.click()
    choice.locator(".choice-check").click()
    water = page.locator("section[data-kind=numeric]").first
    water.locator("input").fill("12 kg")  # an unreadable unit: the message and aria-invalid are checked too
    water.locator(".question-reveal").click()
    page.locator("section[data-kind=numeric]").nth(1).locator("input").fill("20")
    page.locator("section[data-kind=numeric]").nth(1).locator(".question-reveal").click()
    assert serious_violations(page) == []
    small = page.evaluate("""() => [...document.querySelectorAll(
        'section[data-kind=numeric] :is(button, input), section[data-kind=choice] button')]
        .filter(el => el.checkVisibility())
        .map(el => [el.className, el.getBoundingClientRect()])
        .filter(([, box]) => box.width < 24 || box.height < 24).map(([name]) => name)""")
    assert small == []
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


def focus_ring(page) -> dict:
    """Describe the focused element and whether its focus is visible (outline or shadow)."""
    return page.evaluate("""() => {
        const el = document.activeElement, style = getComputedStyle(el);
        const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
        // the section being read moves as Tab scrolls the page: its mark is no part of a control's key
        const key = el.id || el.outerHTML.replace(' aria-current="location"', '').slice(0, 90);
        return {key, tag: el.tagName.toLowerCase(),
                visible: outline || style.boxShadow !== 'none', body: el === document.body};
    }""")


def tab_through(page, limit: int = 400) -> list[dict]:
    """Press Tab from the top of the page until focus comes round again; return each stop."""
    stops = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        ring = focus_ring(page)
        if ring["body"] or (stops and ring["key"] == stops[0]["key"]):
            break
        stops.append(ring)
    return stops


def reachable_controls(page) -> set[str]:
    """Return the keys of every focusable control a learner can see right now."""
    return set(
        page.evaluate(
            """selector => [...document.querySelectorAll(selector)]
        .filter(el => el.checkVisibility() && !el.closest('[inert], dialog:not([open])') && !el.disabled)
        .map(el => el.id || el.outerHTML.replace(' aria-current="location"', '').slice(0, 90))""",
            FOCUSABLE,
        )
    )


@pytest.mark.parametrize("name", ["moon.html", "recap.html"])
def test_tab_reaches_every_control_and_each_shows_a_visible_focus_ring(name, site, page_and_watch):
    page, watch = page_and_watch
    page.goto(site + name)
    page.wait_for_load_state("networkidle")
    stops = tab_through(page)
    assert stops[0]["tag"] == "a" and "Skip to the content" in stops[0]["key"]
    assert [s["key"] for s in stops if not s["visible"]] == []
    assert reachable_controls(page) <= {s["key"] for s in stops}
    watch.assert_clean()


def tab_to(page, selector: str, limit: int = 200) -> None:
    """Press Tab until the element matching `selector` has focus."""
    for _ in range(limit):
        if page.evaluate("selector => document.activeElement.matches(selector)", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


def test_a_keyboard_alone_drives_the_widget_and_answers_in_the_lesson(site, page_and_watch):
    page, watch = page_and_watch
    page.goto(site + "moon.html")
    page.wait_for_load_state("networkidle")
    verdict = page.locator("[data-widget] [aria-live=polite]").first
    before = verdict.inner_text()
    tab_to(page, "[data-widget] input[type=range]")
    for _ in range(8):
        page.keyboard.press("ArrowRight")
    expect(verdict).not_to_have_text(before)
    tab_to(page, "section[data-kind=choice] .choice-option")
    page.keyboard.press("Enter")
    page.locator("section[data-kind=choice] .choice-explanation").wait_for()
    page.keyboard.press("/")
    expect(page.locator("[data-search] input")).to_be_focused()
    page.keyboard.type("bulges")
    # The list of the whole word: each letter typed showed its own list first, and Tab into one of
    # those loses the focus when the next replaces it.
    page.locator('[data-search-results][data-query="bulges"] a').first.wait_for()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(page.locator("[data-search-results] a:focus")).to_have_count(1)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"moon\.html#"))
    watch.assert_clean()


def test_the_theme_toggle_works_from_the_keyboard_and_is_remembered(site, page_and_watch):
    page, watch = page_and_watch
    page.goto(site + "recap.html")
    tab_to(page, "[data-theme-toggle]")
    page.keyboard.press("Enter")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    page.goto(site + "index.html")
    # applied by the inline script before first paint, so no flash of the light theme
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    expect(page.locator("html")).to_have_css("background-color", "rgb(21, 23, 26)")
    watch.assert_clean()


def painted_contrast(png: bytes) -> float:
    """Return the contrast between a text element's background (its commonest colour) and its text
    (the pixel that differs most from it), as painted in a screenshot."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=image.width * image.height)
    background = max(colours)[1]
    return max(contrast(colour, background) for _, colour in colours)


TEXT_SAMPLES = (
    "h1",
    ".unit-kicker",
    ".unit-lede",
    ".toc a",
    ".unit-body p",
    ".unit-body th",
    ".unit-body td",
    ".callout-title",
    "figcaption",
    "pre.highlight",
    ".question-kind",
    "summary >> visible=true",
    "[data-widget] [aria-live=polite]",
    ".unit-nav-dir",
    ".site-footer p",
    ".search-open",
)


def test_dark_theme_text_meets_wcag_aa_contrast_in_a_screenshot(site, context_factory):
    page = open_page(context_factory(color_scheme="dark"), site, "moon.html")
    corner = Image.open(io.BytesIO(page.screenshot(clip={"x": 0, "y": 0, "width": 8, "height": 8})))
    assert luminance(corner.convert("RGB").getpixel((2, 2))) < 0.05, "the page is not painted dark"
    failures = []
    for selector in TEXT_SAMPLES:
        element = page.locator(selector).first
        element.scroll_into_view_if_needed()
        size = element.evaluate("el => [parseFloat(getComputedStyle(el).fontSize), getComputedStyle(el).fontWeight]")
        large = size[0] >= 24 or (size[0] >= 18.66 and int(size[1]) >= 700)
        ratio = painted_contrast(element.screenshot())
        if ratio < (3.0 if large else 4.5):
            failures.append(f"{selector}: {ratio:.2f}")
    assert failures == []


@pytest.mark.parametrize("name", ["moon.html", "recap.html", "index.html"])
def test_at_360_px_the_page_never_scrolls_sideways_but_diagrams_and_tables_do(name, site, context_factory):
    page = open_page(context_factory(viewport={"width": 360, "height": 740}), site, name)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    wide = page.evaluate("""() => [...document.querySelectorAll('pre, table')]
        .filter(el => el.scrollWidth > el.clientWidth)
        .map(el => [el.tagName, getComputedStyle(el).overflowX])""")
    assert all(overflow == "auto" for _, overflow in wide), wide
    if name == "moon.html":
        assert wide, "the fixture's diagram is wider than 360 px and must scroll inside its box"
        controls = page.locator("[data-widget] .widget-control").all()
        boxes = [c.bounding_box() for c in controls]
        assert all(box["x"] >= 0 and box["x"] + box["width"] <= 360 for box in boxes)


def test_print_shows_every_answer_link_targets_and_no_controls(site, context_factory):
    page = open_page(context_factory(), site, "moon.html")
    page.emulate_media(media="print")
    hidden = page.evaluate("""() => ({
        answers: [...document.querySelectorAll('details .question-answer-body, details.widget-code > p')]
            .map(el => el.checkVisibility()),
        header: document.querySelector('.site-header').checkVisibility(),
        options: [...document.querySelectorAll('.choice-option')].map(el => el.checkVisibility()),
        sliders: [...document.querySelectorAll('[data-widget] input[type=range]')].some(el => el.checkVisibility()),
        buttons: [...document.querySelectorAll('[data-widget] button')].some(el => el.checkVisibility()),
        result: document.querySelector('[data-widget-result]').checkVisibility(),
        external: [...document.querySelectorAll('.unit-body a[href^="http"]')]
            .map(a => [a.getAttribute('href'), getComputedStyle(a, '::after').content]),
        relative: [...document.querySelectorAll('.unit-body a[href$=".html"], .unit-body a[href*=".html#"]')]
            .map(a => getComputedStyle(a, '::after').content),
    })""")
    assert hidden["answers"] and all(hidden["answers"]), hidden
    assert not hidden["header"] and not hidden["sliders"] and not hidden["buttons"] and hidden["result"]
    assert hidden["options"] and all(hidden["options"]), "a choice question prints its options"
    # A link that leaves the site prints its address; a link inside the site prints its text only.
    assert all(href in content for href, content in hidden["external"]), hidden["external"]
    assert all(content in ("none", "normal") for content in hidden["relative"]), hidden["relative"]


@pytest.mark.parametrize("motion", ["reduce", "no-preference"])
def test_only_learners_who_accept_motion_see_the_search_dialog_animate(motion, site, context_factory):
    page = open_page(context_factory(reduced_motion=motion), site, "moon.html")
    page.keyboard.press("/")
    moving = page.evaluate("""() => [...document.querySelectorAll('*')].filter(el => {
        const style = getComputedStyle(el);
        const seconds = (list) => list.split(',').some(t => parseFloat(t) > 0.01);
        return style.animationName !== 'none' || seconds(style.transitionDuration)
            || style.scrollBehavior === 'smooth';
    }).map(el => el.tagName.toLowerCase() + '.' + el.className)""")
    assert moving == ([] if motion == "reduce" else ["dialog.search"])


@pytest.mark.parametrize(
    ("scheme", "chosen"),
    [("dark", None), ("light", "dark"), ("light", None), ("dark", "light")],
    ids=["os-dark", "toggled-dark", "os-light", "toggled-light"],
)
def test_every_token_of_highlighted_code_is_readable_in_either_scheme_however_it_was_chosen(
    scheme, chosen, site, context_factory
):
    # The OS's dark scheme with no choice on the site once painted light code colours on the dark page.
    context = context_factory(color_scheme=scheme)
    if chosen:
        context.add_init_script(f"localStorage.setItem('coursegen:theme', '{chosen}')")
    page = open_page(context, site, "moon.html")
    colours = page.locator("pre.highlight").evaluate_all(TEXT_COLOURS)
    assert len(colours) >= 3  # print, the brackets, the string
    assert unreadable(colours) == []


SAMPLE_PAGES = ["k3-at-a-glance.html", "kda.html", "sequence-axis.html", "depth-axis.html", "review-a.html"]


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
def test_axe_finds_no_serious_violation_on_the_sample_course_s_lessons(width, theme, sample_site, context_factory):
    # Display math, the memory table and the chunk timeline scroll inside their boxes on a phone; each
    # such box must be reachable by keyboard. The exercise's editor is loaded (by focusing its text box).
    context = context_factory(
        viewport={"width": width, "height": 844}, color_scheme=theme, bypass_csp=True, service_workers="block"
    )
    found = {}
    for name in SAMPLE_PAGES:
        page = open_page(context, sample_site, name)
        if name == "kda.html":
            page.locator(".exercise-code").first.focus()
            page.locator(".exercise-code-editor").first.wait_for()
        found[name] = serious_violations(page)
        page.close()
    assert found == {name: [] for name in SAMPLE_PAGES}
