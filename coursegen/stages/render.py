"""Render stage: Jinja templates → {site path: bytes}. Nothing here touches the disk but templates.

Pages are rendered through the build's memo: a unit page is rendered again only when its *render
key* changed (its parse key, its unit and neighbours, the headings of the pages it links to, and
what every page shares: the course outline, the configuration, the templates, the serve switch),
the index and 404 only when what every page shares did. Asset URLs are not part of the key:
pages are rendered with a marker in place of each `asset(name)` URL and the markers are replaced
afterwards (`split_marked`, `filled_page`), so a new search index does not re-render every page.
With a fresh memo every page renders: the same code path as a rebuild.
"""

from __future__ import annotations

import contextlib
import operator
import os
import re
import traceback
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from coursegen.cache import cache_key, signed, verified
from coursegen.errors import ContentError, Problem
from coursegen.incremental import (
    Changes,
    FilledPage,
    RenderedPage,
    RenderKept,
    RenderPlan,
    RenderRecord,
    UnchangedFile,
    WrittenPage,
    plan_render,
    render_key,
    theme_signature,
)
from coursegen.memo import Memo, remembered
from coursegen.model import Course, Unit, per_unit_problems
from coursegen.parallel import parallel_map
from coursegen.paths import climbs_out
from coursegen.stages import csp
from coursegen.stages.assets import Assets, course_theme_assets, import_map, load_theme_assets
from coursegen.stages.course_units import UNITS, CourseUnits
from coursegen.stages.references import fill_references
from coursegen.theme import files as theme
from coursegen.theme import messages

MARK_OPEN, MARK_CLOSE = "\ue000", "\ue001"  # private-use characters: rare in author text (see split_marked)
MARKER = re.compile(f"{MARK_OPEN}([^{MARK_CLOSE}]*){MARK_CLOSE}".encode())
URL = operator.attrgetter("url")  # map(URL, units): in C, for 2,000 units a rebuild


@dataclass(frozen=True)
class RenderOptions:
    """Switches: the live-reload script in serve mode (changes output); how many processes render (does not)."""

    serve_mode: bool = False
    jobs: int | None = None  # processes rendering pages (see parallel.parallel_map); None: one per core


ENVIRONMENT: dict[str, Any] = {
    "autoescape": True,
    "undefined": jinja2.StrictUndefined,
    "trim_blocks": True,
    "lstrip_blocks": True,
    "keep_trailing_newline": True,
}


def make_environment(folders: tuple[Path, ...], compiled: jinja2.BytecodeCache | None = None) -> jinja2.Environment:
    """Return a strict, autoescaping Jinja environment over the template folders, first match wins
    (`template_folders`: the course's templates/, the packaged theme, then the course's widgets/)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(f) for f in folders]), bytecode_cache=compiled, **ENVIRONMENT
    )
    env.globals["t"] = messages.translate  # the UI text in the course's language (theme/messages.py)
    env.globals["unit_label"], env.globals["run_text"] = messages.unit_label_in_page, messages.run_text_in_page
    env.filters["num"] = plain_number
    return env


def template_folders(root: Path) -> tuple[Path, ...]:
    """Return the folders templates are looked for in: the theme's (the course's templates/ first), then
    widgets/, whose `<name>/result.html` the widget partial includes (fragments made while parsing)."""
    return (*theme.folders(root), root / "widgets")


def plain_number(value) -> str:
    """Return a number as an author would write it, with no trailing .0 (the templates' `num` filter)."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


class CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Jinja's compiled templates, kept in a folder between runs (Jinja's own bytecode cache).

    Jinja keys each compiled file by template name and file path, so the course's override of a
    template and the theme's own never share an entry. Compiling the theme costs a command-line
    build over a tenth of a second of CPU; loading it back, a few milliseconds. Each file is checked
    against its template's source, so an edited template is compiled again; the Jinja version and our
    environment settings join that check, since they shape the compiled code too. The cache
    only saves time: a file that cannot be read is compiled afresh, a folder that cannot be
    written is skipped, and with `write=False` (the `check` command) nothing is written at all.
    """

    SALT = f"jinja2 {jinja2.__version__} {sorted((k, repr(v)) for k, v in ENVIRONMENT.items())}\n"

    def __init__(self, folder: Path, write: bool = True):
        super().__init__(str(folder))
        self.write = write
        self._cache_key: list[bytes | None] = []  # the user's key, once read

    def get_source_checksum(self, source: str) -> str:
        return super().get_source_checksum(self.SALT + source)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        """Load the compiled template when its file is signed with the user's cache key (coursegen.cache):
        loading it runs it, so a file planted in the course's cache is ignored and the template compiled."""
        file = Path(self._get_cache_filename(bucket))
        try:
            data = verified(self._key(), f"templates/{file.name}", file.read_bytes())
            if data is not None:
                bucket.bytecode_from_string(bytes(data))
        except Exception:  # noqa: BLE001 - a damaged or foreign file: compile the template instead
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        key = self._key()
        if not self.write or key is None:
            return
        file = Path(self._get_cache_filename(bucket))
        temporary = file.with_name(f".{file.name}.{os.getpid()}")
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_bytes(signed(key, f"templates/{file.name}", bucket.bytecode_to_string()))
            temporary.replace(file)  # a link planted in its place is replaced, not written through
        except OSError:  # read-only checkout, full disk: the next run compiles again, nothing worse
            with contextlib.suppress(OSError):
                temporary.unlink()

    def _key(self) -> bytes | None:
        if not self._cache_key:
            self._cache_key.append(cache_key())
        return self._cache_key[0]


