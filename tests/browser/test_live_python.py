"""Live Python the whole way in Chromium, on every test run, with the npm `pyodide` package self-hosted.

The live fixture course's widget is pure Python (its entry calls the course's own `tally` package and
declares no Pyodide package), so the npm runtime, which has no numpy, is all it needs: the worker
starts, boots the runtime, installs the course's wheel and runs the entry, and the live result replaces
the baked one. The numpy stage is checked too: asked for, it fails, and says it is missing from the site.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from helpers import WAIT_GUARD_MS, build_fixture_site, serving
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
FIGURE = "#widget-square"
READY = "Live result ready."


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return build_fixture_site("live", "tally", tmp_path_factory.mktemp("live"))


@pytest.fixture
def open_page(context_factory, page_and_watch):
    """Open a page with service workers blocked; return (page, watch, requested URLs, console warnings)."""
    watch_class = type(page_and_watch[1])

    def open_(url):
        context = context_factory(service_workers="block")
        requests, warnings = [], []
        context.on("request", lambda request: requests.append(request.url))
        page = context.new_page()
        watch = watch_class(page)
        page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
        page.goto(url)
        return page, watch, requests, warnings

    return open_


def count(requests, ending: str) -> int:
    return sum(url.endswith(ending) for url in requests)


def test_a_pure_python_widget_runs_live_the_whole_way_and_the_page_fetches_the_runtime_once(site, open_page):
    with serving(site) as base:
        page, watch, requests, _ = open_page(base + "square.html")
        expect(page.locator(f"{FIGURE}[data-widget-ready]")).to_have_count(1)
        assert not [url for url in requests if "/pyodide/" in url or "/py/" in url]
        status, source = page.locator(f"{FIGURE} [data-live-status]"), page.locator(f"{FIGURE} [data-widget-source]")
        page.locator(f"{FIGURE} [data-live-run]").click()
        expect(status).to_have_text(READY, timeout=WAIT_GUARD_MS)
        expect(source).to_have_text("Showing a live result, computed by Python in your browser.")
        expect(page.locator(f"{FIGURE} [data-out=text]")).to_have_text("3 squared is 9")
        page.locator(f"{FIGURE}-x").fill("7")  # a baked state: answered at once, without Python
        expect(page.locator(f"{FIGURE} [data-out=text]")).to_have_text("7 squared is 49")
        expect(source).to_have_text("Showing results computed when this page was built.")
        page.locator(f"{FIGURE} [data-live-run]").click()  # the same worker answers again
        expect(source).to_have_text("Showing a live result, computed by Python in your browser.")
        expect(status).to_have_text(READY)
        second = f"{FIGURE}-2"  # another widget on the page: the same worker, already booted
        page.locator(f"{second} [data-live-run]").click()
        expect(page.locator(f"{second} [data-live-status]")).to_have_text(READY)
        expect(page.locator(f"{second} [data-widget-source]")).to_have_text(
            "Showing a live result, computed by Python in your browser."
        )
        expect(page.locator(f"{second} [data-out=text]")).to_have_text("5 squared is 25")
        assert count(requests, "/pyodide/pyodide.asm.wasm") == 1
        assert count(requests, "/pyodide/python_stdlib.zip") == 1
        assert len([url for url in requests if "pyodide-worker" in url]) == 1
        assert count(requests, "/tally-0.1.0-py3-none-any.whl") == 1
        watch.assert_clean()


def test_a_failed_run_leaves_one_control_and_try_again_reuses_the_worker(site, open_page):
    with serving(site) as base:
        page, watch, requests, warnings = open_page(base + "square.html")
        expect(page.locator(f"{FIGURE}[data-widget-ready]")).to_have_count(1)
        status = page.locator(f"{FIGURE} [data-live-status]")
        box = page.locator(f"{FIGURE} input[type=number][name=x]")
        box.fill("2.5")  # off the baked grid: live Python answers, and the entry raises
        box.press("Enter")
        expect(status).to_have_text(re.compile(r"^Loading the Python runtime \(step 1 of 2\)…$"))  # 2 s or so
        expect(page.locator(f"{FIGURE} [data-live-progress]")).to_be_visible()
        expect(status).to_have_text(
            "Live Python is unavailable: the Python raised ValueError: 2.5 is not a whole number; "
            "the results shown are still the ones computed when the page was built.",
            timeout=WAIT_GUARD_MS,
        )
        expect(page.locator(f"{FIGURE} [data-live-run]")).to_be_hidden()
        expect(page.locator(f"{FIGURE} [data-live-retry]")).to_be_visible()
        detail = page.locator(f"{FIGURE} [data-live-detail]")
        expect(detail).to_be_visible()
        detail.locator("summary").click()
        expect(detail.locator("[data-live-reason]")).to_have_text("run: ValueError: 2.5 is not a whole number")
        assert any("run: ValueError: 2.5 is not a whole number" in text for text in warnings)
        assert box.input_value() == "3"  # the form shows what the figure shows
        page.locator(f"{FIGURE} [data-live-retry]").click()
        expect(status).to_have_text(READY)
        expect(page.locator(f"{FIGURE} [data-live-retry]")).to_be_hidden()
        expect(page.locator(f"{FIGURE} [data-live-run]")).to_be_visible()
        expect(detail).to_be_hidden()
        assert count(requests, "/pyodide/pyodide.asm.wasm") == 1
        assert len([url for url in requests if "pyodide-worker" in url]) == 1
        watch.assert_clean()


def test_one_view_that_fails_to_load_leaves_the_other_widgets_working(site, open_page):
    with serving(site) as base:
        page, watch, _, _ = open_page(base + "broken.html")
        expect(page.locator(f"{FIGURE}[data-widget-ready]")).to_have_count(1)
        page.locator(f"{FIGURE}-x").fill("6")
        expect(page.locator(f"{FIGURE} [data-out=text]")).to_have_text("6 squared is 36")
        expect(page.locator("#widget-broken [data-out=text]")).to_have_text("1 squared is 1")  # baked, still shown
        assert len(watch.errors) == 1 and watch.errors[0].startswith("widget-broken: its view could not be mounted")


PROBE = """async ({worker, indexURL, integrity, wheel, packages}) => {
    const w = new Worker(worker, {type: 'module'});
    const log = [];
    const next = () => new Promise(resolve => w.addEventListener('message', e => { log.push(e.data); resolve(e.data); }, {once: true}));
    const until = async (types) => { for (;;) { const m = await next(); if (types.includes(m.type)) return m; } };
    const boot = (packages) => w.postMessage({type: 'boot', indexURL, integrity, packages, wheel, module: 'tally'});
    boot(packages);
    const first = await until(['failed', 'ready']);
    const firstLog = log.splice(0);
    boot([]);
    const second = await until(['failed', 'ready']);
    const secondLog = log.splice(0);
    w.postMessage({type: 'run', id: 1, source: 'from tally import square\\ndef run(x):\\n    return square(x)\\n', params: {x: 5}});
    const ran = await until(['result', 'error']);
    w.terminate();
    return {first, firstLog, second, secondLog, ran};
}"""


def probe(page, base, packages=("numpy",)) -> dict:
    """Boot a worker of the page's own asking for `packages`, then for nothing more, then run an entry."""
    runtime = json.loads(page.locator("[data-widget-runtime]").text_content())
    return page.evaluate(
        PROBE,
        {
            "worker": base + runtime["worker"],
            "indexURL": base + "pyodide/",
            "integrity": runtime["integrity"],
            "wheel": base + runtime["wheel"],
            "packages": list(packages),
        },
    )


