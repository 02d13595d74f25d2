"""A learner uses the widgets in Chromium: baked answers without Python, live Python only on request.

The site is the widget fixture course, self-hosting the npm `pyodide` package, which has the
runtime but no numpy wheel: the build warns, and the page says live Python is not available on this
site instead of trying (tests/browser/test_live_python.py runs live Python the whole way on a
pure-Python widget). Set COURSEGEN_PYODIDE_DIST to a complete Pyodide distribution to run the
live-parity test as well.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import (
    FIXTURES,
    WAIT_GUARD_MS,
    copy_course,
    link_pyodide,
    require_complete_pyodide,
    run_cli,
    serving,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
SLIDER = "#widget-overflow-slider"
PYODIDE_FILES = re.compile(r"/pyodide/|/py/|pyodide-worker")


def build(root: Path, capsys, *options, **pyodide) -> Path:
    """Build a copy of the widget course (with other pyodide settings if given); return its site."""
    course = copy_course(FIXTURES / "widgets", root)
    if pyodide:
        text = (course / "course.yaml").read_text().split("pyodide:")[0]
        settings = "".join(f"\n  {key}: {value}" for key, value in pyodide.items())
        (course / "course.yaml").write_text(
            text + "pyodide:" + settings + "\nunits:\n  - slug: gauges\n  - slug: plain\n"
        )
    status, _, err = run_cli(capsys, "--root", course, "build", *options)
    assert status == 0, err
    return course / "site"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return build(tmp_path_factory.mktemp("widgets") / "course", _NoCapture())


class _NoCapture:
    """Stands in for pytest's capsys in a module-scoped fixture, where capsys is not available."""

    def readouterr(self):
        return type("Captured", (), {"out": "", "err": ""})()


@pytest.fixture
def open_page(context_factory, page_and_watch):
    """Open gauges.html with service workers blocked; return (page, watch)."""
    watch_class = type(page_and_watch[1])  # conftest's PageWatch, not imported by a module name that clashes

    def open_(base, requests=None, **options):
        context = context_factory(service_workers="block", **options)
        if requests is not None:
            context.on("request", lambda request: requests.append(request.url))
        page = context.new_page()
        watch = watch_class(page)
        page.goto(base + "gauges.html")
        return page, watch

    return open_


def verdict(page) -> str:
    return page.locator(f"{SLIDER} [data-out=verdict]").text_content()


def test_without_javascript_the_default_results_are_visible(site, open_page):
    with serving(site) as base:
        page, watch = open_page(base, java_script_enabled=False)
        assert page.locator(f"{SLIDER} [data-out=verdict]").is_visible()
        assert verdict(page).startswith("fits: 80 nats")
        assert page.get_by_text("5 × 16 = 80 nats").is_visible()
        assert page.locator(f"{SLIDER} svg rect.is-finite").count() == 16
        assert page.locator("#widget-kda-chunkwise .kda-chunkwise-timeline li").count() == 2
        assert page.locator("[data-widget-controls]").first.is_hidden()
        assert page.locator("[data-widget-live]").first.is_hidden()
        watch.assert_clean()


def test_sliders_answer_from_baked_states_by_keyboard_without_fetching_python(site, open_page):
    requests = []
    with serving(site) as base:
        page, watch = open_page(base, requests)
        page.wait_for_selector(f"{SLIDER}[data-widget-ready]")
        floor, tile = page.locator(f"{SLIDER}-g_min"), page.locator(f"{SLIDER}-tile")
        floor.focus()
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        assert verdict(page).startswith("overflows: 96 nats")
        assert page.locator(f"{SLIDER} [data-out=verdict]").get_attribute("data-fits") == "no"
        assert page.locator(f"{SLIDER} input[type=number][name=g_min]").input_value() == "-6"
        assert page.locator(f"{SLIDER} svg rect.is-overflow").count() == 2
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert verdict(page).startswith("fits: 80 nats")
        tile.focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert verdict(page).startswith("overflows: 120 nats")
        assert page.locator(f"{SLIDER} [data-out=product_text]").text_content() == "5 × 24 = 120 nats"
        assert page.locator(f"{SLIDER} svg rect").count() == 24
        page.select_option("#widget-kda-chunkwise-gate", "unbounded")
        assert "inf or NaN" in page.locator("#widget-kda-chunkwise [data-out=tiles_text]").text_content()
        assert page.locator(f"{SLIDER} [data-out=verdict]").get_attribute("aria-live") == "polite"
        assert not [url for url in requests if PYODIDE_FILES.search(url)]
        watch.assert_clean()


UNAVAILABLE = (
    "Live Python is not available on this site: its copy of Pyodide lacks ml-dtypes and numpy; "
    "the results shown are the ones computed when the page was built."
)


