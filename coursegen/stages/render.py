"""Render stage: Jinja templates → {site path: bytes}. Nothing here touches the disk but templates."""
from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import jinja2
from markupsafe import Markup

from coursegen.theme import appearance
from coursegen.features import csp
from coursegen.theme import files as theme
from coursegen.stages.assets import Assets, import_map, load_theme_assets
from coursegen.errors import Problem
from coursegen.model import Course, Unit
from coursegen.paths import climbs_out


@dataclass(frozen=True)
class RenderOptions:
    """Switches: the live-reload script in serve mode (changes output); how many processes render (does not)."""

    serve_mode: bool = False
    jobs: int | None = None  # processes rendering pages (see parallel.parallel_map); None: one per core


ENVIRONMENT = {"autoescape": True, "undefined": jinja2.StrictUndefined,
               "trim_blocks": True, "lstrip_blocks": True, "keep_trailing_newline": True}


def make_environment(folders: tuple[Path, ...], compiled: jinja2.BytecodeCache | None = None) -> jinja2.Environment:
    """Return a strict, autoescaping Jinja environment over the template folders, first match wins
    (`theme.folders`: the course's templates/, then the packaged theme)."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader([str(f) for f in folders]), bytecode_cache=compiled,
                              **ENVIRONMENT)


class CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Jinja's compiled templates, kept in a folder between runs (Jinja's own bytecode cache).

    Jinja keys each compiled file by template name and file path, so the course's override of a
    template and the theme's own never share an entry. Compiling the theme costs a command-line build over a tenth of a second of CPU; loading it
    back, a few milliseconds. Jinja keys each file by template path and checks it against the
    template's source, so an edited template is compiled again; the Jinja version and our
    environment settings join that check, since they shape the compiled code too. The cache
    only saves time: a file that cannot be read is compiled afresh, a folder that cannot be
    written is skipped, and with `write=False` (the `check` command) nothing is written at all.
    """

    SALT = f"jinja2 {jinja2.__version__} {sorted((k, repr(v)) for k, v in ENVIRONMENT.items())}\n"

    def __init__(self, folder: Path, write: bool = True):
        super().__init__(str(folder))
        self.write = write

    def get_source_checksum(self, source: str) -> str:
        return super().get_source_checksum(self.SALT + source)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - a damaged or foreign file: compile the template instead
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if not self.write:
            return
        try:
            Path(self.directory).mkdir(parents=True, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:  # read-only checkout, full disk: the next run compiles again, nothing worse
            pass


def render_site(course: Course, root: Path, options: RenderOptions = RenderOptions(),
                extra_assets: Assets | None = None, cache=None,
                csp_sources: dict | None = None) -> dict[str, bytes]:
    """Return every output file of the site, keyed by its path inside site/."""
    folders = theme.folders(root)
    env = cache.environment(folders) if cache else make_environment(folders)  # cache: incremental.BuildCache
    assets = load_theme_assets(root)
    scripts = list(assets.urls)  # the theme's own files: its scripts make the pages' module graph
    if extra_assets:
        assets.urls.update(extra_assets.urls)
        assets.files.update(extra_assets.files)
    modules = import_map(scripts, assets.url)
    common = {"course": course, "config": course.config, "asset": _asset_url(assets),
              "serve_mode": options.serve_mode, "total": len(course.units), "import_map": Markup(modules),
              "csp": csp.policy(course.config, root, csp_sources, (modules,)),
              **appearance.page_values(course.config)}
    out: dict[str, bytes] = dict(assets.files)
    if cache:
        cache.start_render(course, root, common)
    out["index.html"] = _course_page(env, "index.html", "", common, cache)
    units = course.written
    pages = cache.render_units(env, units, course, common, options.jobs) if cache else [
        render_unit(env, unit, course, common) for unit in units]
    for unit, page in zip(units, pages):
        out[unit.url] = page
        for site_path, source_path in unit.page.assets:
            out[site_path] = (root / source_path).read_bytes()
    out["404.html"] = _course_page(env, "404.html", None, common, cache)
    out[".nojekyll"] = b""
    if course.config.base_url:
        out["sitemap.xml"] = sitemap(course).encode()
    return dict(sorted(out.items()))


def _asset_url(assets: Assets):
    """Return the templates' `asset(name)`: a name no folder holds is a template error at its line."""
    def asset(name: str) -> str:
        try:
            return assets.url(name)
        except KeyError:
            raise jinja2.TemplateRuntimeError(
                f"asset({name!r}): no such file in templates/assets/ or the theme's assets") from None
    return asset


def _course_page(env: jinja2.Environment, name: str, canonical_path, common: dict, cache) -> bytes:
    """Return the index or 404 page, through the cache when there is one."""
    def render(context: dict) -> bytes:
        return _page(env, [name], context, canonical_path=canonical_path)
    return cache.course_page(name, render, common) if cache else render(common)


def missing_templates(course: Course, root: Path, problems) -> None:
    """Report each unit whose front matter names a template that neither the course nor the theme has."""
    for unit in course.written:
        name = unit.page.meta.get("template")
        if not name:
            continue
        source = unit.page.source
        line = next((n for n, row in enumerate(source.text.splitlines(), 1) if row.startswith("template:")), 1)
        if climbs_out(name):
            problems.error(source.path, line, f"'{name}' is outside the course", "name a template by its file name")
        elif theme.find(root, name) is None:
            problems.error(source.path, line, f"template '{name}' is in neither templates/ nor the theme",
                           "add templates/" + name + ", or name one of the theme's templates, e.g. lesson.html")


def render_unit(env: jinja2.Environment, unit: Unit, course: Course, common: dict) -> bytes:
    """Return one lesson or review page."""
    prev, next_ = course.neighbours(unit.slug)
    page = unit.page
    return _page(env, [unit_template(env, unit)], common, canonical_path=unit.url, unit=unit, page=page,
                 body=Markup(page.html), toc=[h for h in page.headings if h.level <= 3],
                 prev=prev, next=next_)


def unit_template(env: jinja2.Environment, unit: Unit) -> jinja2.Template:
    """Return the template a unit's page is made with: its own, its front matter's, or its kind's."""
    names = [f"{unit.kind}-{unit.slug}.html", f"{unit.kind}.html"]
    if unit.page.meta.get("template"):
        names.insert(0, unit.page.meta["template"])
    return env.select_template(names)


def _page(env: jinja2.Environment, names: list, common: dict, canonical_path, **context) -> bytes:
    base_url = common["config"].base_url
    canonical = base_url + canonical_path if base_url and canonical_path is not None else ""
    html = env.select_template(names).render(**common, canonical=canonical, **context)
    return html.encode("utf-8")


def sitemap(course: Course) -> str:
    """Return sitemap.xml listing the index and every published unit."""
    base = course.config.base_url
    urls = [base] + [base + u.url for u in course.written]
    stamp = os.environ.get("SOURCE_DATE_EPOCH")
    lastmod = (f"<lastmod>{datetime.fromtimestamp(int(stamp), timezone.utc):%Y-%m-%d}</lastmod>"
               if stamp else "")
    rows = "".join(f"  <url><loc>{Markup.escape(u)}</loc>{lastmod}</url>\n" for u in urls)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + rows + "</urlset>\n")


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
