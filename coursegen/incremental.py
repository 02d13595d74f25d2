"""Incremental builds: what the last build did, as typed records, and how the next one tells what changed.

Every build runs every stage; each stage takes the record its own last run left (None: cold) and
returns a new one, which the session keeps for the next build (`Records`):

- load: `ConfigRead` (course.yaml's text and the configuration validated from it) and
  `SourcesRead` (every Source, its slug, which of them parsing runs the course's Python for, and the
  paths read since a parse last looked at them). Texts come through `kept_reader`, which reads a
  file again only when its stamp changed, or, when the watcher names every change, when it named it.
- parse: `ParseRecord` (what every page's parse consults beside its own text, the paths parsed);
  each page is a `ParsedPage` in the memo's "page" table, under its parse key (`parse_key`).
- link: `LinkRecord` (the course linked, and which pages link to which).
- render: `RenderRecord` (what every page shares, the headings others show, the pages rendered).

Sources, pages and courses that were not made again are the same objects as in the last build, so
the stages tell what changed by identity as well as by key. `Changes` is what a file watcher said
since the last look (serve): with it a build may trust what it kept without looking at the disk.

Records hold plain data only (strings, tuples, frozen sets, dicts and the model's dataclasses), so
they can be pickled as a whole; live objects (parsers, Jinja environments) stay in the session.
"""

from __future__ import annotations

import hashlib
import operator
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from coursegen.errors import Problem, Problems
from coursegen.memo import Memo
from coursegen.model import Course, Page, Source
from coursegen.stages.config import CONFIG_NAME, load_config, read_text
from coursegen.stages.includes import covers_includes, included_texts
from coursegen.stages.load import SOURCE_DIRS, SOURCE_SUFFIXES, author_code_uses, load_source, load_sources, source_kind
from coursegen.stages.notebook import read_notebook
from coursegen.theme import files as theme

PATH = operator.attrgetter("path")  # map(PATH, sources): in C, for 2,000 sources a rebuild

if TYPE_CHECKING:
    from coursegen.stages.config import CourseConfig


# ---- keys: what a stage's output depends on, as values cheap to compare ---------------------


