"""Incremental builds: what one build keeps so the next redoes only what its inputs changed.

`build_site(root, options, cache)` always runs every stage; a `BuildCache` makes two of them
cheap. Parsing reuses a page when its *parse key* is unchanged: its own text plus what parsing
may consult (the set of sources, course.yaml, media files; the course's Python package for pages
with `{calc}`; widgets/, that package and the template folders for pages with widgets). Rendering reuses a unit page when
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

import jinja2

from . import theme
from .assets import load_theme_assets
from .config import CONFIG_NAME, load_config, read_text
from .errors import Problems
from .extensions import parse_failure
from .markdown import FRONT_MATTER_DEFAULTS, ParseContext, make_markdown, parse_source
from .model import Page, Source
from .parallel import map_in_two
from .render import CompiledTemplates, make_environment, render_unit, unit_template

MARK_OPEN, MARK_CLOSE = "\ue000", "\ue001"  # private-use characters: rare in author text (see split_marked)
MARKER = re.compile(f"{MARK_OPEN}([^{MARK_CLOSE}]*){MARK_CLOSE}".encode())
CALC_USE = re.compile(r"\{calc\}`")
WIDGET_USE = re.compile(r"^\s*(`{3,}|~{3,})\s*widget\b", re.M)
EXERCISE_USE = re.compile(r"^\s*:{4,}\s*exercise\b", re.M)  # its reference runs in the course's Python


def uses_author_code(text: str) -> bool:
    """Return True when a source has a `{calc}` role, a widget fence or an exercise: parsing it runs the course's
    Python."""
    return (("{calc}" in text and bool(CALC_USE.search(text))) or ("widget" in text and bool(WIDGET_USE.search(text)))
            or ("exercise" in text and bool(EXERCISE_USE.search(text))))


CACHE_FOLDER = ".coursegen-cache"  # in the course root: git-ignored, safe to delete at any time


def command_cache(root: Path, write: bool = True) -> "BuildCache":
    """Return the cache a command starts with: empty, but for the compiled templates kept on disk."""
    return BuildCache(compiled_templates=CompiledTemplates(root / CACHE_FOLDER / "templates", write=write))


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

    def __init__(self, parallel: bool = True, compiled_templates: jinja2.BytecodeCache | None = None):
        self.parallel = parallel
        self.compiled_templates = compiled_templates  # render.CompiledTemplates: kept on disk between runs
        self.md = None
        self.md_extensions: tuple = ()  # what self.md was made with
        self.env = None
        self.env_folders: tuple = ()  # the template folders self.env looks in
        self.pages: dict[str, tuple] = {}  # path → (parse key, Page, problems, short hash of the key)
        self.rendered: dict[str, tuple[tuple, list[bytes]]] = {}  # slug or file name → (render key, split page)
        self.parsed: list[str] = []  # paths parsed by the last build
        self.rerendered: list[str] = []  # slugs, and index.html or 404.html, rendered by the last build
        self.filled: dict[str, tuple] = {}  # slug → (split page, its asset URLs, the joined bytes)
        self._headings: dict[str, tuple] = {}  # slug → headings, for the pages that link there
        self._shared: dict[str, str] = {}
        self._texts: dict[Path, tuple] = {}  # file → ((inode, mtime, size), text) of sources read before
        self._config: tuple = ()  # (course.yaml's text, its configuration) when it had no problems

    def read_text(self, file: Path, shown: str, problems: Problems) -> str | None:
        """Return a file's text like `config.read_text`, reading it again only when it changed on disk."""
        try:
            stat = file.stat()
        except OSError:  # gone since it was listed: read_text reports it
            return read_text(file, shown, problems)
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        cached = self._texts.get(file)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        text = read_text(file, shown, problems)
        if text is not None:  # unreadable text is read (and reported) again on every build
            self._texts[file] = (stamp, text)
        return text

    def forget(self, files) -> None:
        """Read these files again next build, whatever their stamps say (a watcher saw them change:
        a same-size save within the file system's clock tick keeps its modification time)."""
        for file in files:
            self._texts.pop(Path(file), None)

    def load_config(self, root: Path, problems: Problems):
        """Return `config.load_config`'s answer, validated again only when course.yaml's text changed."""
        file = root / CONFIG_NAME
        text = self.read_text(file, CONFIG_NAME, Problems()) if file.is_file() else None
        if self._config and text is not None and self._config[0] is text:  # same file read: same object
            return self._config[1]
        before = len(problems.items)
        config = load_config(root, problems, read=self.read_text)
        self._config = (text, config) if config is not None and len(problems.items) == before else ()
        return config

    def markdown(self, extensions):
        """Return the parser, made again only when the extensions change (they install their syntax
        into it); then every page is parsed again too."""
        extensions = tuple(extensions)
        if self.md is None or self.md_extensions != extensions:
            md = make_markdown(extensions)
            self.md, self.md_extensions, self.pages = md, extensions, {}
        return self.md

    def environment(self, folders: tuple[Path, ...]):
        """Return the Jinja environment, kept across builds (it reloads templates that changed) while
        the template folders stay the same (a course may add its own templates/ during `serve`)."""
        if self.env is None or self.env_folders != folders:
            self.env, self.env_folders = make_environment(folders, self.compiled_templates), folders
        return self.env

    def parse_pages(self, md, sources: list[Source], ctx: ParseContext, problems: Problems,
                    meanwhile=None) -> list:
        """Return a Page per source, parsing only those whose parse key changed.

        `meanwhile()` runs in this process while pages are parsed (see parallel.map_in_two)."""
        root = ctx.root
        code = ctx.extra.get("calc")  # calc.CourseCode: the way to the course's Python package
        package = root / (code.package if code is not None else "kernels")
        self._shared = {"all": digest(sorted(ctx.slug_by_path.items()), _read(root / "course.yaml"),
                                      media_signature(root)),
                        "calc": tree_signature(package),
                        "widgets": tree_signature(package, root / "widgets", *theme.folders(root))}
        keys = {s.path: self.parse_key(s) for s in sources}
        todo = [s for s in sources if self.pages.get(s.path, ((),))[0] != keys[s.path]]
        for source, (page, items) in zip(todo, parse_many(md, todo, ctx, self.parallel, meanwhile)):
            self.pages[source.path] = (keys[source.path], page, items, digest(keys[source.path]))
        self.pages = {s.path: self.pages[s.path] for s in sources}
        self.parsed = [s.path for s in todo]
        for source in sources:
            problems.items.extend(self.pages[source.path][2])
        return [self.pages[s.path][1] for s in sources]

    def parse_key(self, source: Source) -> tuple:
        """Return the key that changes whenever re-parsing `source` could give a different Page."""
        uses, text = [self._shared["all"]], source.text
        if "{calc}" in text and CALC_USE.search(text):  # substring tests first: regexes cost more
            uses.append(self._shared["calc"])
        if ("widget" in text and WIDGET_USE.search(text)) or ("exercise" in text and EXERCISE_USE.search(text)):
            uses.append(self._shared["widgets"])  # an exercise also carries the theme's worker URL
        return (source.path, source.kind, source.slug, source.text, *uses)  # compared, not hashed: cheaper

    def start_render(self, course, root: Path, common: dict) -> None:
        """Compute what every page of this build shares: course outline, config, templates."""
        outline = tuple(_unit_fields(u) for u in course.units)
        extra = sorted((k, repr(v)) for k, v in common.items() if k not in ("course", "config", "asset"))
        self._shared["render"] = digest(outline, repr(course.config), extra, tree_signature(*theme.folders(root)))
        course_pages = [name for name in self.rendered if "." in name]  # "index.html": slugs have no dot
        kept = [u.slug for u in course.written] + course_pages
        self.rendered = {name: self.rendered[name] for name in kept if name in self.rendered}
        self.filled = {slug: self.filled[slug] for slug in self.rendered if slug in self.filled}
        self.rerendered = []
        self._headings = {u.slug: u.page.headings for u in course.written}

    def warm_up_rendering(self, root: Path) -> None:
        """Compile every template and load the theme assets ahead of the render stage.

        Run while pages are parsed (parse_pages' `meanwhile`): this work would otherwise wait
        for parsing to end and then run on one core. A template that does not compile is left
        for the render stage, which reports it with its line.
        """
        env = self.environment(theme.folders(root))
        for name in env.list_templates(filter_func=lambda name: name.endswith(".html")):
            try:
                env.get_template(name)
            except jinja2.TemplateError:
                pass
        load_theme_assets(root)

    def render_units(self, env, units, course, common: dict) -> list[bytes]:
        """Return each unit's page, re-rendering only those whose render key changed."""
        keys = [self.render_key(unit, course) for unit in units]
        todo = [(unit, key) for unit, key in zip(units, keys) if self.rendered.get(unit.slug, ((),))[0] != key]
        def render(job) -> list[bytes]:
            return split_marked(lambda context: render_unit(env, job[0], course, context), common)

        # The first page of each template renders here before the work splits: Jinja compiles a
        # template and its partials on first use, and the fork then inherits them compiled.
        seen, warm, rest = set(), [], []
        for job in todo:
            name = unit_template(env, job[0]).name
            (rest if name in seen else warm).append(job)
            seen.add(name)
        parts = {unit.slug: render((unit, key)) for unit, key in warm}
        parts.update((unit.slug, split) for (unit, _), split in zip(rest, map_in_two(render, rest, self.parallel)))
        for unit, key in todo:
            self.rendered[unit.slug] = (_kept(key, parts[unit.slug]), parts[unit.slug])
        self.rerendered += [unit.slug for unit, _ in todo]
        return [self.filled_page(unit.slug, common["asset"]) for unit in units]

    def course_page(self, name: str, render, common: dict) -> bytes:
        """Return a page made from the course outline, configuration and templates alone (index, 404).

        `render(common)` renders it; it runs again only when what every page shares changed.
        """
        key = ("course page", self._shared["render"])
        if self.rendered.get(name, ((),))[0] != key:
            split = split_marked(render, common)
            self.rendered[name] = (_kept(key, split), split)
            self.rerendered.append(name)
        return self.filled_page(name, common["asset"])

    def render_key(self, unit, course) -> tuple:
        """Return the key that changes whenever re-rendering `unit` could give a different page."""
        prev, next_ = course.neighbours(unit.slug)
        # Pages show the headings of the sections they link to (a review's revisit list does).
        linked = tuple((slug, self._headings.get(slug)) for slug in sorted({l.slug for l in unit.page.links}))
        return (self.pages[unit.page.source.path][3], _unit_fields(unit), _unit_fields(prev),
                _unit_fields(next_), linked, self._shared["render"])  # compared, not hashed: cheaper

    def filled_page(self, slug: str, asset) -> bytes:
        """Return a rendered page with its asset markers replaced by this build's asset URLs."""
        parts = self.rendered[slug][1]  # text, asset name, text, asset name, …, text
        urls = tuple(asset(name.decode()) for name in parts[1::2])
        filled = self.filled.get(slug)
        if filled is None or filled[0] is not parts or filled[1] != urls:  # same page, same URLs: same bytes
            page = b"".join(part if i % 2 == 0 else urls[i // 2].encode() for i, part in enumerate(parts))
            self.filled[slug] = filled = (parts, urls, page)
        return filled[2]


class Unmarked(list):
    """A page rendered with its asset URLs in place, as one part: its text holds a marker character."""


def split_marked(render, common: dict) -> list[bytes]:
    """Return `render(context)` split at its asset markers: text, asset name, text, …, text.

    A page whose own text holds a marker character (an icon font's private-use code point) cannot
    be split safely: it is rendered again with the real URLs and kept as one Unmarked part.
    """
    names: list[str] = []
    page = render({**common, "asset": _marking(common["asset"], names)})
    if page.count(MARK_OPEN.encode()) == page.count(MARK_CLOSE.encode()) == len(names):
        return MARKER.split(page)
    return Unmarked([render(common)])


def _kept(key: tuple, split: list[bytes]):
    """Return the render key to keep for a split page; an Unmarked one holds this build's URLs, so none."""
    return None if isinstance(split, Unmarked) else key


def _marking(asset, names: list[str]):
    """Return an `asset(name)` that checks the name but answers with a marker for later (noted in `names`)."""
    def marked(name: str) -> str:
        asset(name)  # a missing asset is still a template error, as without the cache
        names.append(name)
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
    try:
        page = parse_source(md, source, ctx, problems)
    except Exception as err:  # noqa: BLE001 - only a course extension's failure is kept (see parse_failure)
        problem = parse_failure(err, source.path, ctx.root)
        if problem is None:
            raise
        problems.items.append(problem)
        page = Page(source=source, meta=dict(FRONT_MATTER_DEFAULTS), html="")
    return page, problems.items


def parse_many(md, sources: list[Source], ctx: ParseContext, parallel: bool, meanwhile=None) -> list[tuple]:
    """Return (Page, problems) per source, in order, on two cores for large batches."""
    return map_in_two(lambda source: parse_one(md, source, ctx), sources, parallel, meanwhile)
