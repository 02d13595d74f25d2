"""Search on large courses: what the first query transfers and how fast queries answer, in headless Chromium.

Run from the repository root:  python3 benchmarks/search.py [--lessons 200 2000] [--repeat 5]

For each size, the same generated lessons (benchmarks/generated_course.py) are built by this
coursegen (an index split by term prefix, and one fragment per page, fetched per query), by
coursegen as it was at commit OLD (one JSON corpus fetched whole on the first search and indexed by
MiniSearch in the browser) and, when pagefind-bin is installed, at commit PAGEFIND (Pagefind's
index chunks and fragments). The older engines and themes are taken from git history into a
temporary folder. Each site is served from 127.0.0.1 by a plain static server, and Debian's
Chromium opens a lesson in a fresh context (no cache, no service worker) for each query:

- first query: from pressing "/" to the results, everything fetched counted (the search code, the
  index, the fragments). Bytes are given as sent (a plain server) and gzip-compressed, as most
  static hosts send JSON and JavaScript (Pagefind's index files are gzip already and are counted as they are);
- again: the same query typed again once its fragments are loaded, median of --repeat: from typing
  to the results as Playwright sees them (so with search.js's 80 ms pause after typing, in both),
  and the search alone as search.js measures it (`performance.measure`; the old search.js has none);
- slowest: the slowest of those repeats, as search.js measures it;
- build: full builds from the command line (start-up included), --builds of them with the index
  and as many with the index step skipped, alternating; the overhead is the median over the pairs
  of (with / without - 1): other work on the machine moves single times a lot.

Nothing here is a test; the targets are under 300 KB for the first query on 2,000 lessons, under
300 ms once fragments are loaded and under 25 % added to a full build.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import importlib.util
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generated_course import copy_engine_parts, write_course  # noqa: E402

OLD = "2df0a4f"  # the last commit with the JSON corpus and MiniSearch
PAGEFIND = "5d8ce77"  # the last commit with Pagefind (its binary from pagefind-bin, when installed)
QUERIES = ("gate", "matrix decay", "precision scale error", "lesson 150")  # the last: a rare word
# Queries that only a forgiving search answers: a mistyped word, a typo in its first letters, an unknown word
FORGIVEN = ("matrix decya", "rpecision", "gate zyxwvut")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# A full build from the command line, in its own process; with "skip", the index step is skipped
# (Pagefind, or the old corpus, gets no pages), and the rest of the build is the same.
BUILD = """
import sys
try:
    from coursegen.features.search import extension as search
except ImportError:  # the old engine's layout
    from coursegen import search
if sys.argv.pop() == "skip":
    if hasattr(search, "index_files"):  # this coursegen: no words counted while parsing, no index files
        search.install = lambda md: None
        search.add_files = lambda course, root, assets, problems: assets.urls.__setitem__(search.ENTRY, search.ENTRY)
    elif hasattr(search, "PagefindRun"):  # Pagefind gets no pages and makes nothing
        search.indexed_pages = lambda course, language: {}
    else:  # the old engine: an empty corpus
        search.search_index = lambda course: b'{"documents":[],"fields":["title","text"],"storeFields":[]}'
from coursegen.cli import run
run()
"""


def old_engine(into: Path, commit: str = OLD) -> Path:
    """Extract coursegen at `commit` (engine and theme) into `into`; return it."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", commit, "coursegen", "templates", "widgets", "kernels"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def build(engine: Path, course: Path, site: Path, index: bool = True) -> float:
    """Build `course` into `site` from the command line with the coursegen in `engine`; return the
    wall seconds of the whole process (start-up included), with or without the index step."""
    environment = {**os.environ, "PYTHONPATH": str(engine)}
    command = [
        sys.executable,
        "-c",
        BUILD,
        "--root",
        str(course),
        "build",
        "--out",
        str(site),
        "index" if index else "skip",
    ]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=environment, cwd=engine)
    return time.perf_counter() - started


def index_overhead(engine: Path, course: Path, site: Path, repeat: int) -> dict:
    """Return full builds with and without the index, `repeat` of each, alternating (the site is
    left built with it): the medians, and the median of each pair's ratio.

    Paired so that both builds of a pair see the same machine: other work moves the times a lot."""
    build(engine, course, site)  # the first build compiles the templates into the course's cache
    pairs = [(build(engine, course, site, index=False), build(engine, course, site)) for _ in range(repeat)]
    without, with_index = (statistics.median(run) for run in zip(*pairs))
    return {
        "without": without,
        "with": with_index,
        "overhead": statistics.median(indexed / plain - 1 for plain, indexed in pairs),
    }


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def sizes(site: Path, base: str, url: str) -> tuple[int, int]:
    """Return the size of a fetched file as sent plain and as a gzip-compressing host would send it.

    Read from the site folder: the browser reports no body size for some requests (a worker's script).
    """
    data = (site / url.removeprefix(base).split("?")[0]).read_bytes()
    return len(data), (len(data) if data[:2] == b"\x1f\x8b" else len(gzip.compress(data, 6)))


