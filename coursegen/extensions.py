"""The one extension protocol: every event a feature can join, declared once, and its dispatcher.

Every feature beyond plain Markdown is an `Extension`: the built-in ones (coursegen/features/,
listed in `coursegen.features.built_in`) and a course's own alike. `EVENTS` declares each event,
in the order a build meets them, with its arguments and what the build does with the answers;
`Extensions` is the one dispatcher the pipeline, the parser, the renderer and `serve` call, so no
stage imports a feature. An extension joins an event by defining a method (or, for a module, a
function) of the event's name; each one it leaves out does nothing.

Most extensions are modules of plain functions named after the events (`ModuleExtension` wraps
one: the functions it defines, no-ops for the rest). A course's `extensions:` lists importable
module names (looked for in the course folder first) or `.py` files in the course. A course
extension that fails to load, or raises in an event, is a problem at its line (in course.yaml, or
in the extension's own file), not a traceback; so is one that calls `sys.exit()` or raises
KeyboardInterrupt. Its import and each call run under the course's `limits: {seconds: …}` (watchdog.py),
stopped past it and reported at the line they were at; so do its `analyse` and the rules and roles its
`install` adds to the parser. What it gives the build is held to course.yaml's rules (extension_rules.py).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import hashlib
import importlib
import importlib.util
import os
import pickle
import sys
import traceback
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from coursegen.author_code import DEFAULT_SECONDS, shown_limit
from coursegen.course_code import TextLoader, from_text
from coursegen.errors import ContentError, Problem, Problems
from coursegen.extension_rules import (
    TimedOut,
    a_type,
    checked_context,
    checked_csp,
    clashing_name,
    guard_installed,
    hook_problem,
    installed,
    shown,
)
from coursegen.memo import Memo, remembered
from coursegen.stages.assets import bad_site_path
from coursegen.stages.config import CONFIG_NAME, config_line
from coursegen.watchdog import Deadlines, OutOfTime, in_folder, time_limit


@dataclass(frozen=True)
class Event:
    """One event of the protocol: its name (the method an extension defines), the arguments it is
    given, when the build calls it, and what the build does with the answers."""

    name: str
    arguments: tuple[str, ...]
    when: str
    answer: str  # what becomes of what each extension returns ("" when nothing is expected)


EVENTS = (  # in the order a build meets them; docs/extensions.md lists them the same way (a test checks)
    Event("install", ("md",), "once per parser (kept while the extensions stay the same)", ""),
    Event(
        "configure", ("config", "options"), "once per build, when course.yaml is read", "the configuration, rewritten"
    ),
    Event(
        "start",
        ("root", "config", "python"),
        "once per build, before parsing, when a page runs the course's Python",
        "",
    ),
    Event("prepare", ("root", "config", "problems"), "once per build, before any page is parsed", "data by name"),
    Event("analyse", ("html", "source"), "once per page parsed, on its body HTML", "page.derived by name"),
    Event("check", ("course", "root", "problems"), "once per build, after linking, before rendering", ""),
    Event("csp", ("config",), "once per build, before rendering", "sources merged by directive"),
    Event("add_files", ("course", "root", "assets", "problems"), "once per build, before rendering", ""),
    Event("page_context", ("config",), "once per build, before rendering", "template values merged"),
    Event("serve", ("root", "ready", "building"), "once, when `serve` starts", "what to call when it stops"),
)
HOOKS = tuple(event.name for event in EVENTS)
BY_NAME = {event.name: event for event in EVENTS}
REPORTS_ITSELF = ("analyse",)  # runs inside the parser, once per page: a failure is reported at the page
GIVEN_A_COPY = ("check", "add_files")  # their first argument, the linked course, is given to each as a copy
EXITS = (SystemExit, KeyboardInterrupt)  # what course code may raise that is no Exception: a failure all the same
LIMIT_HINT = "make it faster, or raise `limits: {seconds: …}` in course.yaml (default 10)"


class Extension:
    """A feature of the build; define the events it joins (see EVENTS). `name` keys its `prepare`
    data and its `analyse` results."""

    name = ""
    session_hooks: tuple[str, ...] = ()  # the hooks that take the build's session last (see ModuleExtension)

    def install(self, md) -> None:
        """Add Markdown syntax to the parser `md`."""

    def configure(self, config, options):
        """Return the configuration the build uses (`options`: the command line's BuildOptions)."""
        return config

    def start(self, root: Path, config, python) -> None:
        """Start slow work that parsing will wait for (`python`: the build's CourseCode)."""

    def prepare(self, root: Path, config, problems: Problems):
        """Return what this extension's parse rules need, once per build."""
        return None

    def analyse(self, html: str, source):
        """Return what later stages need to know about one parsed page (kept as `page.derived[name]`)."""
        return None

    def check(self, course, root: Path, problems: Problems) -> None:
        """Report problems in the linked course."""

    def csp(self, config) -> dict[str, list[str]]:
        """Return the sources, per directive, that the pages' Content-Security-Policy must allow."""
        return {}

    def add_files(self, course, root: Path, assets, problems: Problems) -> None:
        """Add files to the site."""

    def page_context(self, config) -> dict:
        """Return values every page's template receives."""
        return {}

    def serve(self, root: Path, ready: Callable[[], None], building):
        """Start what `serve` keeps beside its rebuilds; return what stops it, or None."""
        return None


def joins(extension: Extension, event: str) -> bool:
    """Return whether `extension` defines `event` (the protocol's default does nothing)."""
    own = getattr(extension, event, None)  # None: a bare module of hook functions that leaves it out
    return own is not None and getattr(own, "__func__", own) is not getattr(Extension, event)


class Extensions:
    """The dispatcher: each event called on every extension that joins it, in order, with the event's
    declared arguments, and the answers combined as EVENTS says."""

    def __init__(self, extensions: Iterable[Extension], session=None):
        self.all = tuple(extensions)
        self.session = session  # given last to the built-in hooks that take it (ModuleExtension's SESSION_HOOKS)

    def _joining(self, event: str, args: tuple) -> list[Extension]:
        """Return the extensions that join `event`, in order, once its arguments match the declaration."""
        if len(args) != len(BY_NAME[event].arguments):  # a dispatcher out of step with EVENTS is a bug
            raise TypeError(f"{event} takes {BY_NAME[event].arguments}, given {len(args)} argument(s)")
        return [ext for ext in self.all if joins(ext, event)]

    def _answers(self, event: str, *args) -> list:
        return [with_session(ext, event, self.session, *args) for ext in self._joining(event, args)]

    def install(self, md) -> None:
        """Let every extension add its syntax to the parser `md`; what a course's extension adds runs
        under its time limit, and may not replace a role or fence another extension gave."""
        for ext in self._joining("install", (md,)):
            before = installed(md)
            with_session(ext, "install", self.session, md)
            if isinstance(ext, CourseExtension):
                guard_installed(md, before, ext)

    def configure(self, config, options):
        """Return the configuration after every extension's `configure`, each given the one before's."""
        for ext in self._joining("configure", (config, options)):
            if config is not None:
                answer = ext.configure(config, options)
                if answer is not None and type(answer) is not type(config):
                    raise ContentError(
                        [
                            hook_problem(
                                ext,
                                "configure",
                                f"returned {a_type(answer)}, not the configuration",
                                "return the config it is given, or dataclasses.replace(config, …)",
                            )
                        ]
                    )
                config = answer or config
        return config

    def start(self, root: Path, config, python) -> None:
        """Let every extension start its slow set-up before parsing."""
        self._answers("start", root, config, python)

    def prepare(self, root: Path, config, problems: Problems) -> dict:
        """Return each extension's per-build data, keyed by its name."""
        self._joining("prepare", (root, config, problems))
        return {ext.name: with_session(ext, "prepare", self.session, root, config, problems) for ext in self.all}

    def analysers(self) -> dict[str, Callable]:
        """Return name → analyse(html, source) of each extension that joins `analyse`."""
        return {ext.name: ext.analyse for ext in self.all if joins(ext, "analyse")}  # the parser calls them

    def check(self, course, root: Path, problems: Problems) -> None:
        """Let every extension report problems in the linked course."""
        self._answers("check", course, root, problems)

    def csp(self, config) -> dict[str, list[str]]:
        """Return the extra sources per CSP directive: each extension's, then course.yaml's `csp:`. A course
        extension's sources are held to the rules of course.yaml's (config.csp_problem)."""
        answers, problems = [], Problems()
        for ext in self._joining("csp", (config,)):
            answer = with_session(ext, "csp", self.session, config)
            if isinstance(ext, CourseExtension):
                answer = checked_csp(ext, answer, problems)
            answers.append(answer)
        problems.raise_if_errors()
        found: dict[str, list[str]] = {}
        for contribution in [*answers, dict(config.csp)]:
            for directive, sources in (contribution or {}).items():
                found.setdefault(directive, []).extend(s for s in sources if s not in found.get(directive, []))
        return found

    def add_files(self, course, root: Path, assets, problems: Problems) -> None:
        """Let every extension add its files to the site, in order (offline last sees the others'); a file
        a course's extension puts where no site file can be is a problem at its hook."""
        for ext in self._joining("add_files", (course, root, assets, problems)):
            before = set(assets.files)
            with_session(ext, "add_files", self.session, course, root, assets, problems)
            if isinstance(ext, CourseExtension):
                for path in sorted(set(assets.files) - before, key=str):
                    if why := bad_site_path(path):
                        problems.items.append(hook_problem(ext, "add_files", f"adds the file {path!r}: {why}"))
                        del assets.files[path]

    def page_context(self, config) -> dict:
        """Return the values every page's template receives from the extensions, later ones winning."""
        return self.page_values(config, frozenset())

    def page_values(self, config, reserved: frozenset[str]) -> dict:
        """Return page_context(config), a course's extension kept from the engine's `reserved` names (those
        render passes every template: render.engine_names) and from a built-in extension's."""
        found: dict = {}
        problems = Problems()
        for ext in self._joining("page_context", (config,)):
            values = with_session(ext, "page_context", self.session, config) or {}
            if isinstance(ext, CourseExtension):
                values = checked_context(ext, values, reserved, problems)
            else:
                reserved = reserved | set(values)
            found.update(values)
        problems.raise_if_errors()
        return found

    def serve(self, root: Path, ready: Callable[[], None], building) -> list[Callable[[], None]]:
        """Return what stops each thing the extensions started for `serve`."""
        return [stop for stop in self._answers("serve", root, ready, building) if stop is not None]


def extensions_for(root: Path, config, problems: Problems, session) -> Extensions:
    """Return a build's extensions in the order their events run: the built-in ones, the course's
    extra callouts and its own extensions, then the built-in ones that must see every other's files."""
    from coursegen import features  # here: the features import the stages, which import this module

    early, late = features.built_in(config)
    taken = {ext.name for ext in (*early, *late)}
    return Extensions((*early, *course_extensions(root, config, problems, session, taken), *late), session)


def built_in_extensions(session=None) -> Extensions:
    """Return the built-in extensions alone (what `serve` starts with, before any course.yaml is read)."""
    from coursegen import features  # here: see extensions_for

    early, late = features.built_in(None)
    return Extensions((*early, *late), session)


class ModuleExtension(Extension):
    """A module of hook functions as an Extension: the hooks it defines, no-ops for the others.

    A built-in feature's module may list in SESSION_HOOKS the hooks that also take the build's
    session (coursegen.session.Session: its memo, its author-code workers) as a last argument;
    `with_session` passes it to those alone."""

    def __init__(self, module, name: str = ""):
        self.module, self.name = module, name or module.__name__.rsplit(".", 1)[-1]
        self.session_hooks: tuple[str, ...] = tuple(getattr(module, "SESSION_HOOKS", ()))
        for hook in HOOKS:
            if callable(getattr(module, hook, None)):
                setattr(self, hook, getattr(module, hook))

    def __eq__(self, other) -> bool:  # the same module twice is the same extension (the parser is kept)
        return type(other) is type(self) and other.module is self.module and other.name == self.name

    def __hash__(self) -> int:
        return hash((id(self.module), self.name))

    def __repr__(self) -> str:
        return f"<extension {self.name}>"


class CourseExtension(ModuleExtension):
    """A course's extension module, with each hook it defines guarded: a failure becomes a problem."""

    def __init__(self, module, name: str, root: Path, seconds: float = DEFAULT_SECONDS):
        super().__init__(module, name)
        self.root, self.seconds = root, seconds
        for hook in HOOKS:
            if callable(getattr(module, hook, None)) and hook not in REPORTS_ITSELF:
                setattr(self, hook, functools.partial(self._call, hook))
        self.session_hooks = ()  # a course's hooks take the documented arguments alone
        self._deadlines = Deadlines()  # the time limits of what it adds to the parser (see timed)
        if callable(getattr(module, "analyse", None)):
            setattr(self, "analyse", self.timed(module.analyse, "analyse hook"))  # noqa: B010 - mypy: no method-assign

    def timed(self, function: Callable, what: str) -> Callable:
        """Return `function` run under the extension's time limit, for code the parser calls (its
        `analyse`, the rules and roles it installed): past the limit it raises TimedOut, which the parse
        stage reports at the line the code was at (extensions.parse_failure). A call inside another
        (a role called by a rule) runs under the outer one's limit."""
        late = f"extension '{self.name}' did not finish its {what} within {shown_limit(self.seconds)}"
        files = in_folder(self.root)

        def stuck(where) -> None:
            _give_up(out_of_time(self.root, where, late))

        deadlines, seconds = self._deadlines, self.seconds

        @functools.wraps(function)
        def run(*args, **kwargs):
            call = deadlines.enter(seconds, files, stuck)
            try:
                return function(*args, **kwargs)
            except OutOfTime:
                if call is None:  # inside another timed call: that one reports it
                    raise
                raise TimedOut(out_of_time(self.root, call.where, late)) from None
            finally:
                deadlines.leave(call)

        return run

    def _call(self, hook: str, *args):
        if hook in GIVEN_A_COPY:  # the course's pages are kept (memo, .coursegen-cache/): a change made to them
            args = (_copied(args[0]), *args[1:])  # there would reach the next build, and only a warm one
        problems = next((a for a in args if isinstance(a, Problems)), None)
        late = f"extension '{self.name}' did not finish its {hook} hook within {shown_limit(self.seconds)}"
        try:
            with limited(self.root, self.seconds, late) as watch:
                return getattr(self.module, hook)(*args)
        except OutOfTime:
            problem = out_of_time(self.root, watch.where, late)
        except (Exception, *EXITS) as err:  # noqa: BLE001 - author code: report it where it failed
            problem = self.failure(hook, err)
        if problems is None:  # the events without `problems` (csp, configure, …) have nowhere else to report
            raise ContentError([problem]) from None
        problems.items.append(problem)
        return None

    def failure(self, hook: str, err: BaseException) -> Problem:
        """Return the problem for a hook that raised: at the extension's own line when it is in the course."""
        path, line = CONFIG_NAME, config_line(self.root, "extensions:")
        own = Path(getattr(self.module, "__file__", "") or "")
        for frame in reversed(traceback.extract_tb(err.__traceback__)):
            if own and Path(frame.filename) == own:
                path, line = shown(self.root, own), frame.lineno or 1
                break
        return Problem(path, line, 0, f"extension '{self.name}' failed in {hook}: {described(err)}", exit_hint(err))


def _copied(course):
    """Return a copy of the linked course that shares nothing mutable with it: a pickle's round trip (the
    records are plain data, made to be pickled; in C, several times faster than copy.deepcopy)."""
    try:
        return pickle.loads(pickle.dumps(course, protocol=pickle.HIGHEST_PROTOCOL))
    except (pickle.PicklingError, TypeError, AttributeError):  # something of an extension's that cannot be
        return copy.deepcopy(course)


def with_session(extension: Extension, hook: str, session, *args):
    """Call one hook of `extension` with `args`, and the session after them when the hook takes it."""
    return getattr(extension, hook)(*args, *((session,) if hook in getattr(extension, "session_hooks", ()) else ()))


def described(err: BaseException) -> str:
    """Return `Type: message`, or `Type` alone when the message is empty (a bare KeyboardInterrupt)."""
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__


def exit_hint(err: BaseException) -> str:
    """Return a hint for course code that tried to end the build, or ''."""
    if isinstance(err, EXITS):
        return "course code may not end the build: raise an exception, or report with problems.error(…)"
    return ""


def course_extensions(
    root: Path,
    config,
    problems: Problems,
    session,
    taken: Collection[str] = (),
) -> list[CourseExtension]:
    """Return the course's extensions from course.yaml, loaded, reporting those that cannot be; their
    files join the session's `extension_files` (a failure there is the course's problem, not a bug).
    An extension's name keys its prepare data and its page analysis: one listed twice, or named like a
    built-in extension (`taken`), an engine analysis or another of the course's, is refused."""
    found: list[CourseExtension] = []
    listed: dict[str, int] = {}
    for entry in config.extensions if config else ():
        line = entry_line(root, entry)
        if taken_name(root, entry, line, problems) or clashing_name(entry, line, listed, taken, problems):
            continue
        late = f"extension '{entry}' did not finish importing within {shown_limit(config.limits.seconds)}"
        try:
            with limited(root, config.limits.seconds, late) as watch:
                module, name = load(root, entry, session.memo)
        except OutOfTime:
            problems.items.append(out_of_time(root, watch.where, late, line))
            continue
        except (Exception, *EXITS) as err:  # noqa: BLE001 - an import error or a mistake in the author's module
            inside = in_folder(root)
            frame = next((f for f in reversed(traceback.extract_tb(err.__traceback__)) if inside(f.filename)), None)
            problems.error(
                shown(root, Path(frame.filename)) if frame else CONFIG_NAME,
                (frame.lineno or 1) if frame else line,
                f"extension '{entry}' cannot be loaded: {described(err)}",
                exit_hint(err) or "list a module name, or a .py file relative to the course folder",
            )
            continue
        found.append(CourseExtension(module, name, root, config.limits.seconds))
        if getattr(module, "__file__", None):
            session.extension_files.add(str(Path(module.__file__).resolve()))
    return found


def entry_line(root: Path, entry: str) -> int:
    """Return the line of course.yaml listing `entry` (`- entry`), or that of `extensions:` (a flow list)."""
    line = config_line(root, f"- {entry}", indented=True)
    return line if line > 1 else config_line(root, "extensions:")


def taken_name(root: Path, entry: str, line: int, problems: Problems) -> bool:
    """Report an entry naming a standard-library module or coursegen's own: `import` gives that module,
    never the course's file of the same name. Return whether it was reported."""
    top = entry.split(".")[0]
    if entry.endswith(".py") or (top not in sys.stdlib_module_names and top != "coursegen"):
        return False
    whose = "one of coursegen's own modules" if top == "coursegen" else "a standard-library module"
    file = entry.replace(".", "/") + ".py"
    if (root / file).is_file():
        message, hint = f"so the course's {file} would never run", f"list the course's file as {file}"
    else:
        message, hint = "not one of the course's", "give the extension a name of its own"
    problems.error(CONFIG_NAME, line, f"extension '{entry}' names {whose}, {message}", hint)
    return True


def limited(root: Path, seconds: float, late: str) -> time_limit:
    """Return the time limit for one call of a course extension: past it (and its grace) the build stops."""
    return time_limit(seconds, in_folder(root), lambda where: _give_up(out_of_time(root, where, late)))


def out_of_time(root: Path, where: tuple[str, int] | None, message: str, line: int = 0) -> Problem:
    """Return the problem for extension code out of time, at the course line it was at when stopped."""
    path, line = (
        (shown(root, Path(where[0])), where[1]) if where else (CONFIG_NAME, line or config_line(root, "extensions:"))
    )
    return Problem(path, line, 0, message, LIMIT_HINT)


def _give_up(problem: Problem) -> None:
    """End the process with `problem`: extension code that cannot be stopped (asleep in C, or catching
    everything) would hold the build, or serve, forever; the site is left as it was."""
    sys.stderr.write(f"{problem.format()}\n1 problem(s); nothing was written\n")
    sys.stderr.flush()
    os._exit(1)


def parse_failure(err: BaseException, path: str, root: Path, author_files) -> Problem | None:
    """Return the problem for a page whose parse failed inside a course extension's code (a rule or
    role it installed, in one of `author_files`), or None when the failure is not an extension's (a
    bug: keep the traceback)."""
    if isinstance(err, TimedOut):
        return dataclasses.replace(err.problem, message=f"{err.problem.message} on {path}")
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if str(Path(frame.filename).resolve()) in author_files:
            return Problem(
                path,
                1,
                0,
                f"an extension failed on this page: {type(err).__name__}: {err}",
                f"at {shown(root, Path(frame.filename))}:{frame.lineno}",
            )
    return None


def load(root: Path, entry: str, memo: Memo | None = None):
    """Return (module, short name) for one `extensions:` entry."""
    if entry.endswith(".py"):
        file = (root / entry).resolve()
        if not file.is_file() or not file.is_relative_to(root.resolve()):
            raise FileNotFoundError(f"no file {entry} in the course")
        stat = file.stat()  # `serve`: loaded again only when the file changes (any write changes its ctime)
        key = (file, stat.st_mtime_ns, stat.st_size, stat.st_ctime_ns)
        return remembered(memo, "extension file", key, lambda: _load_file(root, *key)), file.stem
    with _course_on_path(root):
        return importlib.import_module(entry), entry.rsplit(".", 1)[-1]


def _load_file(root: Path, file: Path, _mtime: int, _size: int, _ctime: int):
    name = "coursegen_course_ext_" + hashlib.sha256(str(file).encode()).hexdigest()[:12] + f"_{_mtime}_{_ctime}"
    from_text(root)  # what it imports of the course is compiled from its text as well
    spec = importlib.util.spec_from_file_location(name, file, loader=TextLoader(name, str(file)))
    if spec is None or spec.loader is None:  # never for a .py file; mypy cannot know that
        raise ImportError(f"{file} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def _course_on_path(root: Path):
    """Let `import name` find a module in the course folder while an extension is imported (from its text:
    a .pyc left in the course's __pycache__ may be older than the text, with the same stamp)."""
    from_text(root)
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(root))