def digest(*parts) -> str:
    """Return a hash of the parts' reprs (every part must have a deterministic repr)."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def key_digest(key: tuple) -> str:
    """Return a hash of a key's parts, each told apart by its length: a string part hashed as it is,
    any other by its repr. Like digest(key), without repr's escaped copy of a page's source text
    (which cost 2,000 lessons 0.08 s of one core after parsing)."""
    found = hashlib.sha256()
    for part in key:
        data = b"s" + part.encode() if isinstance(part, str) else b"r" + repr(part).encode()
        found.update(b"%d:" % len(data) + data)
    return found.hexdigest()


def tree_signature(*paths: Path) -> str:
    """Return a hash of the files under `paths`: their names, sizes, modification and change times (a file
    replaced by one of the same size with its modification time restored, `cp -p`, has a new change time)."""
    found = hashlib.sha256()
    for path in paths:
        files = sorted(path.rglob("*")) if path.is_dir() else [path] if path.is_file() else []
        for file in files:
            if file.is_file() and "__pycache__" not in file.parts:
                stat = file.stat()
                found.update(f"{file}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ctime_ns}\n".encode())
    return found.hexdigest()


def under(*folders: str) -> Callable[[str], bool]:
    """Return a test for course paths in (or naming) one of the top-level `folders`."""
    return lambda path: path.partition("/")[0] in folders


def theme_signature(root: Path, changes: Changes) -> str:
    """Return a hash of the theme's files (the course's templates/ and the packaged theme's) by name,
    size and modification time: kept while the watcher names nothing under templates/."""
    return changes.signature("theme", under(theme.COURSE_TEMPLATES), lambda: tree_signature(*theme.folders(root)))


# ---- what the watcher said ------------------------------------------------------------------


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


# ---- the records ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigRead:
    """course.yaml as the last load read it."""

    text: str | None  # "" when the course has none, None when it could not be read
    config: CourseConfig | None = None  # validated from `text` without a problem; None: validate again


@dataclass(frozen=True)
class SourcesRead:
    """Every source the last load gave, and what later stages need to know about them."""

    sources: dict[str, Source]  # path → Source, sorted by path
    slug_by_path: dict[str, str]  # the same object while the set of sources stays (parse keys compare it)
    uses: dict[str, tuple[bool, bool]]  # path → author_code_uses(text): {calc}, widget or exercise
    unparsed: frozenset[str] = frozenset()  # paths read since a parse last looked at them

    @classmethod
    def of(cls, sources: list[Source]) -> SourcesRead:
        """Return the record of a load that read these sources (all of them unparsed)."""
        return cls(
            {s.path: s for s in sources},
            {s.path: s.slug for s in sources},
            {s.path: author_code_uses(s.text) for s in sources},
            frozenset(s.path for s in sources),
        )

    def uses_author_code(self) -> bool:
        """Return True when a source has a `{calc}` role, a widget fence or an exercise."""
        return any(calc or widget for calc, widget in self.uses.values())


@dataclass(frozen=True)
class ParseInputs:
    """What parsing may consult beside a page's own text, as hashes: `all` for every page, `calc` for
    pages with {calc}, `widgets` for pages with widgets or exercises, `includes` for pages with an
    `{include}` (the files the sources include, stages/includes.py)."""

    all: str
    calc: str
    widgets: str
    includes: str = ""


@dataclass(frozen=True)
class ParsedPage:
    """One page as the parse stage keeps it (the memo's "page" table, by source path)."""

    key: tuple  # parse_key: compared, not hashed (cheaper)
    page: Page
    problems: tuple[Problem, ...]
    short_key: str  # key_digest(key): what render keys hold


@dataclass(frozen=True)
class ParseRecord:
    """What the last parse consulted, and the pages it parsed."""

    inputs: ParseInputs
    outline: tuple  # (slug_by_path, config text, their digest): hashed again only when either changes
    parsed: tuple[str, ...]  # the paths of the sources parsed by the last build
    unrendered: frozenset[str]  # paths parsed since a render last finished


@dataclass(frozen=True)
class LinkRecord:
    """The last good link: of which configuration, sources and drafts switch, and who links to whom."""

    config: CourseConfig
    drafts: bool
    slug_by_path: dict[str, str]
    course: Course
    linkers: dict[str, frozenset[str]]  # slug → slugs of the units whose pages link to it


@dataclass(frozen=True)
class RenderRecord:
    """What the last render saw; `course` is None unless every unit was rendered."""

    config_repr: tuple = (None, "")  # (configuration, digest of its repr): its repr lists every unit
    outline: str = ""  # digest of every unit's fields
    inputs: str = ""  # digest of what every page shares (outline, configuration, templates, switches)
    headings: dict[str, tuple] = field(default_factory=dict)  # slug → linked_facts (headings, targets), for linkers
    course: Course | None = None
    rerendered: tuple[str, ...] = ()  # the slugs, and index.html or 404.html, rendered by the last build
    unmarked: frozenset[str] = frozenset()  # slugs kept whole, with their URLs (render.Unmarked)
    asset_names: frozenset[str] = frozenset()  # every asset name the kept pages hold
    urls: dict = field(default_factory=dict)  # asset name → the URL it had last build


@dataclass
class Records:
    """What the last build did, stage by stage (None: that stage has not run yet, or must start cold)."""

    config: ConfigRead | None = None
    sources: SourcesRead | None = None
    parse: ParseRecord | None = None
    link: LinkRecord | None = None
    render: RenderRecord | None = None

    def parsed(self, record: ParseRecord) -> None:
        """Keep a parse's record: the sources read before it are parsed now."""
        self.parse = record
        if self.sources is not None:
            self.sources = replace(self.sources, unparsed=frozenset())

    def rendered(self, record: RenderRecord) -> None:
        """Keep a finished render's record: the pages parsed before it are rendered now."""
        self.render = record
        if self.parse is not None:
            self.parse = replace(self.parse, unrendered=frozenset())


# ---- load -----------------------------------------------------------------------------------


def kept_reader(memo: Memo, changes: Changes):
    """Return a `read(file, shown, problems)` that answers like `config.read_text`, keeping each text in
    the memo ("text": file → (stamp, text)) and reading it again only when its file changed on disk
    (or, when the watcher names every change, when it named this file)."""

    def read(file: Path, shown: str, problems: Problems) -> str | None:
        kept = memo.peek("text", file)
        if kept is not None and changes.known:
            return kept[1]
        try:
            stat = file.stat()
        except OSError:  # gone since it was listed: read_text reports it
            return read_text(file, shown, problems)
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size, stat.st_ctime_ns)  # any write changes the ctime
        if kept is not None and kept[0] == stamp:
            return kept[1]
        text = read_text(file, shown, problems)
        if text is not None:  # unreadable text is read (and reported) again on every build
            memo.put("text", file, (stamp, text))
        return text

    return read


