"""Widget figures for the Sequence-axis lesson in headless Chromium, each beside a peer from the same run.

Run from the repository root:  python benchmarks/widgets.py [--course DIR] [--page sequence-axis.html]
                                                            [--peer kda.html] [--moves 200] [--no-live]

It copies the course, builds it with Pyodide self-hosted (the npm package, or --pyodide DIR) and
serves it on 127.0.0.1. Printed: bytes and requests before any interaction (raw and gzip -6, the
way a static host would compress them), against a lesson without widgets; navigation → first
contentful paint and → widgets mounted; slider input → verdict updated, p50/p95 over --moves
moves, against a no-op input listener; then, with --live (default), the time of each live-Python
stage in --figure (the runtime, each Pyodide package, the course's package, the first run), or the
stage that failed and why, or that the site has no live Python (the npm package has no numpy wheel:
there, time the stages on the pure-Python test course instead:
  python benchmarks/widgets.py --course tests/fixtures/live --page square.html --peer broken.html
                               --figure '#widget-square' --moves 0).
Targets from issue 4: no Pyodide bytes before interaction, HTML + CSS + JS under 60 KB compressed,
first result under 100 ms, p95 under 16 ms.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]
from helpers import copy_course, serving  # noqa: E402

from coursegen.pipeline import build_site  # noqa: E402
from coursegen.stages.write import write_site  # noqa: E402

PYODIDE_PATHS = ("/pyodide/", "/py/", "pyodide-worker")
MOVES_JS = """async ({figure, moves}) => {
  const root = document.querySelector(figure);
  const slider = root.querySelector('input[type=range][name=g_min]');
  const verdict = root.querySelector('[data-out=verdict]');
  const peer = Object.assign(document.createElement('input'), {type: 'range', min: 0, max: 100});
  peer.addEventListener('input', () => {});
  document.body.append(peer);
  const ours = [], noop = [];
  for (let i = 0; i < moves; i++) {
    const before = verdict.textContent;
    slider.value = String(-1 - ((i * 7) % 19) * 0.5);
    let start = performance.now();
    slider.dispatchEvent(new Event('input', {bubbles: true}));
    ours.push(performance.now() - start);
    if (verdict.textContent === before) throw new Error('the verdict did not change');
    start = performance.now();
    peer.dispatchEvent(new Event('input', {bubbles: true}));
    noop.push(performance.now() - start);
  }
  peer.remove();
  return {ours, noop};
}"""
STATUS_JS = """figure => {
  const root = document.querySelector(figure);
  window.statusLog = [];
  const status = root.querySelector('[data-live-status]');
  new MutationObserver(() => window.statusLog.push([performance.now(), status.textContent]))
    .observe(status, {childList: true, characterData: true, subtree: true});
  root.querySelector('[data-live-run]').click();
  return performance.now();
}"""


def build(course: Path, out: Path, pyodide: str) -> Path:
    """Copy the course, make it self-host Pyodide from `pyodide`, build it into `out`."""
    copy = copy_course(course, out / "course")
    for package in course.iterdir():  # the course's own Python package, when it is not kernels/
        if (package / "__init__.py").is_file() and not (copy / package.name).exists():
            shutil.copytree(package, copy / package.name)
    config = (copy / "course.yaml").read_text()
    if "\npyodide:" not in config:  # course.yaml names only folders inside the course: link the copy in
        (copy / "pyodide-dist").symlink_to(Path(pyodide).resolve())
        config += "\npyodide:\n  source: local\n  path: pyodide-dist\n"
    (copy / "course.yaml").write_text(config)
    write_site(build_site(copy).outputs, copy / "site")
    return copy / "site"


def percentile(values, share):
    """Return the value below which `share` of the sorted values lie."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def load(context, url):
    """Open `url`; return (page, [(url, raw bytes, gzip bytes)]) for everything it fetched."""
    fetched = []
    page = context.new_page()
    page.on(
        "response",
        lambda r: (
            fetched.append((r.url, len(b := r.body()), len(gzip.compress(b, 6))))
            if r.ok and r.request.method == "GET"
            else None
        ),
    )
    page.goto(url, wait_until="networkidle")
    return page, fetched


