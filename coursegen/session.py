"""One session: what lives from one build of a course to the next (a command's one build, or serve's many).

`build_site(root, options, session)` takes everything it may reuse from the session and leaves
there what the next build may: the memo every stage consults (coursegen/memo.py), the records of
what the last build did (coursegen/incremental.py), what the watcher said changed, and Jinja's
compiled templates on disk. A build without a session makes a fresh one: everything cold, the same
code path, so incremental output equals full.

In `serve` the session trusts the watcher (`trust_watcher`, `note_changes`): a rebuild checks and
reads only the reported paths, keys only the re-read sources, re-links only the re-parsed pages
and renders only them and the pages recorded as linking to one whose headings changed, as long
as nothing every page shares moved; else it compares every key.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from coursegen.author_code import AuthorCode
from coursegen.cache import CACHE_FOLDER, refused_cache_folder
from coursegen.errors import ContentError
from coursegen.incremental import Changes, Records
from coursegen.memo import Memo


def command_session(root: Path, write: bool = True, author_code: AuthorCode | None = None) -> Session:
    """Return the session a command starts with: empty, but for the compiled templates kept on disk (and
    `author_code`, the workers it may already have started: warm_up.start). Raises ContentError when
    `.coursegen-cache` is a link leading out of the course."""
    from coursegen.stages.render import CompiledTemplates

    if refused := refused_cache_folder(root):
        raise ContentError(refused)
    return Session(CompiledTemplates(root / CACHE_FOLDER / "templates", write=write), author_code)


class Session:
    """Everything one build keeps for the next: the memo, the records of the last build, what the
    watcher said, and Jinja's compiled templates on disk."""

    def __init__(self, compiled_templates: jinja2.BytecodeCache | None = None, author_code: AuthorCode | None = None):
        self.compiled_templates = compiled_templates  # render.CompiledTemplates: kept on disk between runs
        self.memo = Memo()
        self.changes = Changes(self.memo)
        self.records = Records()
        self.author_code = author_code or AuthorCode()  # the workers the course's Python runs in
        self.extension_files: set[str] = set()  # the course extensions' files loaded (extensions.course_extensions)
        self.background = None  # serve's search index, made beside the rebuilds (search.index_beside_rebuilds)
        self.pages_restored = False  # the memo's pages come from .coursegen-cache/ (disk_cache.load_pages)
        self.pages_on_disk: frozenset[str] = frozenset()  # the paths whose pages .coursegen-cache/ holds
        self.notebooks_on_disk: dict = {}  # what .coursegen-cache/ holds of the notebooks (disk_cache.load_notebooks)
        self.font_cutting = None  # the math font's cut, under way from the parse on (features/math/font_subset.py)

    def close(self) -> None:
        """End the session's worker processes (dropping the session does so too)."""
        self.author_code.close()
        if self.font_cutting is not None:
            self.font_cutting.cancel()
            self.font_cutting = None

    def afresh(self) -> Session:
        """Return a session that keeps none of this one's builds, but its workers, compiled templates,
        serve's background index and the watcher's trust (serve: a course extension's code changed)."""
        fresh = Session(self.compiled_templates)
        fresh.author_code, fresh.background = self.author_code, self.background
        if self.changes.watched:
            fresh.trust_watcher()
        return fresh

    def trust_watcher(self) -> None:
        """From the next build on, look again only at the paths `note_changes` names (serve calls this once
        its watches are in place; the next build still looks at everything, for changes made before)."""
        self.changes.trust_watcher()

    def note_changes(self, root: Path, paths) -> None:
        """Record course-relative paths a watcher saw change: the next build reads and checks them again.

        Their texts are read again whatever their stamps say (a same-size save within the file
        system's clock tick keeps its modification time)."""
        self.changes.note(root, paths)

    def look_at_everything(self) -> None:
        """Forget what the watcher said: the next build checks, lists and stats every file (after a crash)."""
        self.changes.look_at_everything()

    def forget(self, files) -> None:
        """Read these files again next build, whatever their stamps say."""
        for file in files:
            self.memo.pop("text", Path(file))

    @property
    def config(self):
        """The course's configuration as the last build read it (None when it had a problem)."""
        return self.records.config.config if self.records.config is not None else None

    @property
    def parsed(self) -> list[str]:
        """The paths of the sources the last build parsed."""
        return list(self.records.parse.parsed) if self.records.parse is not None else []

    @property
    def rerendered(self) -> list[str]:
        """The slugs, and index.html or 404.html, of the pages the last build rendered."""
        return list(self.records.render.rerendered) if self.records.render is not None else []