def kept_notebooks(memo: Memo):
    """Return a `convert(shown, text, problems)` that answers like `notebook.read_notebook`, keeping each
    notebook's lesson text in the memo ("notebook": path → (SHA-256 of its text, lesson text, CellLines)) and
    converting again only when its text changed. A notebook with any problem, even a warning, is converted
    (and its problems reported) on every build. The command line fills the table from .coursegen-cache
    (disk_cache.load_notebooks): reading and validating the unchanged notebooks is most of a one-cell rebuild's load."""

    def convert(shown: str, text: str, problems: Problems):
        digest = hashlib.sha256(text.encode()).digest()
        kept = memo.peek("notebook", shown)
        if kept is not None and kept[0] == digest:
            return kept[1], kept[2]
        before = len(problems.items)
        found = read_notebook(shown, text, problems)
        if found is not None and len(problems.items) == before:
            memo.put("notebook", shown, (digest, *found))
        return found

    return convert


def load_course_config(root: Path, problems: Problems, read, last: ConfigRead | None):
    """Return `config.load_config`'s answer and the new ConfigRead, validating again only when
    course.yaml's text changed (the parse key holds that text)."""
    file = root / CONFIG_NAME
    text = read(file, CONFIG_NAME, Problems()) if file.is_file() else None
    shown_text = text if file.is_file() else ""
    if last is not None and last.config is not None and text is not None and last.text == text:
        return last.config, last
    before = len(problems.items)
    config = load_config(root, problems, read=read)
    return config, ConfigRead(shown_text, config if len(problems.items) == before else None)


def load_course_sources(
    root: Path, problems: Problems, read, last: SourcesRead | None, changes: Changes, convert=read_notebook
) -> SourcesRead:
    """Return the SourcesRead of `load.load_sources`' answer, listing and reading again only what the
    watcher named. Any problem while reading makes the next build look at everything again (and
    report the problem again)."""
    before = len(problems.items)
    old = last.sources if last is not None else {}
    unseen = changes.unseen if changes.known else None
    if unseen is None or any(path in SOURCE_DIRS for path in unseen):  # a folder itself came or went
        listed = {s.path: s for s in load_sources(root, problems, read, convert)}
        unseen = None  # every source is a new object
    else:
        listed = dict(old)
        for path in sorted(p for p in unseen if source_kind(p)):
            listed.pop(path, None)
            if os.path.lexists(root / path):
                source = load_source(root, path, problems, read, convert)
                if source is not None:
                    listed[path] = source
        if listed.keys() != old.keys():
            listed = dict(sorted(listed.items()))
    fresh = {
        path for path in (listed if unseen is None else unseen) if path in listed and old.get(path) is not listed[path]
    }
    old_uses = last.uses if last is not None else {}
    uses = {path: old_uses[path] for path in listed if path in old_uses and path not in fresh}
    uses.update((path, author_code_uses(listed[path].text)) for path in fresh)
    if last is not None and listed.keys() == old.keys():
        slug_by_path = last.slug_by_path  # the same object: parse keys compare it by identity first
    else:
        slug_by_path = {path: source.slug for path, source in listed.items()}
    unparsed = (last.unparsed if last is not None else frozenset()) | fresh  # kept until a parse looked at them
    changes.looked(len(problems.items) == before)
    return SourcesRead(listed, slug_by_path, uses, frozenset(unparsed))


