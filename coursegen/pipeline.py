"""The whole build as one function: load → parse → link → render. Writing is the caller's.

Features beyond plain Markdown are extension modules listed in EXTENSIONS. Each may define:
- `install(md)`: add its Markdown syntax (fences, `:::` blocks, roles, core rules);
- `prepare(root, config, problems) -> data`: load what parsing needs once per build; the result is
  available to its parse rules as `env["ctx"].extra[<module name>]`;
- `add_files(course, root, assets, problems)`: add site files, e.g. `assets.add(name, bytes)` for
  content-hashed assets that templates reach with `asset(name)`.
"""
from __future__ import annotations

import contextlib
import gc
import os
import traceback
from dataclasses import dataclass
from pathlib import Path

import jinja2

from . import blocks, calc, checks, hosting, offline, questions, search, widgets
from .assets import Assets
from .errors import ContentError, Problem, Problems
from .link import link_course
from .incremental import BuildCache
from .markdown import ParseContext
from .paths import check_course_files
from .render import RenderOptions, render_site
from .sources import load_sources

EXTENSIONS = (blocks, calc, checks, questions, search, hosting, widgets, offline)  # offline last: it precaches the others' files


@dataclass(frozen=True)
class BuildOptions:
    """What the author asked for on the command line."""

    drafts: bool = False
    strict: bool = False
    serve_mode: bool = False
    offline: bool = False  # self-host Pyodide whatever course.yaml says (see coursegen.offline)


@dataclass(frozen=True)
class BuildResult:
    """Every output file, plus the warnings that did not stop the build."""

    outputs: dict[str, bytes]
    warnings: list[Problem]


def build_site(root: Path, options: BuildOptions = BuildOptions(), cache: BuildCache | None = None) -> BuildResult:
    """Return the built site for the course at `root`, or raise ContentError listing every problem.

    Pass the same `cache` to successive builds of one course to redo only what changed.
    """
    with collector_paused():
        return _build(root, options, cache or BuildCache())


def _build(root: Path, options: BuildOptions, cache: BuildCache) -> BuildResult:
    problems = Problems()
    check_environment(problems)
    check_course_files(root, problems)  # before any read: a FIFO would block it, a link would publish /etc
    problems.raise_if_errors()
    config = cache.load_config(root, problems)
    if config is None or not config.units:  # every page would report follow-on problems: show the cause alone
        problems.raise_if_errors()
    if config and options.offline:
        config = offline.self_hosted(config)
    sources = load_sources(root, problems, read=cache.read_text)
    md = cache.markdown(EXTENSIONS)
    ctx = ParseContext(root=root, slug_by_path={s.path: s.slug for s in sources},
                       extra=prepare_extensions(root, config, problems))
    pages = cache.parse_pages(md, sources, ctx, problems, meanwhile=lambda: cache.warm_up_rendering(root))
    course = link_course(config, pages, problems, options.drafts) if config else None
    problems.raise_if_errors(options.strict)
    assets = Assets()
    for extension in EXTENSIONS:
        if hasattr(extension, "add_files"):
            extension.add_files(course, root, assets, problems)
    problems.raise_if_errors(options.strict)
    try:
        outputs = render_site(course, root, RenderOptions(serve_mode=options.serve_mode), assets,
                              cache=cache)
    except jinja2.TemplateError as err:
        raise ContentError([template_problem(err, root)]) from None
    return BuildResult(outputs, [p for p in problems.items if p.severity == "warning"])


@contextlib.contextmanager
def collector_paused():
    """Pause Python's cycle collector for the length of one build.

    A build makes hundreds of thousands of objects that nearly all live until it ends; the
    collector would walk them again and again (close to a tenth of a large build's time) and find
    almost no cycles. It resumes, and catches up, as soon as the build returns or fails.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


LATEST_EPOCH = 253402300799  # 9999-12-31T23:59:59Z: dates print with four-digit years


def check_environment(problems: Problems) -> None:
    """Report a SOURCE_DATE_EPOCH (reproducible builds' fixed date) that is not a time the build can use."""
    stamp = os.environ.get("SOURCE_DATE_EPOCH")
    if stamp is not None and not (stamp.strip().isascii() and stamp.strip().isdigit()
                                  and int(stamp) <= LATEST_EPOCH):
        problems.error("SOURCE_DATE_EPOCH", 0, f"must be a whole number of seconds since 1970-01-01, found {stamp!r}",
                       "set it to e.g. $(git log -1 --format=%ct), or unset it")


def prepare_extensions(root: Path, config, problems: Problems) -> dict:
    """Return each extension's per-build data, keyed by its module's short name."""
    return {ext.__name__.rsplit(".", 1)[-1]: ext.prepare(root, config, problems)
            for ext in EXTENSIONS if hasattr(ext, "prepare")}


def template_problem(err: jinja2.TemplateError, root: Path) -> Problem:
    """Return a Problem pointing at the template line that failed."""
    path, line = "templates", 1
    if isinstance(err, jinja2.TemplateSyntaxError) and err.filename:
        path, line = err.filename, err.lineno or 1
    else:
        for frame in reversed(traceback.extract_tb(err.__traceback__)):
            if frame.filename.startswith(str(root / "templates")):
                path, line = frame.filename, frame.lineno or 1
                break
    shown = Path(path).resolve().relative_to(root.resolve()).as_posix() if Path(path).is_absolute() else path
    return Problem(shown, line, 0, f"template error: {err.message or err}")