def test_live_python_says_it_is_not_available_when_the_site_lacks_numpy_instead_of_trying(site, open_page):
    requests = []
    with serving(site) as base:
        page, watch = open_page(base, requests)
        page.wait_for_selector(f"{SLIDER}[data-widget-ready]")
        status = page.locator(f"{SLIDER} [data-live-status]")
        expect(status).to_have_text(UNAVAILABLE)
        expect(page.locator(f"{SLIDER} [data-live-run]")).to_be_hidden()
        expect(page.locator(f"{SLIDER} [data-live-retry]")).to_be_hidden()
        reason = page.locator(f"{SLIDER} [data-live-reason]")
        page.locator(f"{SLIDER} [data-live-detail] summary").click()
        expect(reason).to_have_text(re.compile(r"^ml-dtypes: ml_dtypes-.*\.whl is not in the distribution; numpy: "))
        assert verdict(page).startswith("fits: 80 nats")  # the baked result stays
        page.locator(f"{SLIDER}-tile").focus()
        page.keyboard.press("ArrowRight")
        assert verdict(page).startswith("fits: 80 nats") is False  # and the sliders still answer
        expect(status).to_have_text(UNAVAILABLE)  # and it still says so
        assert not [url for url in requests if PYODIDE_FILES.search(url)]
        watch.assert_clean()


def test_a_value_off_the_baked_grid_says_live_python_is_not_available_and_restores_the_controls(site, open_page):
    requests = []
    with serving(site) as base:
        page, watch = open_page(base, requests)
        page.wait_for_selector(f"{SLIDER}[data-widget-ready]")
        box = page.locator(f"{SLIDER} input[type=number][name=g_min]")
        box.fill("-5.25")
        box.press("Enter")
        expect(page.locator(f"{SLIDER} [data-live-status]")).to_have_text(UNAVAILABLE)
        expect(box).to_have_value("-5")
        assert page.locator(f"{SLIDER}-g_min").input_value() == "-5"
        assert verdict(page).startswith("fits: 80 nats")
        assert not [url for url in requests if PYODIDE_FILES.search(url)]
        watch.assert_clean()


def test_a_blocked_cdn_fails_plainly_and_keeps_the_baked_results(tmp_path, open_page, capsys):
    site = build(tmp_path / "cdn", capsys, source="cdn")
    with serving(site) as base:
        page, watch = open_page(base)
        page.wait_for_selector(f"{SLIDER}[data-widget-ready]")
        page.locator(f"{SLIDER} [data-live-run]").click()
        page.wait_for_selector(f"{SLIDER} [data-live-retry]:not([hidden])", timeout=WAIT_GUARD_MS)
        assert (
            page.locator(f"{SLIDER} [data-live-status]")
            .text_content()
            .startswith(
                "Live Python is unavailable: the Python runtime could not be reached (you may be offline, "
                "or its server is blocked)"
            )
        )
        assert (
            page.locator(f"{SLIDER} [data-live-status]")
            .get_attribute("data-reason")
            .startswith(
                "runtime unreachable: https://cdn.jsdelivr.net/pyodide/v314.0.7/full/pyodide.mjs could not be reached"
            )
        )
        assert set(watch.foreign) == {"https://cdn.jsdelivr.net/pyodide/v314.0.7/full/pyodide.mjs"}
        assert not watch.errors and verdict(page).startswith("fits: 80 nats")


def test_live_results_equal_the_baked_ones(tmp_path, open_page, capsys):
    course = copy_course(FIXTURES / "widgets", tmp_path / "live")
    text = (course / "course.yaml").read_text().split("pyodide:")[0]
    (course / "course.yaml").write_text(
        text + f"pyodide:\n  source: local\n  path: {link_pyodide(course)}\nunits:\n  - slug: gauges\n  - slug: plain\n"
    )
    status, _, err = run_cli(capsys, "--root", course, "build", "--strict")
    require_complete_pyodide(status, err, ["numpy", "ml-dtypes"])  # skips here without a complete Pyodide
    site = course / "site"
    with serving(site) as base:
        page, watch = open_page(base)
        page.wait_for_selector("[data-widget-ready]")
        for figure in ("#widget-overflow-slider", "#widget-kda-chunkwise"):
            live = run_live(page, figure)
            baked = baked_result(page, figure)
            for key, value in baked.items():
                assert live[key] == (
                    pytest.approx(value, rel=1e-9, abs=1e-12) if isinstance(value, float) else value
                ), key
            if figure.endswith("kda-chunkwise"):
                assert live["recurrent_ms"] > 0 and "In this browser" in live["measured_text"]
        watch.assert_clean()


