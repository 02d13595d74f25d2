"""The one extension protocol, and the course's own extensions listed in course.yaml.

Every feature beyond plain Markdown is an `Extension`: the built-in ones (coursegen/features/) and
a course's own alike. Each hook does nothing unless the extension overrides it, so the pipeline
calls every hook of every extension:

- `install(md)`: add Markdown syntax (parse.register_block, register_fence, roles.register_role, …);
- `prepare(root, config, problems) -> data`: once per build; parse rules read it as
  `env["ctx"].extra[<extension's name>]`;
- `check(course, root, problems)`: validate the linked course (report with problems.error/warning);
- `add_files(course, root, assets, problems)`: add site files (`assets.add(name, bytes)` for hashed assets);
- `csp(config) -> {directive: [sources]}`: sources the pages' Content-Security-Policy must allow.

Most extensions are modules of plain functions named after the hooks (`ModuleExtension` wraps
one: the functions it defines, no-ops for the rest). A course's `extensions:` lists importable
module names (looked for in the course folder first) or `.py` files in the course. A course
extension that fails to load, or raises in a hook, is a problem at its line (in course.yaml, or
in the extension's own file), not a traceback; so is one that calls `sys.exit()` or raises
KeyboardInterrupt. Its import and each hook run under the course's `limits: {seconds: …}` (watchdog.py),
stopped past it and reported at the line they were at.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path

from coursegen.author_code import DEFAULT_SECONDS, shown_limit
from coursegen.errors import ContentError, Problem, Problems
from coursegen.memo import Memo, remembered
from coursegen.stages.config import CONFIG_NAME, config_line
from coursegen.watchdog import OutOfTime, in_folder, time_limit

HOOKS = ("install", "prepare", "check", "add_files", "csp")
EXITS = (SystemExit, KeyboardInterrupt)  # what course code may raise that is no Exception: a failure all the same
LIMIT_HINT = "make it faster, or raise `limits: {seconds: …}` in course.yaml (default 10)"


class Extension:
    """A feature of the build; override the hooks it needs. `name` keys its `prepare` data."""

    name = ""
    session_hooks: tuple[str, ...] = ()  # the hooks that take the build's session last (see ModuleExtension)

    def install(self, md) -> None:
        """Add Markdown syntax to the parser `md`."""

    def prepare(self, root: Path, config, problems: Problems):
        """Return what this extension's parse rules need, once per build."""
        return None

    def check(self, course, root: Path, problems: Problems) -> None:
        """Report problems in the linked course."""

    def add_files(self, course, root: Path, assets, problems: Problems) -> None:
        """Add files to the site."""

    def csp(self, config) -> dict[str, list[str]]:
        """Return the sources, per directive, that the pages' Content-Security-Policy must allow."""
        return {}


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
            if callable(getattr(module, hook, None)):
                setattr(self, hook, functools.partial(self._call, hook))
        self.session_hooks = ()  # a course's hooks take the documented arguments alone

    def _call(self, hook: str, *args):
        problems = next((a for a in args if isinstance(a, Problems)), None)
        late = f"extension '{self.name}' did not finish its {hook} hook within {shown_limit(self.seconds)}"
        try:
            with limited(self.root, self.seconds, late) as watch:
                return getattr(self.module, hook)(*args)
        except OutOfTime:
            problem = out_of_time(self.root, watch.where, late)
        except (Exception, *EXITS) as err:  # noqa: BLE001 - author code: report it where it failed
            problem = self.failure(hook, err)
        if problems is None:  # install(md) and csp(config) have nowhere else to report
            raise ContentError([problem]) from None
        problems.items.append(problem)
        return None

    def failure(self, hook: str, err: BaseException) -> Problem:
        """Return the problem for a hook that raised: at the extension's own line when it is in the course."""
        path, line = CONFIG_NAME, config_line(self.root, "extensions:")
        own = Path(getattr(self.module, "__file__", "") or "")
        for frame in reversed(traceback.extract_tb(err.__traceback__)):
            if own and Path(frame.filename) == own:
                path, line = _shown(self.root, own), frame.lineno or 1
                break
        return Problem(path, line, 0, f"extension '{self.name}' failed in {hook}: {described(err)}", exit_hint(err))


def with_session(extension: Extension, hook: str, session, *args):
    """Call one hook of `extension` with `args`, and the session after them when the hook takes it."""
    return getattr(extension, hook)(*args, *((session,) if hook in extension.session_hooks else ()))


def described(err: BaseException) -> str:
    """Return `Type: message`, or `Type` alone when the message is empty (a bare KeyboardInterrupt)."""
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__


def exit_hint(err: BaseException) -> str:
    """Return a hint for course code that tried to end the build, or ''."""
    if isinstance(err, EXITS):
        return "course code may not end the build: raise an exception, or report with problems.error(…)"
    return ""


def course_extensions(root: Path, config, problems: Problems, session) -> list[CourseExtension]:
    """Return the course's extensions from course.yaml, loaded, reporting those that cannot be; their
    files join the session's `extension_files` (a failure there is the course's problem, not a bug)."""
    found = []
    for entry in config.extensions if config else ():
        line = entry_line(root, entry)
        if taken_name(root, entry, line, problems):
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
                _shown(root, Path(frame.filename)) if frame else CONFIG_NAME,
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
        (_shown(root, Path(where[0])), where[1]) if where else (CONFIG_NAME, line or config_line(root, "extensions:"))
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
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if str(Path(frame.filename).resolve()) in author_files:
            return Problem(
                path,
                1,
                0,
                f"an extension failed on this page: {type(err).__name__}: {err}",
                f"at {_shown(root, Path(frame.filename))}:{frame.lineno}",
            )
    return None


def load(root: Path, entry: str, memo: Memo | None = None):
    """Return (module, short name) for one `extensions:` entry."""
    if entry.endswith(".py"):
        file = (root / entry).resolve()
        if not file.is_file() or not file.is_relative_to(root.resolve()):
            raise FileNotFoundError(f"no file {entry} in the course")
        stat = file.stat()  # `serve`: loaded again only when the file changes
        key = (file, stat.st_mtime_ns, stat.st_size)
        return remembered(memo, "extension file", key, lambda: _load_file(*key)), file.stem
    with _course_on_path(root):
        return importlib.import_module(entry), entry.rsplit(".", 1)[-1]


def _load_file(file: Path, _mtime: int, _size: int):
    name = "coursegen_course_ext_" + hashlib.sha256(str(file).encode()).hexdigest()[:12] + f"_{_mtime}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:  # never for a .py file; mypy cannot know that
        raise ImportError(f"{file} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def _course_on_path(root: Path):
    """Let `import name` find a module in the course folder while an extension is imported."""
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(root))


def _shown(root: Path, file: Path) -> str:
    try:
        return file.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return file.as_posix()