SHARED_NAMES = (  # what every template receives from the engine (render_site)
    "course",
    "config",
    "asset",
    "serve_mode",
    "total",
    "messages",
    "import_map",
    "csp",
    "course_units",
)
PAGE_NAMES = ("canonical", "unit", "page", "body", "toc", "prev", "next")  # and what a page's own receives


def engine_names(env: jinja2.Environment) -> frozenset[str]:
    """Return every name the engine gives templates: its context and its globals (`t`, `unit_label`, …)."""
    return frozenset((*SHARED_NAMES, *PAGE_NAMES, *env.globals))


def render_site(
    course: Course,
    root: Path,
    options: RenderOptions = RenderOptions(),
    extra_assets: Assets | None = None,
    csp_sources: dict | None = None,
    kept: RenderKept | None = None,
    compiled: jinja2.BytecodeCache | None = None,
    page_context: dict | None = None,
) -> tuple[dict[str, bytes | UnchangedFile], RenderRecord]:
    """Return every output file of the site, keyed by its path inside site/ (unsorted), and this render's record,
    rendering again only what `kept` says may have changed (nothing kept, the default: everything).
    `csp_sources` and `page_context` are the extensions' (coursegen.extensions: their `csp` and
    `page_context` events)."""
    if kept is None:
        memo = Memo()
        kept = RenderKept(memo, Changes(memo))
    memo = kept.memo
    theme_key = theme_signature(root, kept.changes)
    env = environment(root, memo, compiled, theme_key)
    assets = course_theme_assets(root, course.config, memo, theme_key)
    scripts = list(assets.urls)  # the theme's own files: its scripts make the pages' module graph
    if extra_assets:
        assets.overlay(extra_assets)
    modules = import_map(scripts, assets.url)
    engine = {
        "course": course,
        "config": course.config,
        "asset": _asset_url(assets),
        "serve_mode": options.serve_mode,
        "total": len(course.units),
        "messages": messages.catalogue(root, course.config, memo),
        "import_map": Markup(modules),
        "csp": csp.policy(course.config, root, csp_sources, (modules,)),
        "course_units": CourseUnits(env, root),  # the list of every unit, rendered once (stages/course_units.py)
    }
    assert engine.keys() == set(SHARED_NAMES)  # what extensions.page_context keeps the extensions' names from
    common = {**engine, **(page_context or {}), **engine}  # the same order as before; the engine's values win
    out: dict[str, bytes | UnchangedFile] = dict(assets.files)
    plan, record = plan_render(course, root, common, kept)
    common["course_units"].prepare(common, memo, plan.shared)
    rerendered: list[str] = []
    fill = Filling(common["asset"], common["course_units"], course)
    out["index.html"] = _course_page(env, "index.html", "", common, fill, memo, plan, rerendered)
    units = course.written
    meanwhile = extra_assets.make_early if extra_assets else None
    pages, record = render_units(env, units, course, common, fill, memo, plan, record, options.jobs, meanwhile)
    rerendered += record.rerendered
    out.update(zip(map(URL, units), pages))
    for unit in units:
        for site_path, source_path in unit.page.assets:
            out[site_path] = published_file(root, unit.page.source, source_path)
    out["404.html"] = _course_page(env, "404.html", None, common, fill, memo, plan, rerendered)
    if SESSION not in out:  # the review session (docs/reviews.md), unless a unit took its name
        out[SESSION] = _course_page(env, SESSION, SESSION, common, fill, memo, plan, rerendered)
    out[".nojekyll"] = b""
    if course.config.base_url:
        out["sitemap.xml"] = sitemap(course).encode()
    return out, replace(record, rerendered=tuple(rerendered))  # in no order: the pipeline sorts the whole site once


