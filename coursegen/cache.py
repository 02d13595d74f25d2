"""Incremental builds: what one build keeps so the next redoes only what its inputs changed.

A `BuildCache` owns the build's memo (coursegen/memo.py) and what the watcher said changed; it
decides nothing itself. `build_site(root, options, cache)` always runs every stage, and each stage
consults the memo: load reads a file again only when its stamp changed (`stages/load.py`), parse
re-parses a page only when its parse key changed (`stages/parse.py`), link replaces only the
re-parsed units (`stages/link.py`), render re-renders only pages whose render key changed
(`stages/render.py`). Helpers deep inside the stages reach the same memo through `memo.memoized`.
`build_site` without a cache uses a fresh one: everything cold, the same code path, so
incremental output equals full.

In `serve` the cache trusts the watcher (`trust_watcher`, `note_changes`): a rebuild checks and
reads only the reported paths, keys only the re-read sources, re-links only the re-parsed pages
and renders only them and the pages recorded as linking to one whose headings changed, as long
as nothing every page shares moved; else it compares every key as above.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from coursegen.memo import Changes, Memo

CACHE_FOLDER = ".coursegen-cache"  # in the course root: git-ignored, safe to delete at any time


def command_cache(root: Path, write: bool = True) -> BuildCache:
    """Return the cache a command starts with: empty, but for the compiled templates kept on disk."""
    from coursegen.stages.render import CompiledTemplates

    return BuildCache(compiled_templates=CompiledTemplates(root / CACHE_FOLDER / "templates", write=write))


class BuildCache:
    """Everything one build keeps for the next: the memo every stage consults, what the watcher said,
    and Jinja's compiled templates on disk."""

    def __init__(self, compiled_templates: jinja2.BytecodeCache | None = None):
        self.compiled_templates = compiled_templates  # render.CompiledTemplates: kept on disk between runs
        self.memo = Memo()
        self.changes = Changes(self.memo)

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
    def parsed(self) -> list[str]:
        """The paths of the sources the last build parsed."""
        return self.memo.records.get("parsed", [])

    @property
    def rerendered(self) -> list[str]:
        """The slugs, and index.html or 404.html, of the pages the last build rendered."""
        return self.memo.records.get("rerendered", [])
