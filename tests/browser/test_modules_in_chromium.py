"""Every page of the sample course loads its modules through its import map, with nothing the
Content-Security-Policy refuses (a refusal is a console error, which PageWatch collects)."""

from __future__ import annotations

import pytest
from helpers import serving
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def built(sample_course):
    return sample_course / "site"


def test_every_page_runs_its_modules_with_no_console_error_or_csp_violation(built, page_and_watch):
    page, watch = page_and_watch
    pages = ["index.html", "404.html"] + sorted(
        p.name for p in built.glob("*.html") if p.name not in ("index.html", "404.html")
    )
    with serving(built) as base:
        for name in pages:
            page.goto(base + name)
            expect(page.locator("[data-theme-toggle]")).to_be_visible()  # course.js ran (and imported constants.js)
            expect(page.locator("[data-search-open]")).to_be_visible()  # search.js ran (and imported dom.js)
            if name != "404.html":
                expect(page.locator("html")).to_have_attribute("data-review", "ready")  # review.js and its graph
            for figure in page.locator("[data-widget]").all():
                expect(figure).to_have_attribute("data-widget-ready", "true")  # widgets.js and the view
    watch.assert_clean()


def test_an_import_map_the_policy_does_not_allow_is_refused_and_seen(built, page_and_watch):
    # The control for the test above: an import map whose text differs from the hashed one by one
    # space is refused by the browser, review.js cannot resolve its modules, and the watch sees both.
    html = (built / "index.html").read_text(encoding="utf-8")
    changed = html.replace('<script type="importmap">{', '<script type="importmap"> {', 1)
    assert changed != html
    (built / "changed.html").write_text(changed, encoding="utf-8")
    page, watch = page_and_watch
    with serving(built) as base:
        page.goto(base + "changed.html")  # returns at "load": module scripts have been fetched or failed by then
    (built / "changed.html").unlink()
    assert any("Content Security Policy" in error and "inline" in error for error in watch.errors), watch.errors
    assert any('module specifier "coursegen/' in error for error in watch.errors), watch.errors
    expect(page.locator("[data-theme-toggle]")).to_be_hidden()  # course.js never ran


def test_the_browser_cuts_a_query_into_the_terms_the_build_indexed(built, page_and_watch):
    """search-index.js's terms() must give the words sections.py counted, or a query misses them."""
    from helpers import TRICKY_TEXTS as TRICKY

    from coursegen.features.search.sections import terms

    page, watch = page_and_watch
    with serving(built) as base:
        page.goto(base + "index.html")
        found = page.evaluate(
            """async (texts) => {
              const { terms } = await import("coursegen/search-index.js");
              return texts.map((text) => terms(text));
            }""",
            TRICKY,
        )
    assert found == [[t for t in terms(text) if len(t) <= 40] for text in TRICKY]
    watch.assert_clean()