# The time search.js itself took for its last search (it marks each with performance.measure), when it does.
LAST_SEARCH = """() => {
  const marks = performance.getEntriesByName("coursegen:search");
  return marks.length ? marks[marks.length - 1].duration / 1000 : NaN;
}"""


def measure(browser, site: Path, base: str, query: str, repeat: int) -> dict:
    """Return the first query's bytes (plain, gzip) and seconds, and the median seconds of it again."""
    context = browser.new_context(service_workers="block")
    page = context.new_page()
    page.goto(base + "lesson-1.html", wait_until="networkidle")  # only what search fetches is counted
    page.locator("[data-search-open]").wait_for()  # search.js has run: "/" opens search
    fetched = []
    page.on("requestfinished", lambda request: fetched.append(request))
    status = page.locator("[data-search-status]")
    started = time.perf_counter()
    page.keyboard.press("/")
    page.locator("[data-search] input").fill(query)
    status.filter(has_text=f"for “{query}”").wait_for(timeout=600_000)
    first = time.perf_counter() - started
    fetched = [sizes(site, base, request.url) for request in fetched]
    again, searching = [], []
    for _ in range(repeat):
        page.locator("[data-search] input").fill("")
        status.filter(has_text="for").wait_for(state="detached")
        started = time.perf_counter()
        page.locator("[data-search] input").fill(query)
        status.filter(has_text=f"for “{query}”").wait_for()
        again.append(time.perf_counter() - started)
        searching.append(page.evaluate(LAST_SEARCH))
    context.close()
    return {
        "plain": sum(s[0] for s in fetched),
        "gzip": sum(s[1] for s in fetched),
        "requests": len(fetched),
        "first": first,
        "again": statistics.median(again),
        "search": statistics.median(searching),
        "slowest": max(searching),
    }


def kib(size: int) -> str:
    return f"{size / 1024:,.0f} KiB"


def report(lessons: int, name: str, built: dict, queries: tuple[str, ...], rows: list[dict]) -> None:
    print(
        f"\n{lessons} lessons, {name}: full build {built['with']:.2f} s, without the index step "
        f"{built['without']:.2f} s (medians): the index adds {100 * built['overhead']:+.0f} % "
        f"(median of the pairs; target under 25 %)"
    )
    print(
        "| query | first query: fetched (plain / gzip) | requests | first query time | again: typing to results "
        "/ the search itself, medians | the search itself, slowest |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for query, row in zip(queries, rows):

        def ms(seconds):
            return "–" if seconds != seconds else f"{1000 * seconds:,.0f} ms"  # NaN: not marked

        print(
            f"| {query} | {kib(row['plain'])} / {kib(row['gzip'])} | {row['requests']} | "
            f"{1000 * row['first']:,.0f} ms | {1000 * row['again']:,.0f} ms / {ms(row['search'])} | "
            f"{ms(row['slowest'])} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--repeat", type=int, default=5, help="repeats of each query (median, slowest)")
    parser.add_argument("--builds", type=int, default=5, help="full builds with and without the index (medians)")
    parser.add_argument("--this-only", action="store_true", help="measure this coursegen only, not the older engines")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="coursegen-search-bench-") as folder, sync_playwright() as playwright:
        work = Path(folder)
        engines = {"this coursegen": REPO}
        if not args.this_only:
            engines[f"JSON corpus + MiniSearch ({OLD})"] = old_engine(work / "old")
        if args.this_only:
            pass  # the older engines are measured in docs/hosting.md's table
        elif importlib.util.find_spec("pagefind_bin"):
            engines[f"Pagefind ({PAGEFIND})"] = old_engine(work / "pagefind", PAGEFIND)
        else:
            print(f"Pagefind ({PAGEFIND}) not measured: pip install pagefind-bin to compare it too")
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        for lessons in args.lessons:
            for number, (name, engine) in enumerate(engines.items()):
                course = write_course(work / f"course-{lessons}-{number}", lessons)
                copy_engine_parts(engine, course)
                site = work / f"site-{lessons}-{number}"
                built = index_overhead(engine, course, site, args.builds)
                server, base = serve(site)
                try:
                    queries = QUERIES + (FORGIVEN if engine == REPO else ())
                    rows = [measure(browser, site, base, query, args.repeat) for query in queries]
                finally:
                    server.shutdown()
                report(lessons, name, built, queries, rows)
        browser.close()


if __name__ == "__main__":
    main()
