"""Site search: Pagefind indexes every published page at build time into small chunks and fragments.

The browser loads Pagefind's script (`pagefind/pagefind.js`) only when the learner opens search,
and then only the index chunks and page fragments a query needs, so a large course's first search
costs a few hundred kilobytes, not its whole text. The index is made from each page's body, before
the pages are rendered: it does not depend on the templates, and a new index never re-renders a page.

Pagefind's Python API (`pagefind.index`) would take the pages in memory, but it waits 0.1 s for each
reply of its binary (a 2,000-page course would take minutes) and reads replies through a 2 MiB pipe
buffer that a large index overflows. So the binary from `pagefind-bin` runs once per build on a
temporary copy of the page bodies, and its output is read back into the outputs: the write stage
stays the only writer of `site/`. It is started before the pages are rendered and read back after
them (see PagefindRun), so the binary indexes while Python renders.
"""

from __future__ import annotations

import hashlib
import html as htmllib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from coursegen.model import replaced_units

BUNDLE = "pagefind"  # the site folder Pagefind's files go in; pagefind.js finds the rest beside itself
ENTRY = f"{BUNDLE}/pagefind.js"
# Pagefind's own result UIs, its highlighting script and its playground (search.js is our UI), and
# its web worker (search.js runs Pagefind on the page's thread).
UNUSED = re.compile(r"pagefind-(ui|modular-ui|component-ui|highlight|worker)\b|/playground/")
# What stays out of the index: a search result must not give away a review's answer or a choice's
# explanation; a widget's Python source and its live-run panel are the same words on every widget;
# diagrams are drawings; footnote markers and buttons are no prose (Pagefind already skips scripts).
EXCLUDED = (
    "[data-answer]",
    "[class*=explanation]",
    "[data-widget-code]",
    "[data-widget-live]",
    "pre.diagram",
    "sup",
    "button",
    "template",
)
# Pagefind makes one result per heading with an id. A question is a section of its own, headed by
# its kind label, so in the indexed copy that label becomes a heading with the question's id.
QUESTION = re.compile(
    r'(<section\b[^>]*?\sid="([^"]+)"[^>]*\sdata-question="[^"]*"[^>]*>\s*)'
    r'<p class="question-kind">(.*?)</p>',
    re.S,
)
TIMEOUT = 600  # seconds: far more than a 2,000-page course takes (5–10 s on two cores); a hung binary fails the build


def indexed_page(unit, language: str) -> str:
    """Return the HTML Pagefind indexes for one unit: its body under its title, questions headed.

    Pagefind takes a result's title from the first h1 and its label ("Lesson 2") from the meta tag.
    """
    body = QUESTION.sub(r'\1<h6 id="\2">\3</h6>', unit.page.html)
    return (
        f'<!doctype html><html lang="{htmllib.escape(language)}"><head><meta charset="utf-8">'
        f'<meta data-pagefind-meta="label[content]" content="{htmllib.escape(unit.label)}"></head>'
        f"<body><main data-pagefind-body><h1>{htmllib.escape(unit.title)}</h1>{body}</main></body></html>"
    )


def indexed_copy(unit, language: str) -> tuple[str, str, str]:
    """Return (site path, indexed_page, a digest of both) for one unit (serve keeps them per unit)."""
    html = indexed_page(unit, language)
    return unit.url, html, f"{unit.url}\0{hashlib.sha256(html.encode()).hexdigest()}"


def pagefind_binary() -> str:
    """Return the path of the Pagefind binary that the `pagefind-bin` package installs."""
    try:
        from pagefind_bin import get_executable
    except ImportError:  # a dependency (pyproject.toml): only a hand-made environment lacks it
        raise RuntimeError("search needs the Pagefind binary: pip install 'pagefind-bin>=1.5,<2'") from None
    return str(get_executable())


def indexed_pages(course, language: str) -> dict[str, str]:
    """Return what Pagefind indexes: each published unit's indexed copy, keyed by its site path."""
    return {unit.url: indexed_page(unit, language) for unit in course.written}


def search_bundle(pages: dict[str, str], language: str, background: bool = False) -> dict[str, bytes]:
    """Return Pagefind's files for `pages` (from indexed_pages), keyed by their site paths.

    `background` (serve) runs Pagefind at a low priority: the rebuild of the next save comes first."""
    return PagefindRun(pages, language, background).files()


