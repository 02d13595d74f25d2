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

In `serve` the cache trusts the watcher (`trust_watcher`, `note_changes`): a rebuild checks and
reads only the reported paths, keys only the re-read sources, re-links only the re-parsed pages
(`relinked`) and renders only them and the pages recorded as linking to one whose headings
changed, as long as nothing every page shares moved; else it compares every key as above.
"""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import jinja2

from coursegen.theme import files as theme
from coursegen.stages.assets import load_theme_assets
from coursegen.stages.config import CONFIG_NAME, load_config, read_text
from coursegen.paths import COURSE_INPUTS, check_changed_files, check_course_files
from coursegen.stages.load import SOURCE_DIRS, load_source, load_sources, source_kind
from coursegen.errors import Problems
from coursegen.extensions import parse_failure
from coursegen.stages.parse import FRONT_MATTER_DEFAULTS, ParseContext, make_markdown, parse_source
from coursegen.stages.link import check_links, link_course, make_unit, page_ids
from coursegen.model import Course, Page, Source
from coursegen.parallel import parallel_map
from coursegen.stages.render import CompiledTemplates, make_environment, render_unit, unit_template

MARK_OPEN, MARK_CLOSE = "\ue000", "\ue001"  # private-use characters: rare in author text (see split_marked)
MARKER = re.compile(f"{MARK_OPEN}([^{MARK_CLOSE}]*){MARK_CLOSE}".encode())
CALC_USE = re.compile(r"\{calc\}`")
WIDGET_USE = re.compile(r"^\s*(`{3,}|~{3,})\s*widget\b", re.M)
EXERCISE_USE = re.compile(r"^\s*:{4,}\s*exercise\b", re.M)  # its reference runs in the course's Python


def author_code_uses(text: str) -> tuple[bool, bool]:
    """Return whether a source has a `{calc}` role, and whether it has a widget fence or an exercise:
    parsing either runs the course's Python (substring tests first: the regexes cost more)."""
    return ("{calc}" in text and bool(CALC_USE.search(text)),
            ("widget" in text and bool(WIDGET_USE.search(text))) or ("exercise" in text and bool(EXERCISE_USE.search(text))))


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

    def __init__(self, compiled_templates: jinja2.BytecodeCache | None = None):
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
        # What a watcher told (serve): with `watched`, only the paths it reported are looked at again.
        self.watched = False
        self._unseen: set[str] | None = None  # course-relative paths changed since the last look; None: any may have
        self._sources: dict[str, Source] = {}  # path → Source of the last look, sorted by path
        self._slug_by_path: dict[str, str] = {}  # the same dict object while the set of sources stays the same
        self.fresh: set[str] = set()  # paths of the sources (re)read by the last build
        self._unparsed: set[str] = set()  # paths of sources read since the last parse
        self._signatures: dict[str, tuple] = {}  # name → (the paths it covers, signature), see signature()
        self._uses: dict[str, tuple] = {}  # source path → author_code_uses(its text)
        self._with_problems: dict[str, list] = {}  # source path → problems of its parse, for those with any
        self._parsed_with = None  # the parser of the last parse
        self._all_inputs: tuple = (None, None, "")  # (slug map, course.yaml's text, their digest)
        self._course = None  # the linked course of the last build that rendered every unit
        self._reparsed: set[str] = set()  # paths parsed again since that build
        self._linked: tuple | None = None  # (config, drafts, slug map, course) of the last link without problems
        self._relink: set[str] = set()  # paths parsed again since the last link
        self._outline = ""  # digest of the course outline of the last render
        self._config_repr: tuple = (None, "")  # (configuration, digest of its repr)
        self._candidates: list | None = None  # units this build's render looks at; None for all
        self._linkers: dict[str, set] = {}  # slug → slugs of the pages that link to it
        self._unmarked: set[str] = set()  # slugs whose page is Unmarked (rendered again every build)
        self._asset_names: set[str] = set()  # every asset name in the kept pages' markers
        self._urls: dict = {}  # asset name → its URL, in the last build

    def trust_watcher(self) -> None:
        """From the next build on, look again only at the paths `note_changes` names (serve calls this once
        its watches are in place; the next build still looks at everything, for changes made before)."""
        self.watched, self._unseen = True, None

    def note_changes(self, root: Path, paths) -> None:
        """Record course-relative paths a watcher saw change: the next build reads and checks them again.

        Their texts are read again whatever their stamps say (a same-size save within the file
        system's clock tick keeps its modification time)."""
        paths = set(paths)
        self.forget(root / path for path in paths)
        if self._unseen is not None:
            self._unseen |= paths
        for name, (covers, _) in list(self._signatures.items()):
            if any(covers(path) for path in paths):
                del self._signatures[name]

    def look_at_everything(self) -> None:
        """Forget what the watcher said: the next build checks, lists and stats every file (after a crash)."""
        self._unseen, self._signatures = None, {}

    @property
    def knows_changes(self) -> bool:
        """True when every change since the last look is in `_unseen` (serve, once its watcher is trusted)."""
        return self.watched and self._unseen is not None

    def check_course_files(self, root: Path, problems: Problems, names=COURSE_INPUTS) -> None:
        """`paths.check_course_files`, or for the changed paths alone when the watcher named every change."""
        if self.knows_changes:
            check_changed_files(root, self._unseen, problems, names)
        else:
            check_course_files(root, problems, names)

    def load_sources(self, root: Path, problems: Problems) -> list[Source]:
        """Return `sources.load_sources`' answer, listing and reading again only what the watcher named.

        Sources that were not read again are the same objects as in the last build, so later
        stages can tell what changed by identity. Any problem while reading makes the next build
        look at everything again (the problem is reported again there, and until it is fixed)."""
        before, old = len(problems.items), self._sources
        unseen = self._unseen if self.knows_changes else None
        if unseen is None or any(path in SOURCE_DIRS for path in unseen):  # a folder itself came or went
            listed = {s.path: s for s in load_sources(root, problems, read=self.read_text)}
            unseen = None  # every source is a new object
        else:
            listed = dict(old)
            for path in sorted(p for p in unseen if source_kind(p)):
                listed.pop(path, None)
                if os.path.lexists(root / path):
                    source = load_source(root, path, problems, self.read_text)
                    if source is not None:
                        listed[path] = source
            if listed.keys() != old.keys():
                listed = dict(sorted(listed.items()))
        self.fresh = {path for path in (listed if unseen is None else unseen) if path in listed
                      and old.get(path) is not listed[path]}
        self._unparsed |= self.fresh  # kept until a parse looked at them (a build may stop before it)
        for path in old.keys() - listed.keys():
            self._uses.pop(path, None)
        for path in self.fresh:
            self._uses[path] = author_code_uses(listed[path].text)
        if listed.keys() != old.keys() or not self._slug_by_path:
            self._slug_by_path = {path: source.slug for path, source in listed.items()}
        self._sources = listed
        if self.watched:
            self._unseen = set() if len(problems.items) == before else None
        return list(listed.values())

    def uses_author_code(self) -> bool:
        """Return True when a source of the last load_sources has a `{calc}` role or a widget fence."""
        return any(calc or widget for calc, widget in self._uses.values())

    def slug_by_path(self) -> dict[str, str]:
        """Return {source path: slug} of the last load_sources (the same object while its keys stay)."""
        return self._slug_by_path

    def signature(self, name: str, covers, compute):
        """Return `compute()`, kept while the watcher names no path that `covers(path)` says it depends on."""
        kept = self._signatures.get(name)
        if kept is not None and self.knows_changes:
            return kept[1]
        value = compute()
        self._signatures[name] = (covers, value)
        return value

    def read_text(self, file: Path, shown: str, problems: Problems) -> str | None:
        """Return a file's text like `config.read_text`, reading it again only when it changed on disk
        (or, when the watcher names every change, when it named this file)."""
        cached = self._texts.get(file)
        if cached is not None and self.knows_changes:
            return cached[1]
        try:
            stat = file.stat()
        except OSError:  # gone since it was listed: read_text reports it
            return read_text(file, shown, problems)
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
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
            self.md, self.md_extensions, self.pages, self._with_problems = md, extensions, {}, {}
        return self.md

    def environment(self, folders: tuple[Path, ...]):
        """Return the Jinja environment, kept across builds (it reloads templates that changed) while
        the template folders stay the same (a course may add its own templates/ during `serve`)."""
        if self.env is None or self.env_folders != folders:
            self.env, self.env_folders = make_environment(folders, self.compiled_templates), folders
        return self.env

    def parse_pages(self, md, sources: list[Source], ctx: ParseContext, problems: Problems,
                    meanwhile=None, jobs: int | None = None) -> list:
        """Return a Page per source, parsing only those whose parse key changed, in `jobs` processes.

        When the watcher named every change and nothing all pages share moved, only the sources
        read again are keyed; the others are the same objects as last time, so their keys are too.
        `meanwhile()` runs in this process while pages are parsed (see parallel.parallel_map)."""
        shared = self.shared_parse_inputs(ctx)
        if self.knows_changes and shared == self._shared.get("parse") and self._parsed_with is md:
            candidates = [self._sources[path] for path in sorted(self._unparsed) if path in self._sources]
        else:
            candidates = sources
        self._shared.update(shared, parse=shared)
        self._parsed_with, self._unparsed = md, set()
        keys = {s.path: self.parse_key(s) for s in candidates}
        todo = [s for s in candidates if self.pages.get(s.path, ((),))[0] != keys[s.path]]
        for source, (page, items) in zip(todo, parse_many(md, todo, ctx, jobs, meanwhile)):
            self.pages[source.path] = (keys[source.path], page, items, digest(keys[source.path]))
            self._with_problems.pop(source.path, None)
            if items:
                self._with_problems[source.path] = items
        if len(self.pages) != len(sources) or candidates is sources:  # a source is gone: forget its page
            self.pages = {s.path: self.pages[s.path] for s in sources}
            self._with_problems = {s.path: self._with_problems[s.path] for s in sources if s.path in self._with_problems}
        self.parsed = [s.path for s in todo]
        self._reparsed.update(self.parsed)
        self._relink.update(self.parsed)
        for path in sorted(self._with_problems):  # sources come sorted by path: the order of a full build
            problems.items.extend(self._with_problems[path])
        return [self.pages[s.path][1] for s in sources]

    def shared_parse_inputs(self, ctx: ParseContext) -> dict:
        """Return what parsing may consult beside a page's own text, as hashes: "all" for every page,
        "calc" for pages with {calc}, "widgets" for pages with widgets."""
        root = ctx.root
        code = ctx.extra.get("calc")  # calc.CourseCode: the way to the course's Python package
        name = code.package if code is not None else "kernels"
        config_text = self.read_text(root / CONFIG_NAME, CONFIG_NAME, Problems()) if (root / CONFIG_NAME).is_file() else ""
        if self._all_inputs[:2] != (ctx.slug_by_path, config_text):
            self._all_inputs = (ctx.slug_by_path, config_text, digest(sorted(ctx.slug_by_path.items()), config_text))
        media = self.signature("media", _covers_media, lambda: media_signature(root))
        return {"all": digest(self._all_inputs[2], media),
                "calc": self.signature(f"calc {name}", _under(name), lambda: tree_signature(root / name)),
                "widgets": self.signature(f"widgets {name}", _under(name, "widgets", theme.COURSE_TEMPLATES),
                                          lambda: tree_signature(root / name, root / "widgets", *theme.folders(root)))}

    def parse_key(self, source: Source) -> tuple:
        """Return the key that changes whenever re-parsing `source` could give a different Page."""
        loaded = self._sources.get(source.path) is source  # else a source this cache did not load (tests)
        calc, widget = self._uses[source.path] if loaded else author_code_uses(source.text)
        uses = [self._shared["all"]] + [self._shared["calc"]] * calc + [self._shared["widgets"]] * widget  # an exercise also carries the theme's worker URL
        return (source.path, source.kind, source.slug, source.text, *uses)  # compared, not hashed: cheaper

    def link(self, config, pages: list[Page], problems: Problems, drafts: bool):
        """Return `link.link_course`'s answer, re-linking only the re-parsed pages when it can.

        It can when the watcher named every change, the last link was of the same configuration
        and sources and found no problem, and each re-parsed page keeps its place (published or
        not) and its links stay good: then the course is the last one with those units replaced,
        and only their links, and links to them when their anchors changed, are checked again."""
        last, relink = self._linked, sorted(self._relink)
        self._relink, self._linked = set(), None
        course = None
        if (self.knows_changes and last is not None and last[0] is config and last[1] == drafts
                and last[2] is self._slug_by_path):
            course = relinked(last[3], [self.pages[path][1] for path in relink if path in self.pages],
                              self._linkers, drafts)
        if course is None:
            before = len(problems.items)
            course = link_course(config, pages, problems, drafts)
            self._linkers = linkers(course.written)
            if len(problems.items) != before:
                return course
        self._linked = (config, drafts, self._slug_by_path, course)
        return course

    def start_render(self, course, root: Path, common: dict) -> None:
        """Compute what every page of this build shares (course outline, config, templates), and which
        pages may need rendering again: all of them, or (see _changed_units) those an edit reaches."""
        extra = sorted((k, repr(v)) for k, v in common.items() if k not in ("course", "config", "asset"))
        themes = self.signature("theme", _under(theme.COURSE_TEMPLATES), lambda: tree_signature(*theme.folders(root)))
        if self._config_repr[0] is not course.config:  # its repr lists every unit: hashed once per configuration
            self._config_repr = (course.config, digest(repr(course.config)))
        self._candidates = self._changed_units(course)
        if self._candidates is not None:  # the outline is as it was: is all else every page shares?
            if digest(self._outline, self._config_repr[1], extra, themes) != self._shared.get("render"):
                self._candidates = None
        if self._candidates is None:  # the outline may have changed: hash it again, and look at every page
            self._outline = digest(tuple(_unit_fields(u) for u in course.units))
            course_pages = [name for name in self.rendered if "." in name]  # "index.html": slugs have no dot
            kept = [u.slug for u in course.written] + course_pages
            self.rendered = {name: self.rendered[name] for name in kept if name in self.rendered}
            self.filled = {slug: self.filled[slug] for slug in self.rendered if slug in self.filled}
            self._headings = {u.slug: u.page.headings for u in course.written}
        else:
            for unit in self._candidates:
                self._headings[unit.slug] = unit.page.headings
        self._course = None  # set again once every unit is rendered
        self._shared["render"] = digest(self._outline, self._config_repr[1], extra, themes)
        self.rerendered = []

    def _changed_units(self, course) -> list | None:
        """Return the units whose render key may differ from the last build's, or None for "any".

        Only when the watcher named every change, and the configuration, the sources and every
        re-parsed page's place in the outline (title, summary, …) stayed the same: then a page
        can only change through its own text or the headings of a page it links to, and those
        pages are the re-parsed ones and the pages recorded as linking to them."""
        last = self._course
        if not self.knows_changes or last is None or last.config is not course.config \
                or len(last.written) != len(course.written):
            return None
        changed = [course.unit(self._sources[path].slug) for path in sorted(self._reparsed) if path in self._sources]
        if any(unit is None or _unit_fields(unit) != _unit_fields(last.unit(unit.slug)) for unit in changed):
            return None  # the outline changed (and with it the course map every page may show)
        reached = {unit.slug: unit for unit in changed}
        for unit in changed:
            if unit.page is not None and unit.page.headings != self._headings.get(unit.slug):
                reached.update((slug, course.unit(slug)) for slug in self._linkers.get(unit.slug, ()))
        reached.update((slug, course.unit(slug)) for slug in self._unmarked)
        return [unit for unit in reached.values() if unit is not None and unit.page is not None]

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

    def render_units(self, env, units, course, common: dict, jobs: int | None = None) -> list[bytes]:
        """Return each unit's page, re-rendering only those whose render key changed, in `jobs` processes."""
        candidates = units if self._candidates is None else self._candidates
        keys = [self.render_key(unit, course) for unit in candidates]
        todo = [(unit, key) for unit, key in zip(candidates, keys) if self.rendered.get(unit.slug, ((),))[0] != key]
        def render(job) -> list[bytes]:
            return split_marked(lambda context: render_unit(env, job[0], course, context), common)

        # The first page of each template renders here before the work splits: Jinja compiles a
        # template and its partials on first use, and the pool's forks then inherit them compiled.
        seen, warm, rest = set(), [], []
        for job in todo:
            name = unit_template(env, job[0]).name
            (rest if name in seen else warm).append(job)
            seen.add(name)
        parts = {unit.slug: render((unit, key)) for unit, key in warm}
        parts.update((unit.slug, split) for (unit, _), split in zip(rest, parallel_map(render, rest, jobs)))
        for unit, key in todo:
            split = parts[unit.slug]
            self.rendered[unit.slug] = (_kept(key, split), split)
            self._unmarked.discard(unit.slug)
            if isinstance(split, Unmarked):
                self._unmarked.add(unit.slug)
            self._asset_names.update(name.decode() for name in split[1::2])
        self.rerendered += [unit.slug for unit, _ in todo]
        if self._candidates is None:
            self._asset_names = {name.decode() for unit in units for name in self.rendered[unit.slug][1][1::2]}
        if self._same_urls(common["asset"]) and self._candidates is not None:  # the others' bytes are as they were
            done = {unit.slug for unit, _ in todo}
            pages = [self.filled_page(u.slug, common["asset"]) if u.slug in done else self.filled[u.slug][2]
                     for u in units]
        else:
            pages = [self.filled_page(unit.slug, common["asset"]) for unit in units]
        self._course, self._reparsed = course, set()  # the next build's changes are relative to this one
        return pages

    def _same_urls(self, asset) -> bool:
        """Return whether every asset name the kept pages hold has the URL it had last build."""
        def url(name: str):
            try:
                return asset(name)
            except jinja2.TemplateError:  # no longer there: a page naming it must be filled (and fail) again
                return None
        urls = {name: url(name) for name in sorted(self._asset_names)}
        same, self._urls = urls == self._urls, urls
        return same

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