SESSION = "review-session.html"
HINT_GONE = "restore the file, or change the link"


def published_file(root: Path, source, path: str) -> bytes:
    """Return the bytes of a course file a page shows or links to; one gone since the page was parsed (a file
    outside the folders whose changes re-parse pages) is a problem at the source's line that names it."""
    try:
        return (root / path).read_bytes()
    except OSError as err:
        name = path.rsplit("/", 1)[-1]
        line = next((n for n, text in enumerate(source.text.split("\n"), 1) if name in text), 1)
        problem = Problem(
            source.path, line, 0, f"'{path}', which this page links to, cannot be read: {err.strerror}", HINT_GONE
        )
        raise ContentError([problem]) from None


def environment(
    root: Path, memo: Memo, compiled: jinja2.BytecodeCache | None = None, theme_key: str | None = None
) -> jinja2.Environment:
    """Return the build's one Jinja environment (pages, and widgets' figures while parsing), kept in the
    memo across builds (it reloads templates that changed) while the template folders and the names of
    the course's own templates stay the same (a course may add its templates/, or copy one of the theme's
    files into it, during `serve`: Jinja would go on using the theme's file it loaded, which is unchanged).
    `theme_key` (incremental.theme_signature) keeps the names' listing; None: listed again."""
    folders = template_folders(root)

    def listing() -> tuple[str, ...]:
        return _override_names(root)

    overrides = remembered(memo, "template overrides", theme_key, listing) if theme_key else listing()
    return memo.get("jinja", (folders, compiled, overrides), lambda: make_environment(folders, compiled))


def _override_names(root: Path) -> tuple[str, ...]:
    """Return the names of the files in the course's templates/, which replace the theme's files of those names."""
    own = theme.folders(root)[:-1]  # the course's folder, when it has one
    return tuple(sorted(p.relative_to(own[0]).as_posix() for p in own[0].rglob("*") if p.is_file())) if own else ()


def warm_up_rendering(
    root: Path, memo: Memo, compiled: jinja2.BytecodeCache | None = None, theme_key: str | None = None
) -> None:
    """Compile every template and load the theme assets ahead of the render stage.

    Run while pages are parsed (parse_pages' `meanwhile`): this work would otherwise wait
    for parsing to end and then run on one core. A template that does not compile is left
    for the render stage, which reports it with its line.
    """
    env = environment(root, memo, compiled, theme_key)
    for name in env.list_templates(filter_func=lambda name: name.endswith(".html")):
        try:
            env.get_template(name)
        except jinja2.TemplateError:
            pass
    load_theme_assets(root, memo, theme_key)


def _asset_url(assets: Assets):
    """Return the templates' `asset(name)`: a name no folder holds is a template error at its line."""

    def asset(name: str) -> str:
        try:
            return assets.url(name)
        except KeyError:
            raise jinja2.TemplateRuntimeError(
                f"asset({name!r}): no such file in templates/assets/ or the theme's assets"
            ) from None

    return asset


# ---- what to render again -------------------------------------------------------------------
# The memo keeps "rendered" (slug or file name → RenderedPage) and "filled" (slug → FilledPage);
# what to look at again is incremental.plan_render's.


