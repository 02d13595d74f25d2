"""The build's memo: what the stages computed, kept by kind and key so the next build can reuse it.

A `Memo` is a table per *kind* ("page", "rendered", "theme assets", …), each a bounded LRU: a
value is computed on a miss, kept while it is among the most recently used of its kind, and
dropped after that, so a long `serve` session does not grow without end. The stages consult it
with `memo.get(kind, key, compute)`; the few values that are "what the last build did" rather than
a value per key (which pages it parsed, the course it linked) are its `records`.

`Changes` is what a file watcher said about the course since the last look (serve): with it a
build may trust memo entries without looking at the disk; without it every entry is checked
against the file's stamps or hashes.

Helpers deep inside a stage, with no memo parameter (a Pygments lexer, a formula's MathML, the
theme's assets), reach the memo of the build in progress through a context variable that
`build_site` sets for the length of one build (`building`): `memoized(kind, key, compute)`.
Outside a build (a test calling a helper, a worker process) they just compute. Nothing else
keeps state between builds in the build process, so a fresh memo means everything cold.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar

Value = TypeVar("Value")

# The most entries each kind keeps. Per-page kinds are sized for large courses (a source's entry is
# replaced in place when it changes, so these bound only a course's size); the rest hold what a few
# rebuilds in a row can ask for again.
PER_PAGE = 100_000
SIZES = {
    "text": PER_PAGE,
    "source uses": PER_PAGE,
    "page": PER_PAGE,
    "rendered": PER_PAGE,
    "filled": PER_PAGE,
    "element ids": 1024,
    "mathml": 4096,
    "math problem": 4096,
    "lexer": 256,
    "wheel sha256": 64,
    "widget spec": 1024,
    "extension file": 32,
    "setup failure": 64,
    "signature": 16,
    "parser": 1,
    "jinja": 1,
    "search index": 2,
}
DEFAULT_SIZE = 4


class Memo:
    """Values computed by earlier builds: a bounded LRU per kind, plus the last build's records."""

    def __init__(self, sizes: dict[str, int] | None = None):
        self.sizes = {**SIZES, **(sizes or {})}
        self.tables: dict[str, OrderedDict] = {}
        self.records: dict[str, Any] = {}  # what the last build did, by name (see each stage)

    def table(self, kind: str) -> OrderedDict:
        """Return the entries of one kind, least recently used first (to iterate or prune in bulk)."""
        found = self.tables.get(kind)
        if found is None:
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
        table = self.tables.get(kind)
        return default if table is None else table.get(key, default)

    def put(self, kind: str, key: Hashable, value) -> None:
        """Keep `value` for `key`, dropping the least recently used entries beyond the kind's size."""
        table = self.table(kind)
        table[key] = value
        table.move_to_end(key)
        while len(table) > self.sizes.get(kind, DEFAULT_SIZE):
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
        self.tables.pop(kind, None)


class Changes:
    """What a watcher reported since the last look (serve), so that a build looks again only there."""

    def __init__(self, memo: Memo):
        self.memo = memo
        self.watched = False
        self.unseen: set[str] | None = None  # course-relative paths changed since the last look; None: any may have

    @property
    def known(self) -> bool:
        """True when every change since the last look is in `unseen` (serve, once its watcher is trusted)."""
        return self.watched and self.unseen is not None

    def trust_watcher(self) -> None:
        """From the next build on, look again only at the paths `note` names (the next build still
        looks at everything, for changes made before the watches were in place)."""
        self.watched, self.unseen = True, None

    def note(self, root: Path, paths) -> None:
        """Record course-relative paths the watcher saw change: their texts and the signatures that
        cover them are computed again (a same-size save within the clock's tick keeps its mtime)."""
        paths = set(paths)
        for path in paths:
            self.memo.pop("text", root / path)
        if self.unseen is not None:
            self.unseen |= paths
        signatures = self.memo.table("signature")
        for name, (covers, _) in list(signatures.items()):
            if any(covers(path) for path in paths):
                del signatures[name]

    def look_at_everything(self) -> None:
        """Forget what the watcher said: the next build checks, lists and stats every file (after a crash)."""
        self.unseen = None
        self.memo.clear("signature")

    def looked(self, ok: bool) -> None:
        """Note that a build has looked at every reported change: none is left unseen, unless it met a
        problem (then the next build looks at everything again, and reports it again)."""
        if self.watched:
            self.unseen = set() if ok else None

    def signature(self, name: str, covers: Callable[[str], bool], compute: Callable[[], str]) -> str:
        """Return `compute()`, kept while the watcher names no path that `covers(path)` says it depends on."""
        kept = self.memo.peek("signature", name)
        if kept is not None and self.known:
            return kept[1]
        value = compute()
        self.memo.put("signature", name, (covers, value))
        return value


# ---- keys: what a stage's output depends on, as values cheap to compare ---------------------


def digest(*parts) -> str:
    """Return a hash of the parts' reprs (every part must have a deterministic repr)."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def tree_signature(*paths: Path) -> str:
    """Return a hash of the files under `paths`: their names, sizes and modification times."""
    found = hashlib.sha256()
    for path in paths:
        files = sorted(path.rglob("*")) if path.is_dir() else [path] if path.is_file() else []
        for file in files:
            if file.is_file() and "__pycache__" not in file.parts:
                stat = file.stat()
                found.update(f"{file}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return found.hexdigest()


def under(*folders: str) -> Callable[[str], bool]:
    """Return a test for course paths in (or naming) one of the top-level `folders`."""
    return lambda path: path.partition("/")[0] in folders


# ---- the memo of the build in progress, for helpers that take none ---------------------------

_ACTIVE: contextvars.ContextVar[Memo | None] = contextvars.ContextVar("coursegen_build_memo", default=None)


@contextlib.contextmanager
def building(memo: Memo):
    """Make `memo` the one `memoized` uses, for the length of one build (in this thread only)."""
    token = _ACTIVE.set(memo)
    try:
        yield memo
    finally:
        _ACTIVE.reset(token)


def active() -> Memo | None:
    """Return the memo of the build in progress, or None outside a build."""
    return _ACTIVE.get()


def memoized(kind: str, key: Hashable, compute: Callable[[], Value]) -> Value:
    """Return `compute()`, kept in the memo of the build in progress (outside a build: computed)."""
    memo = _ACTIVE.get()
    return compute() if memo is None else memo.get(kind, key, compute)
