"""Command line: build, serve, check, new, init. Parses arguments, calls the engine, prints problems."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from coursegen import __version__
from coursegen.errors import ContentError
from coursegen.parallel import default_jobs

if TYPE_CHECKING:  # imported by the commands that build, once their worker has started (see main)
    from coursegen import disk_cache
    from coursegen.author_code import AuthorCode
    from coursegen.pipeline import BuildOptions, BuildResult
    from coursegen.session import Session


def make_parser() -> argparse.ArgumentParser:
    """Return the argument parser with one sub-command per task.

    The common options (--root, and for the commands that build --drafts, --strict, --offline, --jobs)
    are taken before the sub-command and after it alike: `coursegen --root X build` and
    `coursegen build --root X` are the same command.
    """
    parser = argparse.ArgumentParser(prog="coursegen", description="Build an interactive course website.")
    _common_options(parser, build=True, after=False)
    parser.add_argument("--version", action="version", version=f"coursegen {__version__}")
    sub = parser.add_subparsers(dest="command")
    init = sub.add_parser("init", help="start a new course in DIR (default: the current folder)")
    init.add_argument("dir", nargs="?", type=Path, default=None, help="the new course's folder")
    init.add_argument("--title", default="", help="the course's title (default: made from the folder's name)")
    build = sub.add_parser("build", help="build the site into site/ (the default command)")
    check = sub.add_parser("check", help="validate every source without writing anything")
    check.add_argument(
        "--expected",
        action="store_true",
        help="list each exercise's checks with the answers its reference solution gave (what the page accepts)",
    )
    serve = sub.add_parser("serve", help="build into a folder of its own, serve it on 127.0.0.1 and rebuild on changes")
    for command in (build, check, serve):
        _common_options(command, build=True, after=True)
    build.add_argument("--out", type=Path, default=None, help="output folder (default: site/ in the root)")
    serve.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000)")
    serve.add_argument("--no-watch", action="store_true", help="serve without watching for changes")
    serve.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder to build into and serve from (default: a temporary one, removed on exit; site/ is left alone)",
    )
    new = sub.add_parser("new", help='create the next lesson or review from a skeleton: new lesson "Title"')
    new.add_argument("kind", choices=("lesson", "review"), help="what to create")
    new.add_argument("title", help="the unit's title (quoted)")
    new.add_argument("--slug", default="", help="the unit's slug (default: made from the title)")
    new.add_argument("--part", default="", help="the part of the course it belongs to")
    for command in (init, new):
        _common_options(command, build=False, after=True)
    new.add_argument("--notebook", action="store_true", help="make it a Jupyter notebook (.ipynb), not Markdown")
    return parser


BUILD_OPTIONS = ("drafts", "strict", "offline", "jobs")  # the common options that only building commands take


def _common_options(parser: argparse.ArgumentParser, build: bool, after: bool) -> None:
    """Add the common options to `parser`. After the sub-command (`after`) an option left out leaves no
    default behind (argparse.SUPPRESS), so that the same option given before the sub-command stands."""

    def default(value):
        return argparse.SUPPRESS if after else value

    parser.add_argument("--root", type=Path, default=default(Path(".")), help="course folder (default: current)")
    if not build:
        return
    parser.add_argument(
        "--drafts", action="store_true", default=default(False), help="include units marked draft: true"
    )
    parser.add_argument("--strict", action="store_true", default=default(False), help="treat warnings as errors")
    parser.add_argument(
        "--offline",
        action="store_true",
        default=default(False),
        help="self-host Pyodide (pyodide.path, default node_modules/pyodide) so the "
        "site needs nothing from the internet",
    )
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=default(None),
        metavar="N",
        help=f"processes that parse and render pages; 1 uses no others (default: one per core, {default_jobs()} here)",
    )


def main(argv: list[str] | None = None) -> int:
    """Run one command and return the process exit status."""
    parser = make_parser()
    args = parser.parse_args(argv)
    root = args.root.resolve()
    command = args.command or "build"
    if command in ("init", "new") and (given := [name for name in BUILD_OPTIONS if getattr(args, name)]):
        parser.error(f"--{given[0]} applies to build, check and serve, not to {command}")
    runtime = _warm_up(root) if command in ("build", "check") else None
    from coursegen.pipeline import BuildOptions

    options = BuildOptions(drafts=args.drafts, strict=args.strict, offline=args.offline, jobs=args.jobs)
    if command == "serve":
        from coursegen.serve.server import serve

        return serve(root, options, port=args.port, watch=not args.no_watch, out=args.out)
    if command == "new":
        return _new(root, args)
    if command == "init":
        return _init(args.dir if args.dir is not None else root, args.title)
    from coursegen.stages.write import check_output_folder

    out = getattr(args, "out", None) or root / "site"
    try:
        if command != "check" and (refused := check_output_folder(out, root)):
            raise ContentError(refused)  # before building: the answer would be the same after
        summary = _build_and_write(root, out, options, command, getattr(args, "expected", False), runtime)
    except ContentError as err:
        print(err, file=sys.stderr)
        print(f"{len(err.problems)} problem(s); nothing was written", file=sys.stderr)
        return 1
    print(summary)
    return 0


def _warm_up(root: Path) -> AuthorCode:
    """Return the author-code workers of this command's build, one already importing what the last build's
    changed cells imported (coursegen/warm_up.py): started before the rest of coursegen is imported, the
    worker's imports run beside this process's."""
    from coursegen import warm_up
    from coursegen.author_code import AuthorCode

    runtime = AuthorCode()
    warm_up.start(root, runtime)
    return runtime


def _build_and_write(
    root: Path, out: Path, options: BuildOptions, command: str, expected: bool = False, runtime=None
) -> str:
    """Build the site (or only check it) and write it, reusing what .coursegen-cache/ kept; print the
    warnings (and with `expected`, the exercises' baked answers) and return the line to print; `runtime`,
    the workers _warm_up started. Raises ContentError."""
    from coursegen import disk_cache
    from coursegen.pipeline import build_site, collector_paused
    from coursegen.session import command_session
    from coursegen.stages.write import write_site

    inputs = disk_cache.inputs(root, out, _cache_options(options))  # before anything is read
    kept = disk_cache.unchanged_site(root, inputs) if command == "build" else None
    if kept:  # nothing changed: the same files, swapped in anew
        _print_warnings(kept.warnings)
        write_site({}, out, root, keep=disk_cache.previous_site(kept))
        disk_cache.remember_site(root, inputs, list(kept.warnings), kept.summary)
        return kept.summary
    session = command_session(root, write=command != "check", author_code=runtime)
    disk_cache.load_pages(root, session, inputs)
    disk_cache.load_notebooks(root, session, inputs)
    if command == "build":  # read back from the output folder that `check` does not write
        disk_cache.load_rendered(root, session, inputs)
    with collector_paused():
        result = build_site(root, options, session)
        # The build's objects live until the command ends. Resumed over them, the collector would walk
        # them all once more (0.12 s at 2,000 lessons) to free nothing: it looks only at newer ones.
        gc.freeze()
    try:
        if expected and session.records.link is not None:
            from coursegen.features.questions.exercises import expected_listing

            print("".join(f"{line}\n" for line in expected_listing(session.records.link.course)), end="")
        return _write(root, out, command, session, inputs, result)
    finally:
        gc.unfreeze()  # for a caller that goes on (the tests): the build's garbage is collectable again


def _write(
    root: Path, out: Path, command: str, session: Session, inputs: disk_cache.Inputs, result: BuildResult
) -> str:
    """Print the build's warnings and write its site (`check`: nothing) and records; return the line to print."""
    from coursegen import disk_cache
    from coursegen.stages.write import unchanged_files, write_site

    warnings = [warning.format() for warning in result.warnings]
    _print_warnings(warnings)
    if command == "check":
        return f"ok: {_summary(result.outputs)}"
    # The pages are saved in a fork, beside the comparing, the writing and the other records: see
    # save_pages_aside. It is waited for before the command ends, so the next one finds them.
    pages_saved = disk_cache.save_pages_aside(root, session, inputs)
    try:
        # Linked from the last site, not written again: the pages it wrote that were not even read
        # (incremental.UnchangedFile), and the files made again with the same bytes.
        made = {path: data for path, data in result.outputs.items() if isinstance(data, bytes)}
        keep = set(unchanged_files(made, out)) | (result.outputs.keys() - made.keys())
        write_site({path: data for path, data in made.items() if path not in keep}, out, root, sorted(keep))
        summary = f"built {_summary(result.outputs)} into {out}"
        written = disk_cache.written_stamps(inputs)  # one listing of the new site, for both records
        disk_cache.save_rendered(root, session, inputs, written)
        disk_cache.save_warm_up(root, session, inputs)
        disk_cache.save_notebooks(root, session, inputs)
        disk_cache.remember_site(root, inputs, warnings, summary, session, written)
    finally:
        pages_saved()
    return summary


def _print_warnings(warnings) -> None:
    print("".join(f"{warning}\n" for warning in warnings), end="", file=sys.stderr)


def _cache_options(options: BuildOptions) -> tuple:
    """Return the options that shape the output (not --jobs), for .coursegen-cache/'s key."""
    return (options.drafts, options.strict, options.offline, options.serve_mode)


def run() -> None:
    """The command's entry point: run `main`, then leave without tearing the interpreter down.

    Nothing is left to clean up by then (files written and closed, child processes joined), and
    freeing a large course's parsed pages object by object takes about a tenth of a second.
    """
    try:
        status = main()
    except BrokenPipeError:  # whoever read the output stopped (`| head`): nothing left to tell them
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:  # a reader that went away (`| head`) is not the build's problem
            pass
    os._exit(status)


def _jobs(text: str) -> int:
    """Return --jobs' number, or tell argparse why it is none."""
    if not (text.strip().isascii() and text.strip().isdigit() and int(text) >= 1):
        raise argparse.ArgumentTypeError(f"must be a whole number of processes, at least 1, found {text!r}")
    return int(text)


MAX_NEW_SLUG = 80  # characters: a file name holds 255 bytes, and a page address read aloud far fewer


def _new(root: Path, args) -> int:
    """Create a unit from its skeleton; print where it went, or the problem."""
    from coursegen.authoring.scaffold import new_unit

    try:
        _check_new_slug(args.title, args.slug)
        made = new_unit(root, args.kind, args.title, slug=args.slug, part=args.part, notebook=args.notebook)
    except ContentError as err:
        print(err, file=sys.stderr)
        return 1
    print(f"created {made.path} ({args.kind} {made.number}) and listed it in course.yaml")
    return 0


def _check_new_slug(title: str, slug: str) -> None:
    """Refuse a --slug that is no slug (blaming the option, not the title), and a slug too long for a file
    name and an address, made from a long title or given; raise ContentError."""
    from coursegen.authoring.scaffold import slugify
    from coursegen.errors import Problem
    from coursegen.stages.config import SLUG

    made = slugify(slug or title)
    suggestion = made if len(made) <= MAX_NEW_SLUG else made[: MAX_NEW_SLUG + 1].rsplit("-", 1)[0]  # whole words
    if slug and not SLUG.match(slug):
        hint = f"for example --slug {suggestion or 'first-steps'}"
        message = f"--slug {slug!r} is not a slug: use lowercase letters, digits and single hyphens"
    elif len(slug or made) > MAX_NEW_SLUG:
        hint = f"give a shorter one, for example --slug {suggestion}"
        origin = "--slug" if slug else "the slug made from the title"
        message = f"{origin} is {len(slug or made)} characters long; a unit's slug may have at most {MAX_NEW_SLUG}"
    else:
        return
    raise ContentError([Problem("coursegen new", 0, 0, message, hint)])


def _init(folder: Path, title: str) -> int:
    """Write a new course; print what to do next, or why it cannot."""
    from coursegen.authoring.starter import init_course

    try:
        init_course(folder, title)
    except ContentError as err:
        print(err, file=sys.stderr)
        return 1
    shown = "." if folder.resolve() == Path.cwd().resolve() else str(folder)
    where = "" if shown == "." else f"cd {shown} && "
    print(f"created a course in {shown}; next: {where}coursegen serve")
    return 0


def _summary(outputs: dict) -> str:
    pages = sum(1 for name in outputs if name.endswith(".html"))
    return f"{pages} pages, {len(outputs)} files"