def render_units(
    env,
    units,
    course: Course,
    common: dict,
    fill: Filling,
    memo: Memo,
    plan: RenderPlan,
    record: RenderRecord,
    jobs: int | None = None,
    meanwhile=None,
) -> tuple[list[bytes | UnchangedFile], RenderRecord]:
    """Return each unit's page (an UnchangedFile for one the last command wrote, unread) and the record
    with them rendered, rendering again only those whose render key changed, in `jobs` processes
    (`meanwhile()` runs in this process once the work is shared out: see parallel.parallel_map)."""
    candidates = units if plan.candidates is None else plan.candidates
    kept, written = memo.table("rendered"), memo.table("written")  # written: the last command's, unread
    for unit in candidates if written else ():
        if unit.slug in written and unit.slug not in kept:
            _read_if_refilled(written[unit.slug], unit.slug, fill, memo)
    keys = [render_key(unit, course, plan, record, memo) for unit in candidates]
    todo = [(unit, key) for unit, key in zip(candidates, keys) if _kept_key(unit.slug, kept, written) != key]

    def render(job) -> list[bytes]:
        return split_marked(lambda context: render_unit(env, job[0], course, context), common)

    # The first page of each template renders here before the work splits: Jinja compiles a
    # template and its partials on first use, and the pool's forks then inherit them compiled.
    seen: set[str] = set()
    warm: list[tuple] = []
    rest: list[tuple] = []
    for job in todo:
        name = unit_template(env, job[0]).name
        (rest if name in seen else warm).append(job)
        seen.add(name)
    parts = {unit.slug: render((unit, key)) for unit, key in warm}
    parts.update((unit.slug, split) for (unit, _), split in zip(rest, parallel_map(render, rest, jobs, meanwhile)))
    unmarked, asset_names = set(record.unmarked), set(record.asset_names)
    for unit, key in todo:
        split = parts[unit.slug]
        memo.put("rendered", unit.slug, RenderedPage(_kept(key, split), split))
        memo.pop("written", unit.slug)
        unmarked.discard(unit.slug)
        if isinstance(split, Unmarked):
            unmarked.add(unit.slug)
        asset_names.update(name.decode() for name in split[1::2])
    kept = memo.table("rendered")
    if plan.candidates is None:  # every asset name the kept pages hold
        asset_names = {name.decode() for unit in units for name in _names(unit.slug, kept, written)}
    urls = _asset_urls(fill, asset_names)
    if urls == record.urls and plan.candidates is not None:  # the others' bytes are as they were
        done, filled = {unit.slug for unit, _ in todo}, memo.table("filled")
        pages = [filled_page(u.slug, fill, memo) if u.slug in done else filled[u.slug].page for u in units]
    else:
        pages = [_page_of(unit.slug, fill, memo) for unit in units]
    done_record = replace(
        record,
        course=course,  # the next build's changes are relative to this one
        rerendered=tuple(unit.slug for unit, _ in todo),
        unmarked=frozenset(unmarked),
        asset_names=frozenset(asset_names),
        urls=urls,
    )
    return pages, done_record


def _kept_key(slug: str, kept, written) -> tuple | None:
    """Return the render key of the page kept for `slug`: rendered by this session, else written by the
    last command (None: no page kept)."""
    found = kept.get(slug) or written.get(slug)
    return found.key if found is not None else None


def _names(slug: str, kept, written):
    """Return the asset names in the page kept for `slug`, as bytes."""
    found = kept.get(slug)
    return found.parts[1::2] if found is not None else written[slug].names


def _read_if_refilled(page: WrittenPage, slug: str, fill: Filling, memo: Memo) -> None:
    """Move a page the last command wrote into the "rendered" table, read back from its file, when its
    asset URLs are not this build's (it is filled anew); forget it when it cannot be (a name is gone,
    the file changed): it is rendered again."""
    try:
        same = tuple(fill(name.decode()) for name in page.names) == page.urls
    except jinja2.TemplateError:  # a name is gone: rendering it again reports the template's line
        same, page = False, None
    if same:
        return
    memo.pop("written", slug)
    parts = page.parts(fill.written) if page is not None else None
    if parts is not None:
        memo.put("rendered", slug, RenderedPage(page.key, parts))


def _page_of(slug: str, fill: Filling, memo: Memo):
    """Return a kept unit page with this build's asset URLs: filled_page's, or an UnchangedFile for a page
    the last command wrote (its URLs are this build's: _read_if_refilled)."""
    written = memo.peek("written", slug) if memo.peek("rendered", slug) is None else None
    return UnchangedFile(written.site_path) if written is not None else filled_page(slug, fill, memo)


def _asset_urls(fill: Filling, names) -> dict:
    """Return the URL of every asset name the kept pages hold (None for one no longer there). The
    markers of the list of every unit (one per page) all fill from the list's digest: it is given
    once, under UNITS, so a rebuild asks for a few dozen URLs, not one per unit."""

    def url(name: str):
        try:
            return fill(name)
        except jinja2.TemplateError:  # no longer there: a page naming it must be filled (and fail) again
            return None

    urls = {name: url(name) for name in sorted(name for name in names if not name.startswith(UNITS))}
    if len(urls) < len(names):  # the pages hold unit-list markers
        urls[UNITS] = url(UNITS)
    return urls


