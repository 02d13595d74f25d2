"""Deep links on a wide screen: every kind of link to a section lands with its target at the top of the window,
even though widgets, code cells and questions grow above the target after the browser scrolled to it."""

from __future__ import annotations

import pytest
from pages import open_page

pytestmark = pytest.mark.browser
DESKTOP = {"width": 1280, "height": 800}
SETTLED = """() => [...document.querySelectorAll('[data-widget]')].every(f => f.dataset.widgetReady)"""
TOP_OF = """id => {
  const target = document.getElementById(decodeURIComponent(id));
  const padding = parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop) || 0;
  return target.getBoundingClientRect().top - padding;
}"""


@pytest.fixture(scope="module")
def site(sample_site):
    """The sample course's site, built once for the session and served (conftest.sample_site)."""
    return sample_site


def landing(page) -> float:
    """Return how far below the top of the window (less its scroll padding) the URL's target sits, once settled."""
    page.wait_for_load_state("networkidle")
    page.wait_for_function(SETTLED)
    page.evaluate("() => document.fonts.ready")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return page.evaluate(TOP_OF, page.url.split("#", 1)[1])


@pytest.fixture
def wide(context_factory):
    return context_factory(viewport=DESKTOP, service_workers="block")


def test_a_link_from_one_lesson_to_a_section_of_another_lands_on_it(site, wide):
    page = open_page(wide, site, "kda.html")
    page.locator('.unit-body a[href="sequence-axis.html#bounded-decay"]').first.click()
    assert abs(landing(page)) <= 4


@pytest.mark.parametrize("href", ["sequence-axis.html#gated-mla", "sequence-axis.html#why-order-survives"])
def test_a_review_s_revisit_link_lands_on_its_section(href, site, wide):
    review = open_page(wide, site, "review-a.html")
    assert review.locator(f'a[href="{href}"]').count()  # the review really links there
    page = wide.new_page()
    page.goto(site + href)
    assert abs(landing(page)) <= 4


@pytest.mark.parametrize("question", ["q-why-a-decay-floor", "q-why-keep-global-layers"])
def test_a_link_to_a_review_s_question_lands_on_it(question, site, wide):
    # the map's due list and the tally link to questions this way
    page = wide.new_page()
    page.goto(f"{site}review-a.html#{question}")
    assert abs(landing(page)) <= 4


def test_a_search_result_lands_on_its_section(site, wide):
    page = open_page(wide, site, "index.html")
    page.keyboard.press("/")
    page.keyboard.type("Gated MLA")
    hit = page.locator('[data-search-results] a[href*="sequence-axis.html#"]').first
    hit.wait_for()
    hit.click()
    page.wait_for_url("**/sequence-axis.html#*")
    assert abs(landing(page)) <= 4


NO_ANCHORING = """document.addEventListener('DOMContentLoaded', () => {
  const style = document.createElement('style');
  style.textContent = '* { overflow-anchor: none !important; }';
  document.head.append(style);
});"""


@pytest.mark.parametrize("href", ["sequence-axis.html#gated-mla", "review-a.html#q-why-keep-global-layers"])
def test_a_deep_link_lands_in_a_browser_that_does_not_anchor_the_scroll(href, site, context_factory):
    # Safari keeps no scroll anchor: the page's own script holds the target while what is above it grows.
    context = context_factory(viewport=DESKTOP, service_workers="block", bypass_csp=True)
    context.add_init_script(NO_ANCHORING)
    page = context.new_page()
    page.goto(site + href)
    assert abs(landing(page)) <= 4
    landed = page.evaluate("() => window.scrollY")  # read before the wheel: a fast scroll may be over when it returns
    page.mouse.move(640, 400)
    page.mouse.wheel(0, -300)  # the reader scrolls: from now on the page leaves the scroll to the reader
    page.wait_for_function(f"() => window.scrollY < {landed}")
    page.evaluate("""() => { const block = document.createElement('div'); block.style.height = '1500px';
        document.querySelector('.unit-body').prepend(block); }""")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert abs(page.evaluate(TOP_OF, href.split("#", 1)[1])) > 1000  # not pulled back to the link's target