# ---- parse ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParseKept:
    """What parse_pages may reuse: the memo's pages, the load's record, the last parse's (None: none)."""

    memo: Memo
    changes: Changes
    sources: SourcesRead
    config_text: str | None
    last: ParseRecord | None


def parse_kept(records: Records, memo: Memo, changes: Changes, fresh_parser: bool) -> ParseKept:
    """Return the ParseKept of `records` (after this build's load); nothing of the last parse when the
    parser is new (no kept page holds its syntax)."""
    assert records.sources is not None and records.config is not None  # the load stage ran first
    return ParseKept(memo, changes, records.sources, records.config.text, None if fresh_parser else records.parse)


@dataclass(frozen=True)
class ParsePlan:
    """The sources to parse again, with every candidate's key, and what they were keyed against."""

    todo: list[Source]
    keys: dict[str, tuple]
    inputs: ParseInputs
    outline: tuple
    every_source: bool  # every source was a candidate: pages of sources that are gone can be forgotten


def plan_parse(
    root: Path,
    package: str,
    catalogue: dict[str, str],
    sources: list[Source],
    loaded: SourcesRead,
    config_text: str | None,
    last: ParseRecord | None,
    memo: Memo,
    changes: Changes,
    extension_inputs: tuple = (),
    shared_inputs: tuple = (),
) -> ParsePlan:
    """Return which sources to parse: those whose parse key differs from the memo's page's.

    When the watcher named every change and nothing all pages share moved, only the sources the
    load stage read again are keyed; the others are the same objects as last time, so their keys
    are too. `last` is None when nothing kept may be reused (a new parser: no kept page holds its
    syntax); the caller then clears the "page" table."""
    outline = _parse_outline(loaded.slug_by_path, config_text, last)
    inputs = shared_parse_inputs(root, package, catalogue, outline[2], changes, extension_inputs, shared_inputs)
    inputs = replace(
        inputs,
        includes=changes.signature("includes", covers_includes, lambda: digest(included_texts(root, sources))),
    )
    if changes.known and last is not None and inputs == last.inputs:
        candidates = [loaded.sources[path] for path in sorted(loaded.unparsed) if path in loaded.sources]
    else:
        candidates = sources
    kept = memo.table("page")
    keys = {s.path: parse_key(s, inputs, _uses(s, loaded)) for s in candidates}
    todo = [s for s in candidates if (found := kept.get(s.path)) is None or found.key != keys[s.path]]
    return ParsePlan(todo, keys, inputs, outline, candidates is sources)


def keep_parsed(
    plan: ParsePlan, results: list[tuple], sources: list[Source], last: ParseRecord | None, memo: Memo
) -> tuple[list[ParsedPage], ParseRecord]:
    """Keep the pages `plan.todo` parsed to (`results`: (Page, problems) each) in the memo; return every
    source's ParsedPage, in order, and the new ParseRecord."""
    for source, (page, items) in zip(plan.todo, results):
        key = plan.keys[source.path]
        memo.put("page", source.path, ParsedPage(key, page, tuple(items), key_digest(key)))
    if len(memo.table("page")) != len(sources) or plan.every_source:  # a source is gone: forget its page
        memo.keep_only("page", [s.path for s in sources])
    kept = memo.table("page")
    parsed = tuple(s.path for s in plan.todo)
    unrendered = (last.unrendered if last is not None else frozenset()) | frozenset(parsed)
    return list(map(kept.__getitem__, map(PATH, sources))), ParseRecord(plan.inputs, plan.outline, parsed, unrendered)