def _course_page(
    env: jinja2.Environment,
    name: str,
    canonical_path,
    common: dict,
    fill: Filling,
    memo: Memo,
    plan: RenderPlan,
    rerendered: list,
) -> bytes | UnchangedFile:
    """Return the index or 404 page, made from the course outline, configuration and templates alone:
    rendered again (and its name added to `rerendered`) only when what every page shares changed."""
    key = ("course page", plan.shared)
    if (written := memo.peek("written", name)) is not None and memo.peek("rendered", name) is None:
        _read_if_refilled(written, name, fill, memo)  # may move it to "rendered", or forget it
    if (written := memo.peek("written", name)) is not None and written.key == key:
        return UnchangedFile(written.site_path)
    kept = memo.peek("rendered", name)
    if kept is None or kept.key != key:
        split = split_marked(lambda context: _page(env, [name], context, canonical_path=canonical_path), common)
        memo.put("rendered", name, RenderedPage(_kept(key, split), split))
        memo.pop("written", name)
        rerendered.append(name)
    return filled_page(name, fill, memo)


def filled_page(slug: str, fill: Filling, memo: Memo) -> bytes:
    """Return a rendered page with its markers replaced by this build's asset URLs and unit list."""
    parts = memo.peek("rendered", slug).parts  # text, marker name, text, marker name, …, text
    urls = tuple(fill(name.decode()) for name in parts[1::2])
    filled = memo.peek("filled", slug)
    if filled is None or filled.parts is not parts or filled.urls != urls:  # same page, same URLs: same bytes
        pieces: list = []
        for index, part in enumerate(parts):
            pieces += [part] if index % 2 == 0 else fill.value(part.decode(), urls[index // 2])
        filled = FilledPage(parts, urls, b"".join(pieces))
        memo.put("filled", slug, filled)
    return filled.page


class Unmarked(list):
    """A page rendered with its asset URLs in place, as one part: its text holds a marker character."""


def split_marked(render, common: dict) -> list[bytes]:
    """Return `render(context)` split at its asset markers: text, asset name, text, …, text.

    A page whose own text holds what reads as a marker (an icon font's private-use code points)
    splits into other names than the ones asked for: it is rendered again with the real URLs and
    kept as one Unmarked part. (One split, compared by name, instead of counting both marker
    characters through the page: at 2,000 lessons, 650 MB of pages, that counting took 0.9 s.)
    """
    names: list[str] = []
    page = render({**common, "asset": _Marking(common["asset"], names)})
    split = MARKER.split(page)
    if split[1::2] == [name.encode() for name in names]:
        return split
    return Unmarked([render(common)])


def _kept(key: tuple, split: list[bytes]):
    """Return the render key to keep for a split page; an Unmarked one holds this build's URLs, so none."""
    return None if isinstance(split, Unmarked) else key


class _Marking:
    """An `asset(name)` that checks the name but answers with a marker for later (noted in `names`);
    `mark(name)` marks what is not an asset (the list of every unit: course_units.UNITS)."""

    def __init__(self, asset, names: list[str]):
        self.asset, self.names = asset, names

    def __call__(self, name: str) -> str:
        self.asset(name)  # a missing asset is still a template error, as without a memo
        return self.mark(name)

    def mark(self, name: str) -> str:
        self.names.append(name)
        return f"{MARK_OPEN}{name}{MARK_CLOSE}"


class Filling:
    """What fills a rendered page's markers in this build: `fill(name)` is what the page's bytes there
    depend on (an asset's URL; for the list of every unit, its digest), `value(name)` those bytes."""

    def __init__(self, asset, units: CourseUnits, course: Course):
        self.asset, self.units, self.course = asset, units, course  # the course: each unit's page URL

    def __call__(self, name: str) -> str:
        return self.units.token() if name.startswith(UNITS) else self.asset(name)

    def value(self, name: str, filled: str) -> list:
        """Return the bytes for marker `name`, whose fill(name) is `filled`, as pieces to join."""
        if name.startswith(UNITS):
            slug = name[len(UNITS) :]
            unit = self.course.unit(slug)  # the page's own unit
            assert unit is not None
            return self.units.filled(unit.url)
        return [filled.encode()]

    def written(self, name: str, filled: str) -> bytes | None:
        """Return the bytes a page filled with `filled` for marker `name` holds there, as far as this
        build can tell (None: a unit list other than this build's)."""
        if name.startswith(UNITS) and self(name) != filled:
            return None
        return b"".join(self.value(name, filled))


def missing_templates(course: Course, root: Path, problems, memo: Memo | None = None, theme_key: str | None = None):
    """Report each unit whose front matter names a template that neither the course nor the theme has (in
    `serve`, with the theme's `theme_key`, only the units replaced since the last build are looked at)."""
    per_unit_problems(
        memo, "missing templates", course.written, lambda unit, found: _missing(unit, root, found), problems, theme_key
    )


def _missing(unit: Unit, root: Path, problems) -> None:
    name = unit.page.meta.get("template")
    if name:
        source = unit.page.source
        line = next((n for n, row in enumerate(source.text.splitlines(), 1) if row.startswith("template:")), 1)
        if climbs_out(name):
            problems.error(source.path, line, f"'{name}' is outside the course", "name a template by its file name")
        elif theme.find(root, name) is None:
            problems.error(
                source.path,
                line,
                f"template '{name}' is in neither templates/ nor the theme",
                "add templates/" + name + ", or name one of the theme's templates, e.g. lesson.html",
            )


def render_unit(env: jinja2.Environment, unit: Unit, course: Course, common: dict) -> bytes:
    """Return one lesson or review page."""
    prev, next_ = course.neighbours(unit.slug)
    page = unit.page
    return _page(
        env,
        [unit_template(env, unit)],
        common,
        canonical_path=unit.url,
        unit=unit,
        page=page,
        body=Markup(fill_references(page.html, course)),
        toc=[h for h in page.headings if h.level <= 3],
        prev=prev,
        next=next_,
    )


def unit_template(env: jinja2.Environment, unit: Unit) -> jinja2.Template:
    """Return the template a unit's page is made with: its own, its front matter's, or its kind's."""
    names = [f"{unit.kind}-{unit.slug}.html", f"{unit.kind}.html"]
    if unit.page.meta.get("template"):
        names.insert(0, unit.page.meta["template"])
    return env.select_template(names)


def _page(env: jinja2.Environment, names: list, common: dict, canonical_path, **context) -> bytes:
    base_url = common["config"].base_url
    canonical = base_url + canonical_path if base_url and canonical_path is not None else ""
    assert {"canonical", *context} <= set(PAGE_NAMES)  # extensions.page_context keeps extensions from these
    html = env.select_template(names).render(**common, canonical=canonical, **context)
    return html.encode("utf-8")


def sitemap(course: Course) -> str:
    """Return sitemap.xml listing the index and every published unit."""
    base = course.config.base_url
    urls = [base] + [base + u.url for u in course.written]
    stamp = os.environ.get("SOURCE_DATE_EPOCH")
    lastmod = f"<lastmod>{datetime.fromtimestamp(int(stamp), UTC):%Y-%m-%d}</lastmod>" if stamp else ""
    rows = "".join(f"  <url><loc>{Markup.escape(u)}</loc>{lastmod}</url>\n" for u in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + rows + "</urlset>\n"
    )


def template_problem(err: Exception, root: Path, also: tuple[str, ...] = ()) -> Problem | None:
    """Return a Problem pointing at the template line that failed: one of the course's or the theme's
    templates, or a file under one of the course folders `also` (a widget's result.html); None when
    no template raised it (a bug, which keeps its traceback)."""

    def is_ours(file: str) -> bool:
        return theme.is_template_file(root, file) or any(file.startswith(str(root / folder) + "/") for folder in also)

    path, line = "", 1
    if isinstance(err, jinja2.TemplateSyntaxError) and err.filename:
        path, line = err.filename, err.lineno or 1
    else:
        for frame in reversed(traceback.extract_tb(err.__traceback__)):
            if is_ours(frame.filename):
                path, line = frame.filename, frame.lineno or 1
                break
    if not path and not isinstance(err, jinja2.TemplateError):
        return None
    message = err.message if isinstance(err, jinja2.TemplateError) and err.message else str(err)
    if not isinstance(err, jinja2.TemplateError):
        message = f"{type(err).__name__}: {message}"
    return Problem(theme.shown_path(root, path) if path else "templates", line, 0, f"template error: {message}")