def relinked(course, pages: list[Page], found_linkers: dict[str, set], drafts: bool):
    """Return `course` with the units of `pages` (re-parsed, same sources) made again, or None when
    that could change more than those units: a page published or withdrawn, a problem to report.
    `found_linkers` (see linkers) is brought up to date with the new pages' links."""
    units = list(course.units)
    for page in pages:
        old = course.unit(page.slug)
        if old is None or old.page is None:
            return None
        problems = Problems()
        unit = make_unit(old.number, course.config.units[old.number - 1], {page.slug: page}, problems, drafts)
        if problems.items or unit.page is None:
            return None
        units[old.number - 1] = unit
    new = Course(config=course.config, units=tuple(units))
    reached = {page.slug for page in pages}
    for page in pages:
        if page_ids(page) != page_ids(course.unit(page.slug).page):  # the anchors others link to may be gone
            reached |= found_linkers.get(page.slug, set())
    problems = Problems()
    check_links(new, problems, [new.unit(slug) for slug in sorted(reached)])
    if problems.items:
        return None
    for page in pages:
        update_linkers(found_linkers, page.slug, {link.slug for link in course.unit(page.slug).page.links},
                       {link.slug for link in page.links})
    return new


def linkers(units) -> dict[str, set]:
    """Return {slug: slugs of the units whose pages link to it} (a review's revisit links count)."""
    found: dict[str, set] = {}
    for unit in units:
        for link in unit.page.links:
            found.setdefault(link.slug, set()).add(unit.slug)
    return found


def update_linkers(found: dict[str, set], slug: str, old_targets: set, new_targets: set) -> None:
    """Record in `found` (from linkers) that the page `slug` now links to `new_targets`, not `old_targets`."""
    for target in old_targets - new_targets:
        found.get(target, set()).discard(slug)
    for target in new_targets - old_targets:
        found.setdefault(target, set()).add(slug)


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


def _covers_media(path: str) -> bool:
    """Return whether a changed course path can change media_signature."""
    top, _, rest = path.partition("/")
    return top == "media" or (top in SOURCE_DIRS and not rest.endswith(".md"))


def _under(*folders: str):
    """Return a test for course paths in (or naming) one of the top-level `folders`."""
    return lambda path: path.partition("/")[0] in folders


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


def parse_many(md, sources: list[Source], ctx: ParseContext, jobs: int | None, meanwhile=None) -> list[tuple]:
    """Return (Page, problems) per source, in order, in `jobs` processes for large batches."""
    return parallel_map(lambda source: parse_one(md, source, ctx), sources, jobs, meanwhile)