def _parse_outline(slug_by_path: dict, config_text: str | None, last: ParseRecord | None) -> tuple:
    if last is not None and last.outline[:2] == (slug_by_path, config_text):  # the same dict: no compare
        return last.outline
    return (slug_by_path, config_text, digest(sorted(slug_by_path.items()), config_text))


def shared_parse_inputs(
    root: Path,
    package: str,
    catalogue: dict[str, str],
    outline_digest: str,
    changes: Changes,
    extension_inputs: tuple = (),
    shared_inputs: tuple = (),
) -> ParseInputs:
    """Return what parsing may consult beside a page's own text: the sources and course.yaml
    (`outline_digest`), media files, the message `catalogue` (parse rules write labels in the course's
    language); the course's Python `package`; widgets/, the templates, and `extension_inputs`, what the
    extensions found for pages with widgets or exercises (how they reach Pyodide: the widgets' `page_inputs`), and
    `shared_inputs`, what they found that any page may use (the citations' .bib texts: their `parse_inputs`)."""
    media = changes.signature("media", _covers_media, lambda: media_signature(root))
    return ParseInputs(
        all=digest(outline_digest, media, sorted(catalogue.items()), shared_inputs),
        calc=changes.signature(f"calc {package}", under(package), lambda: tree_signature(root / package)),
        widgets=digest(
            changes.signature(
                f"widgets {package}",
                under(package, "widgets", theme.COURSE_TEMPLATES),
                lambda: tree_signature(root / package, root / "widgets", *theme.folders(root)),
            ),
            extension_inputs,
        ),
    )


def _uses(source: Source, loaded: SourcesRead) -> tuple[bool, bool]:
    if loaded.sources.get(source.path) is source:
        return loaded.uses[source.path]
    return author_code_uses(source.text)  # a source the load stage did not give


def parse_key(source: Source, inputs: ParseInputs, uses: tuple[bool, bool]) -> tuple:
    """Return the key that changes whenever re-parsing `source` could give a different Page."""
    calc, widget = uses
    # An exercise also carries the theme's worker URL: it counts with widgets.
    shared = [inputs.all] + [inputs.calc] * calc + [inputs.widgets] * widget
    if "{include}" in source.text:
        shared.append(inputs.includes)
    return (source.path, source.kind, source.slug, source.text, *shared)  # compared, not hashed: cheaper


def media_signature(root: Path) -> str:
    """Return a hash of every file next to the sources that is no source, and of those under media/."""
    files = [
        f
        for folder in SOURCE_DIRS
        if (root / folder).is_dir()
        for f in sorted((root / folder).rglob("*"))
        if f.suffix not in SOURCE_SUFFIXES
    ]
    return tree_signature(*files, root / "media")


def _covers_media(path: str) -> bool:
    """Return whether a changed course path can change media_signature."""
    top, _, rest = path.partition("/")
    return top == "media" or (top in SOURCE_DIRS and not rest.endswith(SOURCE_SUFFIXES))


# ---- link -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LinkKept:
    """What link_pages may reuse: the last link's record (None when the watcher did not name every
    change), with this build's slugs and the pages it parsed again."""

    slug_by_path: dict[str, str]
    last: LinkRecord | None
    reparsed: list[Page]


def link_kept(records: Records, memo: Memo, changes: Changes) -> LinkKept:
    """Return the LinkKept of `records` (after this build's parse)."""
    assert records.sources is not None and records.parse is not None  # the parse stage ran first
    reparsed = [memo.peek("page", path).page for path in records.parse.parsed]
    return LinkKept(records.sources.slug_by_path, records.link if changes.known else None, reparsed)


