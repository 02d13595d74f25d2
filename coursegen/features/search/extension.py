"""Site search: an index of every published page, split so that a query fetches only a few files.

Each page's sections and word counts are found while it is parsed (sections.page_text, a page
analyser); the index files are made from them while the pages render (index.search_files). The
browser loads the search code only when the learner opens search, then the index's entry file, the
files of the terms typed and the fragments of the first results' pages (search-index.js).

Pagefind was this feature's engine before: its binary took about 4.2 s of CPU at 2,000 generated
lessons, beside a build of about 8 s of CPU on two cores, and added half again to every full build
(docs/hosting.md#search has the figures).
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path

from coursegen.features.search.index import ENTRY, FOLDER, search_files
from coursegen.features.search.sections import page_text
from coursegen.memo import Memo, remembered
from coursegen.model import per_unit
from coursegen.stages.parse import page_digest
from coursegen.stages.references import fill_references
from coursegen.theme import messages
from coursegen.theme.messages import unit_label

__all__ = ["ENTRY", "FOLDER", "indexed_pages", "search_files"]

XREF = 'data-xref="'  # in a page that names another page's figure or equation (stages/references.py)
SESSION_HOOKS = ("add_files", "serve")  # these hooks also take the build's session (extensions.ModuleExtension)


def analyse(html: str, source):
    """Return the page's sections and their words (sections.PageText), kept with the page."""
    return page_text(html, source)


def text_of(page, course=None):
    """Return a page's PageText: found while parsing, or, for a page that names another page's figure
    or equation, made from its text with those references filled ("Figure 3.2", not the label)."""
    if course is not None and XREF in page.html:
        return page_text(fill_references(page.html, course))
    found = page.derived.get("search")
    return found if found is not None else page_text(page.html)


def referenced_targets(course) -> tuple:
    """Return the numbered targets of the pages other pages name (slug, its targets): what those pages'
    indexed text reads beside their own source, so a renumbered figure re-indexes them."""
    named = sorted({link.slug for unit in course.written if XREF in unit.page.html for link in unit.page.links})
    return tuple((slug, tuple(sorted(_targets(course, slug).items()))) for slug in named)


def _targets(course, slug: str) -> dict:
    unit = course.unit(slug)
    return unit.page.derived.get("targets") or {} if unit is not None and unit.page is not None else {}


def indexed_pages(course, texts: dict[str, str], memo: Memo | None = None) -> list[tuple]:
    """Return what the index is made of: (url, title, label, PageText) for each published unit, its
    label in the course's language (`texts`: the message catalogue); in `serve` only the units an edit
    replaced are looked at again (model.per_unit), or all when a target other pages name changed."""

    def indexed(unit) -> tuple:
        return (unit.url, unit.title, unit_label(texts, unit), text_of(unit.page, course))

    return per_unit(memo, "search pages", course.written, indexed, (texts, referenced_targets(course)))


def index_key(course, texts: dict[str, str], memo: Memo | None = None) -> str:
    """Return a digest of everything the index depends on: each unit's URL, title, label and body, and
    the targets that references to other pages show."""

    def part(unit) -> str:
        return f"{unit.url}\0{unit.title}\0{unit_label(texts, unit)}\0{page_digest(unit.page)}"

    parts = per_unit(memo, "search keys", course.written, part, texts)
    return hashlib.sha256("\n".join([*parts, repr(referenced_targets(course))]).encode()).hexdigest()


def index_files(course, texts: dict[str, str], memo: Memo | None = None) -> dict[str, bytes]:
    """Return the index files for `course`, kept in `memo` by index_key."""
    return remembered(
        memo, "search index", index_key(course, texts, memo), lambda: search_files(indexed_pages(course, texts, memo))
    )