def run_live(page, figure: str) -> dict:
    """Click 'Run live in Python' in `figure` and return the live result it draws; fail with the reason
    the page gives as soon as live Python fails."""
    page.evaluate(
        """figure => { const element = document.querySelector(figure);
        element.addEventListener('widget:result', event => { if (event.detail.how !== 'live') return;
            window.liveResult = event.detail.result; element.dataset.liveDone = 'yes'; }); }""",
        figure,
    )
    page.locator(f"{figure} [data-live-run]").click()
    failed = page.locator(f"{figure} [data-live-retry]:not([hidden])")
    expect(page.locator(f"{figure}[data-live-done]").or_(failed)).to_have_count(1, timeout=180000)
    if failed.count():
        status = page.locator(f"{figure} [data-live-status]")
        pytest.fail(f"{figure}: {status.text_content()} ({status.get_attribute('data-reason')})")
    return page.evaluate("() => window.liveResult")


def baked_result(page, figure: str) -> dict:
    """Return the baked result for the figure's page parameters."""
    params = json.loads(page.locator(figure).get_attribute("data-params"))
    data = json.loads(page.locator(f"{figure} [data-widget-states]").text_content())
    count = len(next(iter(data["params"].values())))
    for i in range(count):
        if all(column[i] == params[name] for name, column in data["params"].items()):
            return {**data["const"], **{key: column[i] for key, column in data["outputs"].items()}}
    raise AssertionError(f"no baked state for {params}")


WORKER_PROBE = """async ({worker, indexURL, integrity}) => {
    const w = new Worker(worker, {type: 'module'});
    const next = () => new Promise(resolve => w.addEventListener('message', e => resolve(e.data), {once: true}));
    const until = async (types) => { for (;;) { const m = await next(); if (types.includes(m.type)) return m; } };
    w.postMessage({type: 'boot', indexURL, integrity, packages: ['numpy', 'ml-dtypes'], wheel: indexURL + 'none.whl', module: 'kernels'});
    const booted = await until(['failed', 'ready']);
    const source = 'def run(n, word):\\n    return {"twice": [n * 2], "word": word.upper()}\\n';
    w.postMessage({type: 'run', id: 7, source, params: {n: 21, word: 'tile'}});
    const good = await until(['result', 'error']);
    w.postMessage({type: 'run', id: 8, source: 'def run(n):\\n    raise ValueError("too big")\\n', params: {n: 1}});
    const bad = await until(['result', 'error']);
    w.terminate();
    return {booted, good, bad};
}"""


def test_the_worker_runs_an_entry_with_its_parameters_and_reports_python_errors(site, open_page):
    # Without numpy the boot stops at its second stage (the file is missing from the site), but the runtime is up: enough to check how
    # an entry is run. (The kernels themselves run live only in the parity test above.)
    with serving(site) as base:
        page, watch = open_page(base)
        settings = json.loads(page.locator("[data-widget-runtime]").text_content())
        out = page.evaluate(
            WORKER_PROBE,
            {"worker": base + settings["worker"], "indexURL": base + "pyodide/", "integrity": settings["integrity"]},
        )
        booted = out["booted"]
        assert (booted["type"], booted["stage"], booted["cause"]) == ("failed", "package", "missing"), booted
        assert out["good"] == {"type": "result", "id": 7, "json": '{"twice": [42], "word": "TILE"}'}
        assert out["bad"] == {"type": "error", "id": 8, "message": "ValueError: too big"}
        watch.assert_clean()


def test_controls_only_live_python_can_answer_say_so_before_any_move(site, open_page):
    # The chunkwise demo bakes every chunk size and gate, but one T, g_min and seed: moving those once
    # snapped back with a message. Each now says up front that other values need live Python, and on
    # this site, whose Pyodide lacks numpy, they do not move at all.
    with serving(site) as base:
        page, watch = open_page(base)
        figure = page.locator("#widget-kda-chunkwise")
        figure.and_(page.locator("[data-widget-ready]")).wait_for()
        for name in ("T", "g_min", "seed"):
            control = figure.locator(f".widget-control:has([name={name}])")
            note = control.locator(".widget-live-note")
            expect(note).to_be_visible()
            expect(note).to_contain_text("other values need live Python")
            for field in control.locator(f"[name={name}]").all():
                expect(field).to_have_attribute("aria-describedby", note.get_attribute("id"))
                expect(field).to_be_disabled()
        for name in ("chunk_size", "gate"):
            control = figure.locator(f".widget-control:has([name={name}])")
            expect(control.locator(".widget-live-note")).to_have_count(0)
            expect(control.locator(f"[name={name}]")).to_be_enabled()
        watch.assert_clean()
