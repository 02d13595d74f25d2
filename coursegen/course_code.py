"""The course's own Python package, for the features that run it: one `CourseCode` per build.

The pipeline makes one per build and hands it to the extensions (`ParseContext.python`, and the
`start` event), so {calc} roles, widget entries and exercises' references share one worker set-up
and one build id. The package itself (`kernels/` by default, `python: {package: …}` in course.yaml)
is imported in the author-code worker from its own folder, afresh whenever its files change.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import math
import os
import pkgutil
import re
import sys
import types
from pathlib import Path

from coursegen import author_code
from coursegen.author_code import AuthorCodeStopped, Limits
from coursegen.extras import missing_module_hint

LIMIT_HINT = "each call of the course's Python may run for `limits: {seconds: …}` of course.yaml (default 10)"
IMPORT_HINT = "importing the course's package may take `limits: {import_seconds: …}` of course.yaml (default 120)"
IMPORTS = "author imports"  # page.derived: the modules a page's code cells import, for the next build's warm-up


class CalcError(ValueError):
    """An author mistake found running the course's Python (its package, or a `{calc}` expression):
    a message and a hint."""

    def __init__(self, message: str, hint: str = ""):
        self.message, self.hint = message, hint
        super().__init__(message)

    def __reduce__(self):  # the worker sends it back to the build whole, hint included
        return type(self), (self.message, self.hint)


class CourseCode:
    """Calls into the course's own Python for one build, in the worker (see author_code): the one
    runtime service of every feature that runs it ({calc}, widget entries, exercises' references).

    Before a worker runs its first call, it imports the kernels package as a call of its own, so
    that a package that cannot be imported, or never finishes importing, is reported as such;
    later calls get the same error at once instead of waiting out the limit again.
    """

    @classmethod
    def for_course(cls, root: Path, config, runtime: author_code.AuthorCode) -> CourseCode:
        """Return the build's one way to the course's Python (its package, under course.yaml's limits), run
        by `runtime`: the session's workers."""
        if config is None:
            return cls(root, runtime, Limits())
        return cls(root, runtime, config.limits, config.python.package)

    def __init__(self, root: Path, runtime: author_code.AuthorCode, limits: Limits, package: str = "kernels"):
        self.root, self.limits, self.package = root, limits, package  # package: the folder/import name
        self.runtime = runtime  # the session's workers
        self.build = os.urandom(8).hex()  # the worker keeps what one build set up (widget namespaces) for it alone
        self._setup: tuple | None = None

    @property
    def setup(self) -> tuple:
        """Return what a worker runs first: importing the kernels (their signature computed once per build;
        a new signature imports them afresh)."""
        if self._setup is None:
            folder = kernels_folder(self.root, self.package)
            self._setup = (import_kernels, (self.root, self.package, _signature(folder) if folder.is_dir() else ""))
        return self._setup

    def warm_up(self) -> None:
        """Start the worker and its import of the kernels while the build does other work."""
        if kernels_folder(self.root, self.package).is_dir():
            self.runtime.warm_up(self.limits, self.root, self.setup)

    def call(self, function, *args):
        """Return `function(root, package, *args, build)` computed in the worker, or raise CalcError, EntryError or
        AuthorCodeStopped."""
        return next(self.call_each(function, [args]))

    def import_installed(self, names: list[str]) -> None:
        """Import the installed modules of `names` in the worker under `limits.import_seconds`, not a call's
        limit: a cell or widget that imports matplotlib must not fail because the machine is busy."""
        if names:
            self.call_importing(import_installed, tuple(names))

    def call_importing(self, function, *args):
        """Return `function(root, package, *args, build)` like `call`, timed by `limits.import_seconds` (for a
        call that only imports what later calls use)."""
        importing = dataclasses.replace(self.limits, seconds=self.limits.import_seconds)
        return next(self.call_each(function, [args], importing))

    def call_each(self, function, arg_tuples: list[tuple], limits: Limits | None = None):
        """Yield `function(root, package, *args, build)` for each of `arg_tuples`, like `call` (see
        AuthorCode.call_each), under the course's limits or `limits`."""
        folder = kernels_folder(self.root, self.package)
        calls = [(self.root, self.package, *args, self.build) for args in arg_tuples]
        try:
            yield from self.runtime.call_each(limits or self.limits, self.root, function, calls, setup=self.setup)
        except author_code.SetupFailed as failed:
            err = failed.error
            if isinstance(err, AuthorCodeStopped):
                hint = IMPORT_HINT if err.timed_out else LIMIT_HINT
                err = CalcError(f"{folder.name}/ cannot be imported: it {err.located()}", hint)
            elif not isinstance(err, CalcError):
                raise err from failed  # a bug: keep its traceback (and the worker's, its cause)
            raise err from None


# `<Thing object at 0x7f…>`: a different text on every run, refused in an exercise's answers and a cell's outputs.
# Here, not in the exercises' module: the worker that runs cells imports this one anyway, and that one loads the parser.
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]{4,}>")


def imported_names(code: str) -> list[str]:
    """Return the modules `code`'s import statements name (at any depth), in order, each once; none when
    it is not valid Python (its run reports that)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    names: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(dict.fromkeys(alias.name for alias in node.names))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names[node.module] = None
    return list(names)


def import_installed(root: Path, package: str, names: tuple[str, ...], build: str) -> None:
    """In the worker: import those of `names` that are installed outside the course (numpy, matplotlib.pyplot),
    so that the call that uses them is timed without their import. A module that is missing, fails, or lives
    in the course is left to that call, which reports it at its line."""
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
            origin = spec.origin if spec is not None else None
            if origin and not Path(origin).resolve().is_relative_to(root.resolve()):
                importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the call that imports it reports it, at its line
            continue


def import_kernels(root: Path, package: str, signature: str) -> None:
    """Import the course's package and its public modules (what a worker runs first), or raise CalcError."""
    public_modules(root, package)


def kernel_names(root: Path, package: str = "kernels") -> dict[str, types.ModuleType]:
    """Return {name: module} for every public module of the course's package, plus `math`
    (just `math` when the course has no package)."""
    names = dict(public_modules(root, package))
    names["math"] = math
    return names


def names_for_build(root: Path, package: str, build: str) -> dict[str, types.ModuleType]:
    """Return `kernel_names(root, package)`, looked up once per build, not once per role: each lookup
    lists the package and stats every file of it to see whether it changed."""
    key = (str(root), package, build)
    if _NAMES[0] != key:
        _NAMES[:] = [key, kernel_names(root, package)]
    return _NAMES[1]


# In the worker process, not the build's: per process by nature (each worker imports the package
# itself), keyed by the build id, so every call sees its own build's package.
# The worker process's own tables, never the build's: the worker imports the course's kernels once and
# answers every call of its session's builds from them (per process by nature: each worker has its own).
_NAMES: list = [None, {}]  # [(root, package, build), its names]


def public_modules(root: Path, package: str = "kernels") -> dict[str, types.ModuleType]:
    """Return {short name: module} for the package's modules whose names do not start with '_'."""
    if not (root / package / "__init__.py").is_file():
        return {}
    loaded = load_kernels(root, package)
    modules = {}
    for info in pkgutil.iter_modules(loaded.__path__):
        if not info.name.startswith("_"):
            try:
                modules[info.name] = importlib.import_module(f"{loaded.__name__}.{info.name}")
            except BaseException as err:  # noqa: BLE001 - a broken module (or sys.exit) is reported, not raised
                raise CalcError(
                    f"{package}/{info.name} cannot be imported: {type(err).__name__}: {err}", missing_module_hint(err)
                ) from None
    return modules


def load_kernels(root: Path, package: str = "kernels") -> types.ModuleType:
    """Return the course's Python package, freshly imported whenever its files change."""
    folder = kernels_folder(root, package)
    if not (folder / "__init__.py").is_file():
        raise CalcError(
            f"this course has no {package}/ package", f"add {package}/__init__.py, or set python.package in course.yaml"
        )
    name = "_coursegen_kernels_" + _signature(folder)
    if name not in sys.modules:
        _forget(_LOADED.pop(str(folder), ""))  # the previous version of this folder's kernels
        _LOADED[str(folder)] = name
        from_text(root)  # its submodules, and whatever of the course they import, too
        init = str(folder / "__init__.py")
        spec = importlib.util.spec_from_file_location(
            name, init, loader=TextLoader(name, init), submodule_search_locations=[str(folder)]
        )
        if spec is None or spec.loader is None:  # never for a folder with an __init__.py, which it checked
            raise CalcError(f"{package}/ cannot be imported")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as err:  # noqa: BLE001 - a broken kernel file (or sys.exit) is reported, not raised
            del sys.modules[name]
            raise CalcError(
                f"{package}/ cannot be imported: {type(err).__name__}: {err}", missing_module_hint(err)
            ) from None
    return sys.modules[name]


def kernels_folder(root: Path, package: str = "kernels") -> Path:
    """Return the folder of the course's Python package (`python: {package: …}`, default kernels)."""
    return root / package


_LOADED: dict[str, str] = {}  # in the worker: kernels folder → name of the package loaded from it


def _forget(name: str) -> None:
    """Drop a loaded kernels package and its submodules from sys.modules."""
    for module in [m for m in sys.modules if name and (m == name or m.startswith(name + "."))]:
        del sys.modules[module]


def _signature(folder: Path) -> str:
    """Return a short hash of the kernel files' paths and texts: two saves of the same size within one
    tick of the clock (or `cp -p`) keep size and modification time, never the text."""
    found = hashlib.sha256(str(folder.resolve()).encode())
    for file in sorted(f for f in folder.rglob("*.py") if "__pycache__" not in f.parts):
        found.update(b"\0%s\0" % file.relative_to(folder).as_posix().encode() + file.read_bytes())
    return found.hexdigest()[:16]


# ---- the course's modules come from their text, never from bytecode ------------------------------
#
# Python trusts a `__pycache__/*.pyc` whose recorded modification time (whole seconds) and size match
# its source's: `ANSWER = 41` saved as `ANSWER = 42` within the same second, or copied with `cp -p`,
# would run as 41. So every module of a course folder is compiled from its text when imported, and no
# bytecode of it is read or written, in the worker (kernels, {calc}, widget entries) and in the build
# process (course extensions and what they import).


class TextLoader(importlib.machinery.SourceFileLoader):
    """SourceFileLoader that compiles the file's current text every time: no .pyc read, none written."""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


class CourseTextFinder(importlib.abc.MetaPathFinder):
    """Finds modules as the path finder does, and gives those of a course folder a TextLoader."""

    def __init__(self):
        self.folders: set[str] = set()  # real paths of the course folders, each ending with the separator

    def find_spec(self, fullname, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target) if self.folders else None
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader or not self.owns(spec.origin):
            return None  # the path finder, next in line, finds it again (its folder listings are cached)
        assert spec.origin is not None  # owns() said so
        spec.loader, spec.cached = TextLoader(fullname, spec.origin), None
        return spec

    def owns(self, file: str | None) -> bool:
        """Return True for a file of a course folder (not of a virtual environment or coursegen inside it)."""
        if not file:
            return False
        real = os.path.realpath(file)
        if not any(real.startswith(folder) for folder in self.folders):
            return False
        installed = {sys.prefix, sys.exec_prefix, sys.base_prefix, str(Path(__file__).resolve().parent)}
        parts = Path(real).parts
        return not any(real.startswith(os.path.realpath(p) + os.sep) for p in installed) and not (
            {"site-packages", "dist-packages", "node_modules"} & set(parts)
        )


def from_text(root: Path) -> None:
    """Make every later import of a module of the course folder `root` in this process compile its text."""
    finder = next((f for f in sys.meta_path if isinstance(f, CourseTextFinder)), None)
    if finder is None:
        finder = CourseTextFinder()
        at = next((i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder), len(sys.meta_path))
        sys.meta_path.insert(at, finder)
    finder.folders.add(os.path.realpath(root) + os.sep)
