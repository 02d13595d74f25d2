"""The whole build as one function: load → parse → link → render. Writing is the caller's.

Features beyond plain Markdown are extensions of the one protocol (coursegen.extensions), and the
build meets them only through its dispatcher: the built-in ones (coursegen.features.built_in),
the course's callouts and its own extensions from course.yaml. No feature is imported here.
"""

from __future__ import annotations

import contextlib
import gc
import os
from dataclasses import dataclass, replace
from pathlib import Path

from coursegen.course_code import CourseCode
from coursegen.errors import ContentError, Problem, Problems, placed
from coursegen.extensions import extensions_for
from coursegen.incremental import (
    UnchangedFile,
    kept_notebooks,
    kept_reader,
    link_kept,
    load_course_config,
    load_course_sources,
    parse_kept,
    render_kept,
    theme_signature,
)
from coursegen.parallel import default_jobs
from coursegen.paths import COURSE_INPUTS
from coursegen.session import Session
from coursegen.stages import csp
from coursegen.stages.assets import Assets
from coursegen.stages.link import link_pages
from coursegen.stages.load import check_files, source_kind
from coursegen.stages.parse import ParseContext, parse_pages, parser
from coursegen.stages.render import (
    RenderOptions,
    engine_names,
    environment,
    missing_templates,
    render_site,
    template_problem,
    warm_up_rendering,
)
from coursegen.theme import messages


@dataclass(frozen=True)
class BuildOptions:
    """What the author asked for on the command line."""

    drafts: bool = False
    strict: bool = False
    serve_mode: bool = False
    offline: bool = False  # self-host Pyodide whatever course.yaml says (see coursegen.features.hosting.offline)
    jobs: int | None = None  # processes that parse and render pages (parallel.parallel_map); None: one per core


@dataclass(frozen=True)
class BuildResult:
    """Every output file, plus the warnings that did not stop the build."""

    outputs: dict[str, bytes | UnchangedFile]  # UnchangedFile only where the session holds the last command's pages
    warnings: list[Problem]


def build_site(root: Path, options: BuildOptions = BuildOptions(), session: Session | None = None) -> BuildResult:
    """Return the built site for the course at `root`, or raise ContentError listing every problem.

    Pass the same `session` to successive builds of one course to redo only what changed; without
    one the build starts from a fresh Session, closed when it ends.
    """
    if session is None:  # a build of its own: its workers end with it
        with contextlib.closing(Session()) as own:
            return build_site(root, options, own)
    with collector_paused():
        try:
            result = _build(root, options, session)
        except ContentError as err:
            raise ContentError(placed(err.problems, cell_places(session))) from None
    return replace(result, warnings=placed(result.warnings, cell_places(session)))


def unreadable_sources(problems: Problems, loaded: dict) -> list[str]:
    """Return the sources that exist but could not be read (a notebook that is no notebook, text that is not UTF-8)."""
    return sorted({p.path for p in problems.errors() if source_kind(p.path) and p.path not in loaded})


def cell_places(session: Session) -> dict:
    """Return {path: place of a text line} for this build's notebook sources (see errors.placed)."""
    loaded = session.records.sources
    sources = loaded.sources.values() if loaded is not None else ()
    return {source.path: source.cells.place for source in sources if source.cells is not None}