def test_a_package_wheel_that_differs_from_the_lock_file_fails_its_integrity_check(site, tmp_path, open_page):
    changed = shutil.copytree(site, tmp_path / "site")
    lock = json.loads((changed / "pyodide" / "pyodide-lock.json").read_text())
    wheel = lock["packages"]["numpy"]["file_name"]
    (changed / "pyodide" / wheel).write_bytes(b"not the numpy of the lock file")
    with serving(changed) as base:
        page, _watch, _, _ = open_page(base + "square.html")
        first = probe(page, base)["first"]
        assert (first["stage"], first["label"], first["cause"]) == ("package", "numpy", "integrity"), first
        assert f"/pyodide/{wheel} does not match its expected hash sha256-" in first["reason"]


@pytest.mark.parametrize("damage, cause", [("missing", "missing"), ("corrupt", "integrity")])
def test_a_bad_numpy_wheel_met_while_loading_ml_dtypes_is_numpy_s_failure(site, tmp_path, open_page, damage, cause):
    # ml-dtypes depends on numpy, so its stage fetches numpy's wheel too: the failure names the package whose file
    # failed (#42). The npm runtime ships neither wheel: ml-dtypes gets a stand-in that its lock entry's hash
    # matches, and numpy's is left out or written wrong.
    changed = shutil.copytree(site, tmp_path / "site")
    lock_file = changed / "pyodide" / "pyodide-lock.json"
    lock = json.loads(lock_file.read_text())
    stand_in = b"a stand-in for the ml-dtypes wheel"
    lock["packages"]["ml-dtypes"]["sha256"] = hashlib.sha256(stand_in).hexdigest()
    lock_file.write_text(json.dumps(lock))
    (changed / "pyodide" / lock["packages"]["ml-dtypes"]["file_name"]).write_bytes(stand_in)
    numpy = lock["packages"]["numpy"]["file_name"]
    if damage == "corrupt":
        (changed / "pyodide" / numpy).write_bytes(b"not the numpy of the lock file")
    with serving(changed) as base:
        page, _watch, _, _ = open_page(base + "square.html")
        first = probe(page, base, ["ml-dtypes"])["first"]
        assert (first["stage"], first["label"], first["cause"]) == ("package", "numpy", cause), first
        assert f"/pyodide/{numpy} " in first["reason"], first["reason"]


