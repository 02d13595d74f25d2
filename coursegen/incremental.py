"""Incremental builds: what one build keeps so the next redoes only what its inputs changed.

`build_site(root, options, cache)` always runs every stage; a `BuildCache` makes two of them
cheap. Parsing reuses a page when its *parse key* is unchanged: its own text plus what parsing
may consult (the set of sources, course.yaml, media files; kernels/ for pages with `{calc}`;
widgets/, kernels/ and templates/ for pages with widgets). Rendering reuses a unit page when
its *render key* is unchanged: its parse key, its unit and neighbours, the headings of the
pages it links to, the course outline,
the configuration, the templates and the serve switch. Asset URLs are not part of the key:
pages are rendered with a marker in place of each `asset(name)` URL and the markers are
replaced afterwards, so a new search index does not force every page to re-render.
A fresh cache is a full build, and the same code path, so incremental output equals full.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from .errors import Problem, Problems
from .markdown import ParseContext, make_markdown, parse_source
from .model import Source
from .parallel import map_in_two
from .render import make_environment, render_unit

MARK_OPEN, MARK_CLOSE = "\ue000", "\ue001"  # private-use characters: never in author text
MARKER = re.compile(f"{MARK_OPEN}([^{MARK_CLOSE}]*){MARK_CLOSE}".encode())
CALC_USE = re.compile(r"\{calc\}`")
WIDGET_USE = re.compile(r"^\s*(`{3,}|~{3,})\s*widget\b", re.M)


def tree_signature(*paths: Path) -> str:
    """Return a hash of the files under `paths`: their names, sizes and modification times."""
    digest = hashlib.sha256()
    for path in paths:
        files = sorted(path.rglob("*")) if path.is_dir() else [path] if path.is_file() else []
        for file in files:
            if file.is_file() and "__pycache__" not in file.parts:
                stat = file.stat()
                digest.update(f"{file}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def media_signature(root: Path) -> str:
    """Return a hash of every non-Markdown file next to the sources and under media/."""
    files = [f for folder in ("lessons", "reviews") if (root / folder).is_dir()
             for f in sorted((root / folder).rglob("*")) if f.suffix != ".md"]
    return tree_signature(*files, root / "media")


def digest(*parts) -> str:
    """Return a hash of the parts' reprs (every part must have a deterministic repr)."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()


