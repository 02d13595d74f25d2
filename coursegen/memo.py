"""The build's memo: what the stages computed, kept by kind and key so the next build can reuse it.

A `Memo` is a table per *kind* ("page", "rendered", "theme assets", …), each a bounded LRU: a
value is computed on a miss, kept while it is among the most recently used of its kind, and
dropped after that, so a long `serve` session does not grow without end. The stages consult it
with `memo.get(kind, key, compute)`. Every kind is declared in SIZES with the most entries it
keeps; an undeclared kind is a mistake in coursegen and raises at once. What the last build did,
rather than a value per key, is its records (coursegen/incremental.py); both live in the session
(coursegen/session.py), so a fresh session means everything cold.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

Value = TypeVar("Value")

# The most entries each kind keeps. Per-page kinds are sized for large courses (a source's entry is
# replaced in place when it changes, so these bound only a course's size); the rest hold what a few
# rebuilds in a row can ask for again.
PER_PAGE = 100_000
SIZES = {
    "text": PER_PAGE,  # file → (stamp, text): incremental.kept_reader
    "notebook": PER_PAGE,  # source path → (its text's SHA-256, lesson text, CellLines): incremental.kept_notebooks
    "page": PER_PAGE,  # source path → incremental.ParsedPage
    "rendered": PER_PAGE,  # slug or file name → incremental.RenderedPage
    "filled": PER_PAGE,  # slug → incremental.FilledPage
    "written": PER_PAGE,  # slug or file name → incremental.WrittenPage (disk_cache.load_rendered)
    "unit list": 2,  # by what every page shares: stages/course_units.py
    "mathml": 16384,  # (LaTeX, display) → (True, MathML) or (False, Temml's message): features/math/
    "math font": 1,  # the math font's WOFF2, decoded, by its digest (features/math/font_subset.py)
    "math font subset": 4,  # the math font cut to the course's characters, by its digest and them
    "lexer": 256,
    "bibliography": 8,  # (.bib name, text) → its works and problems: features/citations/
    "pygments formatter": 1,
    "pygments css": 1,
    "theme assets": 4,  # by the theme files' stamps
    "theme listing": 2,  # the theme's asset files and their stamps, by incremental.theme_signature
    "template overrides": 2,  # names of the course's templates/ files, by the theme signature (render.environment)
    "theme digest": 2,  # SHA-256 of every theme file's bytes, by the same signature (the service worker's version)
    "catalogue": 8,  # a message catalogue file, by its stamp (theme/messages.py)
    "catalogue check": 4,  # the problems of a course's own catalogue file, by its stamp
    "wheel sha256": 64,
    "package wheel": 4,  # by the package files' stamps
    "pyodide integrity": 2,  # the npm copy of pyodide.mjs's SRI, by its stamp (widgets/site.cdn_integrity)
    "widget spec": 1024,
    "code cells": 1024,  # a page's code cells' outputs, by their code, the package and the limits (features/cells)
    "extension file": 32,
    "setup failure": 64,
    "signature": 16,
    "parser": 1,
    "jinja": 1,
    "search index": 2,
    "precached files": 4,
    "precache json": 4,
    "offline assets": 1,  # the last service worker's written units and their media files (model.per_unit)
    "offline media": 2,  # the media files of every unit, sorted, by the units' media
    "offline digests": 1,  # the last service worker's written units and their page digests (model.per_unit)
    "search pages": 1,  # the last search index's written units and their indexed pages (model.per_unit)
    "search keys": 1,  # the same units and their parts of the index key
    "question targets": 1,  # each page's questions that draw on unpublished units (model.per_unit)
    "widget uses": 1,  # each page's widgets and exercises (widgets.add_files; model.per_unit)
    "page weight": 1,  # each page's page-weight warning (widgets/page_weight; model.per_unit)
    "csp warnings": 1,  # each page's CSP warnings, with the policy (csp.check_pages; model.per_unit)
    "missing templates": 1,  # each page's unknown template, with the theme's signature (render.missing_templates)
    "replaced units": 1,  # the last two `written` tuples model.per_unit compared, and where they differ
    "output order": 1,  # the last build's site paths, sorted (pipeline.in_path_order)
}


class UndeclaredKind(KeyError):
    """A memo kind missing from SIZES: every kind must say how many entries it keeps."""


class Memo:
    """Values computed by earlier builds: a bounded LRU per kind."""

    def __init__(self, sizes: dict[str, int] | None = None):
        self.sizes = {**SIZES, **(sizes or {})}
        self.tables: dict[str, OrderedDict] = {}

    def table(self, kind: str) -> OrderedDict:
        """Return the entries of one kind, least recently used first (to iterate or prune in bulk)."""
        found = self.tables.get(kind)
        if found is None:
            if kind not in self.sizes:
                raise UndeclaredKind(f"memo kind {kind!r} has no size in coursegen.memo.SIZES")
            found = self.tables[kind] = OrderedDict()
        return found

    def get(self, kind: str, key: Hashable, compute: Callable[[], Value]) -> Value:
        """Return the value kept for `key`, or `compute()`'s, kept from now on."""
        table = self.table(kind)
        try:
            table.move_to_end(key)
            return table[key]
        except KeyError:
            value = compute()
            self.put(kind, key, value)
            return value

    def peek(self, kind: str, key: Hashable, default=None):
        """Return the value kept for `key`, or `default` (computing nothing)."""
        return self.table(kind).get(key, default)

    def put(self, kind: str, key: Hashable, value) -> None:
        """Keep `value` for `key`, dropping the least recently used entries beyond the kind's size."""
        table = self.table(kind)
        table[key] = value
        table.move_to_end(key)
        while len(table) > self.sizes[kind]:
            table.popitem(last=False)

    def pop(self, kind: str, key: Hashable) -> None:
        """Forget the value kept for `key`, if any."""
        self.table(kind).pop(key, None)

    def keep_only(self, kind: str, keys) -> None:
        """Forget every entry of `kind` whose key is not in `keys` (in their order)."""
        table = self.table(kind)
        self.tables[kind] = OrderedDict((key, table[key]) for key in keys if key in table)

    def clear(self, kind: str) -> None:
        """Forget every entry of `kind`."""
        self.table(kind)  # an undeclared kind raises here too
        self.tables.pop(kind, None)


def remembered(memo: Memo | None, kind: str, key: Hashable, compute: Callable[[], Value]) -> Value:
    """Return `memo.get(kind, key, compute)`, or `compute()` when there is no memo (a helper called
    outside a build, e.g. by a test)."""
    return compute() if memo is None else memo.get(kind, key, compute)