# ---- render ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RenderedPage:
    """One page as the render stage keeps it (the memo's "rendered" table, by slug or file name)."""

    key: tuple | None  # render_key; None for a page kept whole (render.Unmarked): rendered every time
    parts: list[bytes]  # text, asset name, text, asset name, …, text (render.split_marked)


@dataclass(frozen=True)
class FilledPage:
    """A rendered page with this build's asset URLs in place (the memo's "filled" table, by slug)."""

    parts: list[bytes]  # the RenderedPage's parts it was filled from (the same object)
    urls: tuple[str, ...]
    page: bytes


@dataclass(frozen=True)
class WrittenPage:
    """A page the last command rendered and wrote, known by its file in the output folder and not read
    unless needed (the memo's "written" table, by slug or file name: disk_cache.load_rendered). Its file holds
    the page's text parts, of these lengths, with each asset name's URL between two of them."""

    file: Path  # in the output folder, as that build wrote it (its stamp was checked on loading)
    site_path: str
    key: tuple  # its render key (render_key)
    names: tuple[bytes, ...]  # the asset names in the page, in order
    lengths: tuple[int, ...]  # the length of each text part around them
    urls: tuple[str, ...]  # the URL each name was filled with

    def parts(self, written: Callable[[str, str], bytes | None]) -> list[bytes] | None:
        """Return the page read back and cut into its rendered parts (text, marker name, …, text), or
        None when the file no longer has the shape recorded. `written(name, url)` gives the bytes the
        file holds for a marker name filled with `url` (render.Filling.written; None: unknown)."""
        try:
            data = self.file.read_bytes()
        except OSError:
            return None
        if len(self.lengths) != len(self.names) + 1 or len(self.urls) != len(self.names):
            return None
        parts, at = [], 0
        for index, length in enumerate(self.lengths):
            parts.append(data[at : at + length])
            at += length
            if index < len(self.names):
                url = written(self.names[index].decode(), self.urls[index])
                if url is None or data[at : at + len(url)] != url:
                    return None
                parts.append(self.names[index])
                at += len(url)
        return parts if at == len(data) else None


@dataclass(frozen=True)
class UnchangedFile:
    """An output whose bytes are those of the output folder's file `site_path` (a WrittenPage whose key
    and asset URLs are this build's): the write stage links it into the new site without reading it."""

    site_path: str


@dataclass(frozen=True)
class RenderKept:
    """What render_site may reuse: the memo's pages, the last render's record (None: none), and from
    this build's records the pages parsed since that render and who links to whom."""

    memo: Memo
    changes: Changes
    last: RenderRecord | None = None
    reparsed: tuple[str, ...] = ()  # slugs, in path order
    linkers: dict[str, frozenset[str]] = field(default_factory=dict)


def render_kept(records: Records, memo: Memo, changes: Changes) -> RenderKept:
    """Return the RenderKept of `records` (the link stage's of this build)."""
    loaded = records.sources.sources if records.sources is not None else {}
    unrendered = records.parse.unrendered if records.parse is not None else ()
    reparsed = tuple(loaded[path].slug for path in sorted(unrendered) if path in loaded)
    linkers = records.link.linkers if records.link is not None else {}
    return RenderKept(memo, changes, records.render, reparsed, linkers)


@dataclass
class RenderPlan:
    """What every page of this build shares (a digest), and the units whose render key may differ
    from the memo's: the ones an edit reaches, or None for every unit."""

    shared: str
    candidates: list | None