def test_the_numpy_stage_fails_as_missing_from_the_site_and_a_second_boot_resumes_there(site, open_page):
    with serving(site) as base:
        page, watch, requests, _ = open_page(base + "square.html")
        out = probe(page, base)
        first = out["first"]
        assert (first["type"], first["stage"], first["label"], first["cause"]) == (
            "failed",
            "package",
            "numpy",
            "missing",
        ), first
        assert re.search(r"/pyodide/numpy-[^ ]+\.whl answered HTTP 404", first["reason"]), first["reason"]
        assert [m["stage"] for m in out["firstLog"] if m["type"] == "progress"] == ["runtime", "package"]
        assert out["second"] == {"type": "ready"}
        assert [m.get("stage") for m in out["secondLog"]] == ["course", None]  # the runtime is not loaded again
        assert out["ran"] == {"type": "result", "id": 1, "json": '{"square": 25, "text": "5 squared is 25"}'}
        assert count(requests, "/pyodide/pyodide.asm.wasm") == 1
        watch.assert_clean()


def _corrupt_loader(site: Path) -> None:
    loader = site / "pyodide" / "pyodide.mjs"
    loader.write_bytes(loader.read_bytes() + b"\n// changed after the build\n")


def _remove(pattern: str):
    return lambda site: [path.unlink() for path in site.glob(pattern)]


@pytest.mark.parametrize(
    "damage, sentence, reason",
    [
        (
            _corrupt_loader,
            "the Python runtime failed its integrity check (the file is not the one this site was built with)",
            r"^runtime integrity: http://[^ ]+/pyodide/pyodide\.mjs does not match its SRI sha384-",
        ),
        (
            _remove("pyodide/python_stdlib.zip"),
            "the Python runtime is missing from this site",
            r"^runtime missing: http://[^ ]+/pyodide/python_stdlib\.zip answered HTTP 404",
        ),
        (
            _remove("py/*/tally-*.whl"),
            "the course's tally package is missing from this site",
            r"^course tally missing: http://[^ ]+/tally-0\.1\.0-py3-none-any\.whl answered HTTP 404",
        ),
        *(  # each runtime file the worker or Pyodide fetches is named when it is gone (#29)
            (
                _remove(f"pyodide/{name}"),
                "the Python runtime is missing from this site",
                rf"^runtime missing: http://[^ ]+/pyodide/{re.escape(name)} answered HTTP 404",
            )
            for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "pyodide-lock.json")
        ),
    ],
    ids=[
        "changed-loader",
        "missing-stdlib",
        "missing-wheel",
        "missing-loader",
        "missing-core",
        "missing-wasm",
        "missing-lock",
    ],
)
def test_each_stage_says_its_true_cause(site, tmp_path, open_page, damage, sentence, reason):
    broken = shutil.copytree(site, tmp_path / "site")
    damage(broken)
    with serving(broken) as base:
        page, watch, _, warnings = open_page(base + "square.html")
        expect(page.locator(f"{FIGURE}[data-widget-ready]")).to_have_count(1)
        page.locator(f"{FIGURE} [data-live-run]").click()
        status = page.locator(f"{FIGURE} [data-live-status]")
        expect(status).to_have_text(
            f"Live Python is unavailable: {sentence}; the results shown are still the ones "
            "computed when the page was built.",
            timeout=WAIT_GUARD_MS,
        )
        expect(page.locator(f"{FIGURE} [data-live-reason]")).to_have_text(re.compile(reason))
        assert any(re.search(reason.lstrip("^"), text) for text in warnings)
        expect(page.locator(f"{FIGURE} [data-out=text]")).to_have_text("3 squared is 9")
        assert not watch.foreign  # (the console has the browser's and Pyodide's own reports of the failed fetch)