def report_bytes(label, fetched):
    """Print requests and bytes (raw and gzip) with the largest files; return the gzip total."""
    raw, packed = sum(f[1] for f in fetched), sum(f[2] for f in fetched)
    python = [f[0] for f in fetched if any(p in f[0] for p in PYODIDE_PATHS)]
    print(
        f"  {label:<34} {len(fetched):3d} requests  {raw / 1024:7.1f} KB raw  {packed / 1024:6.1f} KB gzip"
        f"  Pyodide files: {len(python)}"
    )
    for url, _size, small in sorted(fetched, key=lambda f: -f[2])[:6]:
        print(f"      {small / 1024:6.1f} KB gzip  {url.split('/', 3)[-1]}")
    return packed


def run(args):
    """Build, serve and measure the page and its peer in one Chromium session."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        site = build(Path(args.course), Path(tmp), args.pyodide)
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        context = browser.new_context(service_workers="block")  # the offline worker precaches separately
        with serving(site) as base:
            print(f"page {args.page}, peer {args.peer} (no widgets)")
            load(context, base + args.page)[0].close()  # warm the browser up; measure the second visits
            peer_page, peer_fetched = load(context, base + args.peer)
            page, fetched = load(context, base + args.page)
            ours = report_bytes(f"{args.page} before interaction", fetched)
            peer = report_bytes(f"{args.peer}", peer_fetched)
            print(f"  ratio (gzip): {ours / peer:.2f}× the peer; target under 60 KB: {ours / 1024:.1f} KB")
            timing(page, peer_page)
            if args.moves:
                moves(page, args.moves)
            if args.live:
                live(page, args.figure)
        browser.close()


PAINT = "() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1"


def timing(page, peer):
    """Print navigation → first paint (beside the peer's) and → widgets mounted."""
    paint, peer_paint = page.evaluate(PAINT), peer.evaluate(PAINT)
    ready = page.evaluate("() => performance.getEntriesByName('coursegen:widgets-ready')[0]?.startTime ?? -1")
    print(
        f"navigation → first contentful paint, baked results included: {paint:.1f} ms "
        f"(target under 100 ms); peer {peer_paint:.1f} ms, ratio {paint / max(peer_paint, 1):.2f}×"
    )
    print(f"navigation → widgets mounted (controls live): {ready:.1f} ms")


def moves(page, count):
    """Print slider-input → verdict latency beside a no-op input listener."""
    out = page.evaluate(MOVES_JS, {"figure": "#widget-overflow-slider", "moves": count})
    ours, noop = out["ours"], out["noop"]
    print(
        f"slider input → verdict updated over {count} moves: p50 {statistics.median(ours):.2f} ms, "
        f"p95 {percentile(ours, 0.95):.2f} ms (target p95 under 16 ms)"
    )
    print(
        f"  peer, a no-op input listener: p50 {statistics.median(noop):.3f} ms, "
        f"p95 {percentile(noop, 0.95):.3f} ms; "
        f"ratio p95 {percentile(ours, 0.95) / max(percentile(noop, 0.95), 1e-3):.0f}×"
    )


def live(page, figure):
    """Ask for live Python in `figure` and print how long each stage took, up to the first live result."""
    status = page.locator(f"{figure} [data-live-status]").text_content()
    if status.startswith("Live Python is not available"):
        print(f"live Python: {status}")
        return
    clicked = page.evaluate(STATUS_JS, figure)
    deadline = time.time() + 180
    while time.time() < deadline:
        log = page.evaluate("() => window.statusLog")
        if log and log[-1][1].startswith("Live"):  # "Live result ready." or "Live Python is unavailable: …"
            break
        time.sleep(0.25)
    print("live Python, stage by stage (from the click):")
    names = {"Starting live Python…": "the worker started", "Running the Python…": "the first run"}
    for (at, text), (end, _) in zip(log, log[1:]):
        label = names.get(text, text.split(" (step")[0])
        print(f"  {label:<44} {(end - at) / 1000:6.2f} s")
    print(f"  {'total':<44} {(log[-1][0] - clicked) / 1000:6.2f} s  → {log[-1][1]}")


def main(argv=None):
    """Parse the command line and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--course", default=str(REPO))
    parser.add_argument("--pyodide", default=str(REPO / "node_modules" / "pyodide"))
    parser.add_argument("--page", default="sequence-axis.html")
    parser.add_argument("--peer", default="kda.html")
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--figure", default="#widget-overflow-slider", help="the figure to run live")
    parser.add_argument("--no-live", dest="live", action="store_false")
    run(parser.parse_args(argv))


if __name__ == "__main__":
    main()