class BuildCache:
    """Parsed and rendered pages from the previous build, plus the parser and Jinja environment."""

    def __init__(self, parallel: bool = True):
        self.parallel = parallel
        self.md = None
        self.env = None
        self.pages: dict[str, tuple] = {}  # path → (parse key, Page, problems, short hash of the key)
        self.rendered: dict[str, tuple[str, list[bytes]]] = {}  # slug → (render key, page split at its markers)
        self.parsed: list[str] = []  # paths parsed by the last build
        self.rerendered: list[str] = []  # slugs rendered by the last build
        self.filled: dict[str, tuple] = {}  # slug → (split page, its asset URLs, the joined bytes)
        self._headings: dict[str, tuple] = {}  # slug → headings, for the pages that link there
        self._shared: dict[str, str] = {}

    def markdown(self, extensions):
        """Return the parser, made once per cache (extensions install their syntax into it)."""
        if self.md is None:
            self.md = make_markdown(extensions)
        return self.md

    def environment(self, templates: Path):
        """Return the Jinja environment, kept across builds (it reloads templates that changed)."""
        if self.env is None:
            self.env = make_environment(templates)
        return self.env

    def parse_pages(self, md, sources: list[Source], ctx: ParseContext, problems: Problems) -> list:
        """Return a Page per source, parsing only those whose parse key changed."""
        root = ctx.root
        self._shared = {"all": digest(sorted(ctx.slug_by_path.items()), _read(root / "course.yaml"),
                                      media_signature(root)),
                        "calc": tree_signature(root / "kernels"),
                        "widgets": tree_signature(root / "kernels", root / "widgets", root / "templates")}
        keys = {s.path: self.parse_key(s) for s in sources}
        todo = [s for s in sources if self.pages.get(s.path, ((),))[0] != keys[s.path]]
        for source, (page, items) in zip(todo, parse_many(md, todo, ctx, self.parallel)):
            self.pages[source.path] = (keys[source.path], page, items, digest(keys[source.path]))
        self.pages = {s.path: self.pages[s.path] for s in sources}
        self.parsed = [s.path for s in todo]
        for source in sources:
            problems.items.extend(self.pages[source.path][2])
        return [self.pages[s.path][1] for s in sources]

    def parse_key(self, source: Source) -> tuple:
        """Return the key that changes whenever re-parsing `source` could give a different Page."""
        uses = [self._shared["all"]]
        if CALC_USE.search(source.text):
            uses.append(self._shared["calc"])
        if WIDGET_USE.search(source.text):
            uses.append(self._shared["widgets"])
        return (source.path, source.kind, source.slug, source.text, *uses)  # compared, not hashed: cheaper

    def start_render(self, course, root: Path, common: dict) -> None:
        """Compute what every page of this build shares: course outline, config, templates."""
        outline = tuple(_unit_fields(u) for u in course.units)
        extra = sorted((k, repr(v)) for k, v in common.items() if k not in ("course", "config", "asset"))
        self._shared["render"] = digest(outline, repr(course.config), extra, tree_signature(root / "templates"))
        self.rendered = {u.slug: self.rendered[u.slug] for u in course.written if u.slug in self.rendered}
        self.filled = {slug: self.filled[slug] for slug in self.rendered if slug in self.filled}
        self.rerendered = []
        self._headings = {u.slug: u.page.headings for u in course.written}

    def render_units(self, env, units, course, common: dict) -> list[bytes]:
        """Return each unit's page, re-rendering only those whose render key changed."""
        keys = [self.render_key(unit, course) for unit in units]
        todo = [(unit, key) for unit, key in zip(units, keys) if self.rendered.get(unit.slug, ("",))[0] != key]
        marked_common = {**common, "asset": _marking(common["asset"])}

        def render(job) -> list[bytes]:
            return MARKER.split(render_unit(env, job[0], course, marked_common))

        for (unit, key), parts in zip(todo, map_in_two(render, todo, self.parallel)):
            self.rendered[unit.slug] = (key, parts)
        self.rerendered = [unit.slug for unit, _ in todo]
        return [self.filled_page(unit.slug, common["asset"]) for unit in units]

    def render_key(self, unit, course) -> str:
        """Return the key that changes whenever re-rendering `unit` could give a different page."""
        prev, next_ = course.neighbours(unit.slug)
        # Pages show the headings of the sections they link to (a review's revisit list does).
        linked = tuple((slug, self._headings.get(slug)) for slug in sorted({l.slug for l in unit.page.links}))
        return digest(self.pages[unit.page.source.path][3], _unit_fields(unit), _unit_fields(prev),
                      _unit_fields(next_), linked, self._shared["render"])

    def filled_page(self, slug: str, asset) -> bytes:
        """Return a rendered page with its asset markers replaced by this build's asset URLs."""
        parts = self.rendered[slug][1]  # text, asset name, text, asset name, …, text
        urls = tuple(asset(name.decode()) for name in parts[1::2])
        filled = self.filled.get(slug)
        if filled is None or filled[0] is not parts or filled[1] != urls:  # same page, same URLs: same bytes
            page = b"".join(part if i % 2 == 0 else urls[i // 2].encode() for i, part in enumerate(parts))
            self.filled[slug] = filled = (parts, urls, page)
        return filled[2]


def _marking(asset):
    """Return an `asset(name)` that checks the name but answers with a marker for later."""
    def marked(name: str) -> str:
        asset(name)  # a missing asset is still a template error, as without the cache
        return f"{MARK_OPEN}{name}{MARK_CLOSE}"
    return marked


def _unit_fields(unit) -> tuple:
    """Return what templates read from a unit other than its page (None for no unit)."""
    if unit is None:
        return ()
    return (unit.number, unit.slug, unit.kind, unit.title, unit.summary, unit.part, unit.url,
            getattr(unit, "topics", ()), unit.page is not None)


def _read(file: Path) -> bytes:
    return file.read_bytes() if file.is_file() else b""


def parse_one(md, source: Source, ctx: ParseContext) -> tuple:
    """Return (Page, problems) for one source, its problems kept apart for the cache."""
    problems = Problems()
    page = parse_source(md, source, ctx, problems)
    return page, problems.items


def parse_many(md, sources: list[Source], ctx: ParseContext, parallel: bool) -> list[tuple]:
    """Return (Page, problems) per source, in order, on two cores for large batches."""
    return map_in_two(lambda source: parse_one(md, source, ctx), sources, parallel)