def _build(root: Path, options: BuildOptions, session: Session) -> BuildResult:
    memo, changes, records = session.memo, session.changes, session.records
    problems = Problems()
    check_environment(problems)
    check_files(root, problems, changes)  # before any read: a FIFO would block it, a link would publish /etc
    problems.raise_if_errors()
    read = kept_reader(memo, changes)
    config, records.config = load_course_config(root, problems, read, records.config)
    if config:
        messages.check_messages(root, config, problems, memo)
    if config and config.python.package not in COURSE_INPUTS:  # the course's own Python, named in course.yaml
        check_files(root, problems, changes, names=(config.python.package,))
    if config is None or not config.units:  # every page would report follow-on problems: show the cause alone
        problems.raise_if_errors()
    extensions = extensions_for(root, config, problems, session)
    config = extensions.configure(config, options)
    before = len(problems.items)
    records.sources = load_course_sources(root, problems, read, records.sources, changes, kept_notebooks(memo))
    if any(p.severity == "error" for p in problems.items[before:]):  # a source not read: its unit and links
        problems.raise_if_errors()  # would be reported missing, follow-ons of the one cause shown alone
    sources = list(records.sources.sources.values())
    if unreadable_sources(problems, records.sources.sources):  # its unit and links to it: follow-on problems
        problems.raise_if_errors()
    # The one for this build: every feature that runs the course's code, in the session's workers.
    python = CourseCode.for_course(root, config, session.author_code)
    if config and records.sources.uses_author_code():  # its worker starts meanwhile
        extensions.start(root, config, python)
    md, fresh_parser = parser(extensions, memo, session.pages_restored)
    session.pages_restored = False  # once: the next build of this session made its own parser
    ctx = ParseContext(
        root=root,
        slug_by_path=records.sources.slug_by_path,
        extra=extensions.prepare(root, config, problems),
        python=python,
        templates=environment(root, memo, session.compiled_templates),
        author_files=frozenset(session.extension_files),
        memo=memo,
    )
    pages, parse_record = parse_pages(
        md,
        sources,
        ctx,
        problems,
        parse_kept(records, memo, changes, fresh_parser),
        jobs=options.jobs,
        meanwhile=lambda: warm_up_rendering(root, memo, session.compiled_templates, theme_signature(root, changes)),
    )
    records.parsed(parse_record)
    course = None
    if config:
        course, records.link = link_pages(config, pages, problems, options.drafts, link_kept(records, memo, changes))
    allowed = extensions.csp(config) if config else {}
    if course:
        missing_templates(course, root, problems, memo, theme_signature(root, changes))
        csp.check_pages(course, root, allowed, problems, memo)
        extensions.check(course, root, problems)
    problems.raise_if_errors(options.strict)
    assets = Assets()
    try:
        extensions.add_files(course, root, assets, problems)
        problems.raise_if_errors(options.strict)
        assert course is not None  # a course without its config stopped at its problem above
        kept, records.render = render_kept(records, memo, changes), None  # a render that fails leaves no record
        try:
            outputs, render_record = render_site(
                course,
                root,
                RenderOptions(serve_mode=options.serve_mode, jobs=options.jobs or default_jobs()),
                assets,
                csp_sources=allowed,
                kept=kept,
                compiled=session.compiled_templates,
                page_context=extensions.page_values(
                    course.config, engine_names(environment(root, memo, session.compiled_templates))
                ),
            )
            records.rendered(render_record)
        except Exception as err:
            problem = template_problem(err, root)
            if problem is None:
                raise
            raise ContentError([problem]) from None
        later = assets.finish()  # files made while or after the pages rendered (the search index, the service worker)
    finally:
        assets.cancel()  # a failed build stops what is still running
    outputs = in_path_order({**outputs, **later}, memo)
    return BuildResult(outputs, [p for p in problems.items if p.severity == "warning"])


def in_path_order(files: dict, memo) -> dict:
    """Return `files` sorted by path. The same paths as the last build's (every edit in `serve` that adds no
    page) take the last order instead of a sort: a tenth of the time for a site of 2,650 files."""
    last = memo.peek("output order", None, {})
    same = files.keys() == last.keys()
    ordered = {path: files[path] for path in last} if same else dict(sorted(files.items()))
    memo.put("output order", None, dict.fromkeys(ordered))
    return ordered


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
    if stamp is not None and not (stamp.strip().isascii() and stamp.strip().isdigit() and int(stamp) <= LATEST_EPOCH):
        problems.error(
            "SOURCE_DATE_EPOCH",
            0,
            f"must be a whole number of seconds since 1970-01-01, found {stamp!r}",
            "set it to e.g. $(git log -1 --format=%ct), or unset it",
        )