def test_try_again_after_a_failed_stage_resumes_in_the_same_worker(site, tmp_path, open_page):
    broken = shutil.copytree(site, tmp_path / "site")
    _remove("py/*/tally-*.whl")(broken)
    with serving(broken) as base:
        page, watch, requests, _ = open_page(base + "square.html")
        expect(page.locator(f"{FIGURE}[data-widget-ready]")).to_have_count(1)
        page.locator(f"{FIGURE} [data-live-run]").click()
        status, retry = page.locator(f"{FIGURE} [data-live-status]"), page.locator(f"{FIGURE} [data-live-retry]")
        expect(retry).to_be_visible(timeout=WAIT_GUARD_MS)
        expect(page.locator(f"{FIGURE} [data-live-run]")).to_be_hidden()
        first = status.text_content()
        with page.context.expect_event("request", lambda request: request.url.endswith(".whl")):
            retry.click()  # the worker asks for the wheel again: the course stage is retried
        expect(retry).to_be_visible()
        expect(status).to_have_text(first)
        assert count(requests, "/pyodide/pyodide.mjs") == 1  # the runtime stage is not
        assert count(requests, "/pyodide/pyodide.asm.wasm") == 1
        assert len([url for url in requests if "pyodide-worker" in url]) == 1
        assert not watch.foreign


LOOP = "def run(x):\n    while True:\n        pass\n"


def runtime_files(requests) -> Counter:
    """How often each file of the runtime and each wheel was requested (by any worker of the page)."""
    return Counter(url.rsplit("/", 1)[1] for url in requests if "/pyodide/" in url or url.endswith(".whl"))


def test_a_run_that_times_out_replaces_the_worker_and_the_new_one_downloads_nothing_again(site, tmp_path, open_page):
    slow = shutil.copytree(site, tmp_path / "site")
    page_file = slow / "square.html"  # a shorter limit for runs than the page's 60 s, through the runtime JSON
    page_file.write_text(  # (for runs alone: the boot keeps its limit, which a loaded machine may need)
        page_file.read_text().replace("data-widget-runtime>{", 'data-widget-runtime>{"runTimeoutMs":15000,')
    )
    with serving(slow) as base:
        page, watch, requests, _ = open_page(base + "square.html")
        expect(page.locator(f"{FIGURE}[data-widget-ready]")).to_have_count(1)
        status = page.locator(f"{FIGURE} [data-live-status]")
        page.locator(f"{FIGURE} [data-live-run]").click()  # boot first, so that only the run is timed
        expect(status).to_have_text(READY, timeout=WAIT_GUARD_MS)
        first = runtime_files(requests)
        assert set(first) >= {
            "pyodide.mjs",
            "pyodide.asm.mjs",
            "pyodide.asm.wasm",
            "python_stdlib.zip",
            "pyodide-lock.json",
            "tally-0.1.0-py3-none-any.whl",
        }, first
        code = page.locator(f"{FIGURE} [data-widget-code]")
        code.evaluate(
            "(element, loop) => { element.dataset.kept = element.textContent; element.textContent = loop; }", LOOP
        )
        page.locator(f"{FIGURE} [data-live-run]").click()
        expect(status).to_have_text(
            "Live Python is unavailable: Python took too long to answer; the results shown "
            "are still from the last live run.",
            timeout=WAIT_GUARD_MS,
        )
        expect(page.locator(f"{FIGURE} [data-live-reason]")).to_have_text("timeout: no answer after 15 s")
        code.evaluate("element => { element.textContent = element.dataset.kept; }")
        source = page.locator(f"{FIGURE} [data-widget-source]")
        page.locator(f"{FIGURE}-x").fill("7")  # a baked state: the figure shows the baked answer again
        expect(source).to_have_text("Showing results computed when this page was built.")
        page.locator(f"{FIGURE} [data-live-retry]").click()  # a new worker: the old one was stopped mid-loop
        expect(status).to_have_text(READY, timeout=WAIT_GUARD_MS)
        expect(source).to_have_text("Showing a live result, computed by Python in your browser.")
        expect(page.locator(f"{FIGURE} [data-out=text]")).to_have_text("7 squared is 49")
        assert len([url for url in requests if "pyodide-worker" in url]) == 2
        once = runtime_files(requests)
        assert once == Counter(dict.fromkeys(first, 1)), once  # each file once in the page's life
        watch.assert_clean()