def plan_render(course: Course, root: Path, common: dict, kept: RenderKept) -> tuple[RenderPlan, RenderRecord]:
    """Return this build's RenderPlan and the start of its record (no page rendered yet), forgetting
    the kept pages of units that are gone when every unit is looked at."""
    memo, last = kept.memo, kept.last or RenderRecord()
    extra = sorted((k, repr(v)) for k, v in common.items() if k not in ("course", "config", "asset"))
    themes = theme_signature(root, kept.changes)
    config_repr = last.config_repr
    if config_repr[0] is not course.config:  # its repr lists every unit: hashed once per configuration
        config_repr = (course.config, digest(repr(course.config)))
    candidates = changed_units(course, last, kept)
    outline = last.outline
    if candidates is not None and digest(outline, config_repr[1], extra, themes) != last.inputs:
        candidates = None  # the outline stayed, but something else every page shares moved
    if candidates is None:  # the outline may have changed: hash it again, and look at every page
        outline = digest(tuple(unit_fields(u) for u in course.units))
        course_pages = [name for name in memo.table("rendered") if "." in name]  # "index.html": slugs have no dot
        memo.keep_only("rendered", [u.slug for u in course.written] + course_pages)
        memo.keep_only("filled", list(memo.table("rendered")))
        headings = {u.slug: linked_facts(u.page) for u in course.written if u.page is not None}
    else:
        headings = {**last.headings, **{unit.slug: linked_facts(unit.page) for unit in candidates}}
    inputs = digest(outline, config_repr[1], extra, themes)
    record = replace(
        last, config_repr=config_repr, outline=outline, inputs=inputs, headings=headings, course=None, rerendered=()
    )
    return RenderPlan(inputs, candidates), record


def changed_units(course: Course, last: RenderRecord, kept: RenderKept) -> list | None:
    """Return the units whose render key may differ from the last render's, or None for "any".

    Only when the watcher named every change, and the configuration, the sources and every
    re-parsed page's place in the outline (title, summary, …) stayed the same: then a page
    can only change through its own text or the headings of a page it links to, and those
    pages are the re-parsed ones and the pages recorded as linking to them."""
    previous = last.course
    if (
        not kept.changes.known
        or previous is None
        or previous.config is not course.config
        or len(previous.written) != len(course.written)
    ):
        return None
    changed: list = [course.unit(slug) for slug in kept.reparsed]
    if any(unit is None or unit_fields(unit) != unit_fields(previous.unit(unit.slug)) for unit in changed):
        return None  # the outline changed (and with it the course map every page may show)
    reached = {unit.slug: unit for unit in changed}
    for unit in changed:
        if unit.page is not None and linked_facts(unit.page) != last.headings.get(unit.slug):
            reached.update((slug, course.unit(slug)) for slug in kept.linkers.get(unit.slug, ()))
    reached.update((slug, course.unit(slug)) for slug in last.unmarked)
    return [unit for unit in reached.values() if unit is not None and unit.page is not None]


def linked_facts(page) -> tuple:
    """Return what a page that links to `page` may show of it: its headings (a review's revisit list)
    and its numbered targets (a reference's "Figure 3.2": stages/references.py)."""
    return page.headings, page.derived.get("targets")


def render_key(unit, course: Course, plan: RenderPlan, record: RenderRecord, memo: Memo) -> tuple:
    """Return the key that changes whenever re-rendering `unit` could give a different page."""
    prev, next_ = course.neighbours(unit.slug)
    # Pages show the headings and numbers of what they link to (linked_facts).
    linked = tuple((slug, record.headings.get(slug)) for slug in sorted({link.slug for link in unit.page.links}))
    parsed = memo.peek("page", unit.page.source.path)
    page_key = (
        parsed.short_key
        if parsed is not None and parsed.page is unit.page
        else digest(unit.page.source.path, unit.page.source.text, unit.page.html)
    )  # a page the parse stage did not keep
    return (page_key, unit_fields(unit), unit_fields(prev), unit_fields(next_), linked, plan.shared)


def unit_fields(unit) -> tuple:
    """Return what templates read from a unit other than its page (None for no unit)."""
    if unit is None:
        return ()
    return (
        unit.number,
        unit.slug,
        unit.kind,
        unit.title,
        unit.summary,
        unit.part,
        unit.url,
        getattr(unit, "topics", ()),
        unit.page is not None,
    )