class IndexProcess:
    """search_files in a process of its own, sent only the pages that changed since the last call.

    serve's index is made beside its HTTP threads: in the server's own interpreter, a tenth of a
    second of Python (2,000 lessons) held the interpreter while the browser fetched the edited page,
    which then took three times as long to arrive. The process keeps the pages it was sent and
    answers with the files that changed, so little crosses between the two. It holds only its own
    end of the pipe, so it ends when serve does, however serve ends (a killed serve closes its end)."""

    def __init__(self):
        self.process = None
        self.connection = None
        self.sent: dict[str, tuple] = {}  # url → (title, label, PageText) as last sent
        # close() may come from serve's stopping thread while the index's thread starts the process:
        # a process made but not yet started cannot be joined, so the two take turns.
        self.starting = threading.Lock()

    def changed_files(self, pages: list[tuple], reply: bool = True) -> dict[str, bytes | None]:
        """Return the index files of `pages` (from indexed_pages) that differ from the last call's,
        None for the files gone (with `reply` false, nothing: the call only sends the pages).
        Raises if the process cannot start or dies."""
        with self.starting:
            if self.process is None:  # spawned, not forked: serve runs threads, which a fork must not copy
                context = multiprocessing.get_context("spawn")
                self.connection, theirs = context.Pipe()
                self.process = context.Process(target=_index_process, args=(theirs,), daemon=True)
                with _ctrl_c_held():
                    self.process.start()
                theirs.close()
            connection = self.connection
        if connection is None:
            raise RuntimeError("the search index was closed")
        changed = {}
        for url, title, label, text in pages:
            last = self.sent.get(url)
            if last is None or last[2] is not text or last[:2] != (title, label):  # kept pages keep their text
                changed[url] = (title, label, text)
        order = [url for url, *_ in pages]
        connection.send((order, changed, reply))
        made, answer = connection.recv()
        if not made:
            raise RuntimeError(answer)
        self.sent = {url: changed.get(url) or self.sent[url] for url in order}
        return answer

    def close(self) -> None:
        """End the process (serve stops, or the process failed). Safe from any thread, more than once."""
        with self.starting:
            process, connection = self.process, self.connection
            self.process = self.connection = None
        if connection is not None:
            connection.close()  # the process reads the end of its pipe and ends
        if process is not None:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()