class PagefindRun:
    """Pagefind indexing `pages` in its own process, started at once; files() waits for its output.

    A build starts it before rendering and asks for its files after: the binary is a separate
    process, so it indexes while Python renders the pages (which do not depend on the index)."""

    def __init__(self, pages: dict[str, str], language: str, background: bool = False):
        self.process: subprocess.Popen | None = None
        self.folder: tempfile.TemporaryDirectory | None = None
        if not pages:  # Pagefind refuses to make an empty index; search then says it could not load
            return
        self.folder = tempfile.TemporaryDirectory(prefix="coursegen-search-", dir=scratch_folder())
        try:
            copy = os.path.join(self.folder.name, "pages")
            os.mkdir(copy)
            for url, html in pages.items():  # plain open(): in serve this runs beside the rebuilds, in one interpreter
                with open(os.path.join(copy, url), "w", encoding="utf-8") as file:
                    file.write(html)
            nice = ["nice", "-n", "10"] if background and shutil.which("nice") else []
            command = [
                *nice,
                pagefind_binary(),
                "--site",
                copy,
                "--output-path",
                self.bundle,
                "--silent",
                "--force-language",
                language,
                "--exclude-selectors",
                ", ".join(EXCLUDED),
            ]
            # Its messages go to a file, not a pipe: nobody reads a pipe while the pages render.
            with open(os.path.join(self.folder.name, "log"), "wb") as log:
                self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            self.deadline = time.monotonic() + TIMEOUT
        except BaseException:
            self.cancel()
            raise

    @property
    def bundle(self) -> str:
        assert self.folder is not None  # asked for only while Pagefind has pages
        return os.path.join(self.folder.name, BUNDLE)

    def files(self) -> dict[str, bytes]:
        """Wait for Pagefind; return the files search.js uses, keyed by their site paths."""
        if self.process is None:
            return {}
        try:
            try:
                code = self.process.wait(timeout=max(0.0, self.deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise RuntimeError(f"Pagefind did not finish within {TIMEOUT} s") from None
            if code:
                with open(os.path.join(os.path.dirname(self.bundle), "log"), encoding="utf-8", errors="replace") as log:
                    raise RuntimeError(f"Pagefind failed ({code}): {log.read()}")
            files = {f"{BUNDLE}/{path}": data for path, data in read_tree(self.bundle).items()}
        finally:
            self.cancel()
        dropped = unused_wasm(files)
        return {path: data for path, data in files.items() if not UNUSED.search(path) and path not in dropped}

    def cancel(self) -> None:
        """Stop Pagefind if it still runs (the build failed) and remove its folder."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.folder is not None:
            self.folder.cleanup()
            self.folder = None


def read_tree(folder: str) -> dict[str, bytes]:
    """Return {path under `folder`, with slashes: bytes} for every file below it, sorted by path.

    os.walk and plain paths rather than pathlib: a 2,000-page index is some 4,000 files, and in
    serve this runs beside the rebuilds, so its Python time is theirs too."""
    found = {}
    for parent, _, names in os.walk(folder):
        relative = os.path.relpath(parent, folder)
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        for name in names:
            with open(os.path.join(parent, name), "rb") as file:
                found[prefix + name] = file.read()
    return dict(sorted(found.items()))


def scratch_folder() -> str | None:
    """Return where the temporary copy goes: memory (/dev/shm) unless TMPDIR says otherwise.

    A copy for 2,000 pages is 4,000 files written once and deleted: on this machine's disk they
    added 1.5–3 s to a 2,000-lesson build, in memory much less.
    """
    if os.environ.get("TMPDIR") or not os.access("/dev/shm", os.W_OK):
        return None  # tempfile's own choice
    return "/dev/shm"


def unused_wasm(files: dict[str, bytes]) -> set[str]:
    """Return Pagefind's WebAssembly builds that no language of the index loads (the fallback one, usually)."""
    languages = json.loads(files[f"{BUNDLE}/pagefind-entry.json"])["languages"].values()
    used = {f"{BUNDLE}/wasm.{language['wasm']}.pagefind" for language in languages}
    return {path for path in files if path.startswith(f"{BUNDLE}/wasm.") and path not in used}


class BackgroundIndex:
    """For `serve`: Pagefind runs beside the rebuilds instead of inside them, so a saved page shows at once.

    The first build waits for its index. After that a build gets the newest finished index (the one
    made from the pages before the edit) and hands its own pages to a thread; when their index is
    done the thread calls `ready`, and serve rebuilds with nothing to parse or render and the new
    index to write. Edits saved while Pagefind runs are indexed together in the next run.
    """

    def __init__(self, ready, building=None):
        self.ready = ready
        self.building = building  # held by serve while it rebuilds: indexing starts once the page is out
        self.written: tuple = ()  # the units of the last build, and their (site path, copy, digest) in copies
        self.copies: list[tuple[str, str, str]] = []
        self.language = ""
        self.lock = threading.Lock()
        self.made: tuple[str, dict[str, bytes]] | None = None  # (key, bundle) of the newest index
        self.wanted: tuple[str, dict[str, str], str] | None = None  # (key, pages, language) asked for last
        self.worker: threading.Thread | None = None

    def indexed(self, course, language: str) -> tuple[dict[str, str], str]:
        """Return indexed_pages(course, language) and a digest of it, making only the copies of units
        that are not the last build's unit objects (see model.replaced_units)."""
        written = course.written
        changed = replaced_units(self.written, written) if language == self.language else None
        if changed is None:
            self.copies = [indexed_copy(unit, language) for unit in written]
        for position in changed or ():
            self.copies[position] = indexed_copy(written[position], language)
        self.written, self.language = written, language
        key = hashlib.sha256("\0".join([language, *(copy[2] for copy in self.copies)]).encode()).hexdigest()
        return {url: html for url, html, _ in self.copies}, key

    def bundle(self, course, language: str) -> dict[str, bytes]:
        pages, key = self.indexed(course, language)
        with self.lock:
            if self.made is not None:
                if self.made[0] != key:
                    self.wanted = (key, pages, language)
                    if self.worker is None or not self.worker.is_alive():
                        self.worker = threading.Thread(target=self._work, daemon=True)
                        self.worker.start()
                return self.made[1]
        bundle = search_bundle(pages, language)
        with self.lock:
            self.made = (key, bundle)
        return bundle

    def _work(self) -> None:
        if self.building is not None:  # the build that asked is still writing its page: let it finish first,
            with self.building:  # the copy for Pagefind would otherwise slow it down (one interpreter)
                pass
        while True:
            with self.lock:
                if self.wanted is None or (self.made is not None and self.wanted[0] == self.made[0]):
                    self.worker = None
                    return
                key, pages, language = self.wanted
            bundle = search_bundle(pages, language, background=True)
            with self.lock:
                self.made = (key, bundle)
            self.ready()


BACKGROUND: dict[Path, BackgroundIndex] = {}  # course folder → its serve's index (see index_beside_rebuilds)


def index_beside_rebuilds(root: Path, ready, building=None) -> None:
    """Make builds of the course at `root` index in the background from now on (serve does; `building`
    is the lock it holds while a rebuild runs)."""
    BACKGROUND[Path(root).resolve()] = BackgroundIndex(ready, building)


def index_within_builds(root: Path) -> None:
    """Undo index_beside_rebuilds: builds of `root` wait for their index again."""
    BACKGROUND.pop(Path(root).resolve(), None)


def csp(config) -> dict[str, list[str]]:
    """Pagefind's search runs as WebAssembly ('wasm-unsafe-eval' allows that, not eval of JavaScript)."""
    return {"script-src": ["'wasm-unsafe-eval'"]}


def add_files(course, root, assets, problems) -> None:
    """Add Pagefind's bundle under pagefind/, with its script reachable as asset('pagefind/pagefind.js').

    Not content-hashed: Pagefind names its index chunks and fragments by their content already,
    and pagefind.js must keep its name to find them. Its URL stays out of every page's bytes, so
    editing one lesson in `serve` rewrites that lesson and the index, not all pages. A build's
    Pagefind runs while the pages render (assets.later); serve's is made beside the rebuilds.
    """
    language = course.config.language or "en"
    assets.urls[ENTRY] = ENTRY
    background = BACKGROUND.get(Path(root).resolve())
    if background:
        assets.files.update(background.bundle(course, language))
        return
    run = PagefindRun(indexed_pages(course, language), language)
    assets.later(run.files, run.cancel)
