"""A widget with only spec.yaml and widget.py in Chromium: the theme's generic view, baked and live.

The fixture course's widget (tests/fixtures/python-widget) returns each kind of value the theme shows;
its entry and the course's `shapes` package are pure Python, so live Python runs whole on the npm
`pyodide` package. (Its figure states are baked only: drawing one live needs Pyodide's matplotlib, which
the npm package lacks; tests/features/widgets/test_python_only_widget.py checks the baked SVG.)
"""

from __future__ import annotations

import pytest
from helpers import WAIT_GUARD_MS, build_fixture_site, serving
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
FIGURE = "#widget-every-return"
PYODIDE_FILES = ("/pyodide/", "/py/", "pyodide-worker", "widget-present")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return build_fixture_site("python-widget", "shapes", tmp_path_factory.mktemp("python-widget"))


@pytest.fixture
def open_page(context_factory, page_and_watch):
    """Open returns.html with service workers blocked; return (page, watch, requested URLs)."""
    watch_class = type(page_and_watch[1])

    def open_(base, **options):
        context = context_factory(service_workers="block", **options)
        requests: list[str] = []
        context.on("request", lambda request: requests.append(request.url))
        page = context.new_page()
        watch = watch_class(page)
        page.goto(base + "returns.html")
        return page, watch, requests

    return open_


def rows(page) -> list[str]:
    return page.locator(f"{FIGURE} [data-widget-result] tbody tr").all_text_contents()


def test_without_javascript_each_figure_shows_its_baked_result_and_no_controls(site, open_page):
    with serving(site) as base:
        page, watch, _ = open_page(base, java_script_enabled=False)
        assert rows(page) == ["1 squared1", "2 squared4"]
        expect(page.locator(f"{FIGURE}-2 .widget-text")).to_have_text("1 squared is 1\n2 squared is 4\n3 squared is 9")
        expect(page.locator(f"{FIGURE} [data-widget-controls]")).to_be_hidden()
        expect(page.locator(f"{FIGURE} [data-widget-live]")).to_be_hidden()
        watch.assert_clean()


def test_the_generic_view_draws_controls_from_the_spec_and_switches_baked_answers_by_keyboard(site, open_page):
    with serving(site) as base:
        page, watch, requests = open_page(base)
        expect(page.locator(f"{FIGURE}[data-widget-ready]")).to_have_count(1)
        shape, n = page.locator(f"{FIGURE}-shape"), page.locator(f"{FIGURE}-n")
        assert shape.locator("option").all_text_contents() == ["text", "table", "grid", "html", "figure"]
        assert (n.get_attribute("min"), n.get_attribute("max"), n.get_attribute("step")) == ("1", "4", "1")
        n.focus()
        page.keyboard.press("ArrowRight")
        assert rows(page) == ["1 squared1", "2 squared4", "3 squared9"]
        shape.focus()
        page.keyboard.press("ArrowDown")  # table → grid: a table with a header row
        expect(page.locator(f"{FIGURE} thead th")).to_have_text(["", "square", "half", "even"])
        assert rows(page)[2] == "row 391.5False"
        page.keyboard.press("ArrowDown")  # → html
        expect(page.locator(f"{FIGURE} .widget-html strong")).to_have_text("9")
        page.keyboard.press("ArrowDown")  # → figure: the baked SVG
        expect(page.locator(f"{FIGURE} .widget-figure svg[role=img]")).to_have_attribute(
            "aria-label", "Squares of 1 to 3"
        )
        page.keyboard.press("ArrowUp")
        page.keyboard.press("ArrowUp")
        page.keyboard.press("ArrowUp")
        page.keyboard.press("ArrowUp")  # → text
        expect(page.locator(f"{FIGURE} .widget-text")).to_have_text("1 squared is 1\n2 squared is 4\n3 squared is 9")
        assert page.locator(f"{FIGURE} [data-widget-result]").get_attribute("aria-live") == "polite"
        assert not [url for url in requests if any(part in url for part in PYODIDE_FILES)]
        watch.assert_clean()


def test_a_live_run_wraps_run_in_present_py_and_draws_the_same_record(site, open_page):
    with serving(site) as base:
        page, watch, requests = open_page(base)
        expect(page.locator(f"{FIGURE}[data-widget-ready]")).to_have_count(1)
        page.select_option(f"{FIGURE}-shape", "html")
        page.locator(f"{FIGURE} [data-live-run]").click()
        expect(page.locator(f"{FIGURE} [data-live-status]")).to_have_text("Live result ready.", timeout=WAIT_GUARD_MS)
        expect(page.locator(f"{FIGURE} [data-widget-source]")).to_have_text(
            "Showing a live result, computed by Python in your browser."
        )
        expect(page.locator(f"{FIGURE} .widget-html strong")).to_have_text("4")
        page.select_option(f"{FIGURE}-shape", "grid")  # baked again
        page.locator(f"{FIGURE} [data-live-run]").click()  # and live: the same table, drawn from Pyodide's record
        expect(page.locator(f"{FIGURE} [data-widget-source]")).to_have_text(
            "Showing a live result, computed by Python in your browser."
        )
        expect(page.locator(f"{FIGURE} thead th")).to_have_text(["", "square", "half", "even"])
        assert rows(page) == ["row 110.5False", "row 241.0True"]
        assert sum("widget-present" in url for url in requests) == 1  # fetched once for the page
        watch.assert_clean()