@contextlib.contextmanager
def _ctrl_c_held():
    """Hold SIGINT back in this thread while it starts the index process, which inherits the mask: a
    Ctrl-C meanwhile reaches serve alone (which ends the process) and not the process's start-up."""
    held = {signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


def _index_process(connection) -> None:
    """The index process: answer each (order, changed, reply) with _update_index's files until serve is gone.

    Ctrl-C in serve's terminal reaches this process too: it ignores it (serve ends it by closing the pipe)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Background work: on a machine of two cores the index (0.26 s a turn at 2,000 lessons) would take a
    # core from the rebuild and the browser the author is waiting on.
    with contextlib.suppress(OSError, AttributeError):  # AttributeError: no os.nice (Windows)
        os.nice(10)
    kept: dict = {"pages": {}, "files": {}}
    while True:
        try:
            order, changed, reply = connection.recv()
        except (EOFError, OSError):
            return
        answer: tuple[bool, dict | str]
        try:
            answer = (True, _update_index(kept, order, changed, reply))
        except Exception as err:  # noqa: BLE001 - sent back: serve makes the index itself then
            answer = (False, f"{type(err).__name__}: {err}")
        connection.send(answer)


def _update_index(kept: dict, order: list[str], changed: dict[str, tuple], reply: bool) -> dict[str, bytes | None]:
    pages = kept["pages"]
    pages.update(changed)
    for url in set(pages) - set(order):
        del pages[url]
    files = search_files([(url, *pages[url]) for url in order])
    old, kept["files"] = kept["files"], files
    if not reply:
        return {}
    diff: dict[str, bytes | None] = {path: data for path, data in files.items() if old.get(path) != data}
    diff.update((path, None) for path in old if path not in files)
    return diff


# The index waits until the rebuilds have paused this long. Made beside a rebuild (0.3 s a turn at 2,000
# lessons), it took half again as long to show the saved page on a machine of two cores, nice or not.
QUIET_SECONDS = 0.25


class BackgroundIndex:
    """For `serve`: the index is made beside the rebuilds instead of inside them, so a saved page shows at once.

    The first build makes its index. After that a build gets the newest index made (from the pages
    before the edit) and hands the new pages to a thread, which has an IndexProcess make their
    index; when it is done the thread calls `ready`, and serve rebuilds with nothing to parse or
    render and the new index to write. The thread starts a turn once no build has asked for
    QUIET_SECONDS, so a run of saves is indexed once, after its last, and edits saved during a turn
    are indexed together in the next.
    """

    def __init__(self, ready, building=None):
        self.ready = ready
        self.building = building  # held by serve while it rebuilds: indexing starts once the page is out
        self.lock = threading.Lock()
        self.made: tuple[str, dict[str, bytes]] | None = None  # (key, files) of the newest index
        self.wanted: tuple[str, list[tuple]] | None = None  # (key, pages) asked for last
        self.worker: threading.Thread | None = None
        self.process = IndexProcess()
        self.closed = False  # serve stopped: the thread ends at its next turn
        self.asked = time.monotonic()  # when a build last asked for the index

    def files(self, course, texts: dict[str, str], memo: Memo | None = None) -> dict[str, bytes]:
        self.asked = time.monotonic()
        key = index_key(course, texts, memo)
        with self.lock:
            if self.made is not None:
                if self.made[0] != key:
                    self.wanted = (key, indexed_pages(course, texts, memo))
                    if self.worker is None or not self.worker.is_alive():
                        self.worker = threading.Thread(target=self._work, daemon=True)
                        self.worker.start()
                return self.made[1]
        pages = indexed_pages(course, texts, memo)
        files = search_files(pages)
        with self.lock:
            self.made = (key, files)
            self.wanted = (key, pages)  # the thread sends these pages to the index process: the first edit sends little
            self.worker = threading.Thread(target=self._work, daemon=True)
            self.worker.start()
        return files

    def _work(self) -> None:
        while True:
            self._wait_for_quiet()
            with self.lock:
                if self.wanted is None or self.closed:
                    self.worker = None
                    return
                key, pages = self.wanted
                self.wanted = None
                made = self.made
            known = made is not None and made[0] == key  # the first build's pages: sent so that edits send little
            try:
                diff = self.process.changed_files(pages, reply=not known)
                files = {**(made[1] if made else {}), **diff}
            except Exception:  # noqa: BLE001 - the process could not start or died: make the index here
                if self.closed:  # it was ended by close(): serve has stopped
                    return
                self.process.close()
                self.process = IndexProcess()
                files = dict(search_files(pages))
            if known:
                continue
            with self.lock:
                self.made = (key, {path: data for path, data in sorted(files.items()) if data is not None})
            self.ready()

    def _wait_for_quiet(self, clock=time.monotonic, sleep=time.sleep) -> None:
        """Return once no build has asked for the index for QUIET_SECONDS and none is running (`clock` and
        `sleep` are time's own; a test gives a clock of its own, so no outcome depends on the machine's speed)."""
        while not self.closed and (left := self.asked + QUIET_SECONDS - clock()) > 0:
            sleep(left)
        if self.building is not None:  # a build that asked is still writing its page: let it finish first
            with self.building:
                pass

    def close(self) -> None:
        self.closed = True
        self.process.close()


def index_beside_rebuilds(session, ready, building=None) -> None:
    """Make the session's builds index in the background from now on (serve does; `building` is the
    lock it holds while a rebuild runs)."""
    session.background = BackgroundIndex(ready, building)


def serve(root: Path, ready, building, session):
    """Make `serve`'s builds index beside the rebuilds; return what makes them index within builds again."""
    index_beside_rebuilds(session, ready, building)
    return lambda: index_within_builds(session)


def index_within_builds(session) -> None:
    """Undo index_beside_rebuilds: the session's builds make their index again."""
    background, session.background = session.background, None
    if background is not None:
        background.close()


def add_files(course, root, assets, problems, session) -> None:
    """Add the index under search/, its entry file reachable as asset('search/index.json').

    Not content-hashed by the assets: the index names its own files by their content, and the entry
    file's URL stays out of every page's bytes, so editing one lesson in `serve` rewrites that lesson
    and the index, not all pages. No page holds the index's bytes, so a build makes it while another
    process renders pages (assets.meanwhile); serve's is made beside the rebuilds."""
    assets.urls[ENTRY] = ENTRY
    texts = messages.catalogue(root, course.config, session.memo)  # the units' labels, in the course's language
    if session.background:
        assets.files.update(session.background.files(course, texts, session.memo))
    else:
        assets.meanwhile(lambda: index_files(course, texts, session.memo))
