"""Running widget entries in CPython at build time, and compacting their results for the page.

An entry (`widgets/<name>/widget.py`) is executed exactly as the browser's worker executes it:
its source in a fresh namespace, then `run(**params)`, in the author-code worker process under
the course's time limit (see author_code). `import kernels` (or the name course.yaml gives under
`python: {package: …}`) inside it resolves to the course's own package, the one the build also
ships to the browser as a wheel. A course without a package runs entries without one.
"""

from __future__ import annotations

import contextlib
import json
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from coursegen.extras import missing_module_hint
from coursegen.course_code import CourseCode, import_installed, imported_names, load_kernels, public_modules
from coursegen.features.widgets.present import present

if TYPE_CHECKING:  # not imported in the worker that runs code cells: it loads the YAML reader and the stages
    from coursegen.features.widgets.spec import Widget


class EntryError(Exception):
    """A widget entry that failed: the message, the entry line it failed at (0 if unknown), a hint."""

    def __init__(self, message: str, line: int = 0, hint: str = ""):
        super().__init__(message)
        self.message, self.line, self.hint = message, line, hint

    def __reduce__(self):  # the worker sends it back to the build whole, line and hint included
        return type(self), (self.message, self.line, self.hint)


@contextlib.contextmanager
def course_kernels(root, package: str, build: str):
    """Make `import <package>` give the course's own package while the block runs (if it has one)."""
    replaced = _build_modules(root, package, build)
    saved = {name: sys.modules.get(name) for name in replaced}
    sys.modules.update(replaced)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


class EntryRunner:
    """Runs widget entries in the author-code worker (see author_code), caching each result for the build."""

    def __init__(self):
        self.results: dict[tuple, dict] = {}
        self.imported: set[Path] = set()  # widgets whose installed imports the worker has done

    def run_each(self, widget: Widget, states: list[dict], code: CourseCode):
        """Yield (params, the entry's JSON-able result) for each of `states` in order, run through the build's
        `code`; raise EntryError, CalcError or AuthorCodeStopped at the first that fails. The worker computes
        them all in one request."""
        keys = [(widget.name, json.dumps(params, sort_keys=True)) for params in states]
        todo = {key: params for key, params in zip(keys, states) if key not in self.results}
        if todo and widget.folder not in self.imported:  # widget.py's imports are not timed as its first run()
            code.call_importing(import_entry_modules, widget)
            self.imported.add(widget.folder)
        fresh = code.call_each(run_entry, [(widget, params) for params in todo.values()])
        for params, key in zip(states, keys):
            if key not in self.results:  # the next fresh result is this state's: both go in the grid's order
                self.results[key] = next(fresh)
            yield params, self.results[key]


def import_entry_modules(root, package: str, widget: Widget, build: str) -> None:
    """In the worker: import what widget.py imports from outside the course (see course_code.import_installed)."""
    import_installed(root, package, tuple(imported_names(entry_source(widget))), build)


def run_entry(root, package: str, widget: Widget, params: dict, build: str) -> dict:
    """Return the checked result of the entry's `run(**params)`: what the worker runs for one state."""
    with course_kernels(root, package, build), _matplotlib_defaults():
        namespace = _namespace(widget, build)
        try:
            result = namespace["run"](**params)
        except BaseException as err:  # noqa: BLE001 - even sys.exit(): reported at the fence with the entry's line
            line = _entry_line(err)
            if isinstance(err, TypeError) and not line:  # raised by the call itself, not inside run()
                raise EntryError(
                    f"run() does not take the parameters spec.yaml lists ({', '.join(params)}): TypeError: {err}"
                ) from None
            raise EntryError(f"{type(err).__name__}: {err}", line, missing_module_hint(err)) from None
        try:
            return checked_result(widget, result) if widget.own_look else shown_result(widget, result, namespace["run"])
        except EntryError:
            raise
        except BaseException as err:  # noqa: BLE001 - raised by the result's own code (a value's __eq__, __iter__ …)
            raise EntryError(f"run() returned something that failed when read: {type(err).__name__}: {err}") from None


@contextlib.contextmanager
def _matplotlib_defaults():
    """Run a state with matplotlib at its defaults, whatever ran before it in this worker (code cells set their
    page's settings; another widget may set its own): a baked figure must not depend on the order of calls."""
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is None:  # run() may import it: it then starts from its defaults
        yield
        return
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        yield


def _build_modules(root, package: str, build: str) -> dict:
    """Return {import name: module} of the course's package for this build, looked up once per build
    (not once per state); empty when the course has no package."""
    key = (str(root), package, build)
    if _MODULES[0] != key:
        modules = {}
        if (root / package / "__init__.py").is_file():
            modules = {
                package: load_kernels(root, package),
                **{f"{package}.{name}": module for name, module in public_modules(root, package).items()},
            }
        _MODULES[:] = [key, modules]
    return _MODULES[1]


# The worker process's own tables, never the build's (see calc's _NAMES): per process by nature.
_MODULES: list = [None, {}]  # [(root, package, build), {import name: module}], in the worker
_NAMESPACES: dict[tuple, dict] = {}  # (build, widget folder) → the entry's module namespace, in the worker


def _namespace(widget: Widget, build: str) -> dict:
    """Return the entry's namespace, executing widget.py once per build (its globals start fresh each build)."""
    key = (build, str(widget.folder))
    if key not in _NAMESPACES:
        for old in [k for k in _NAMESPACES if k[0] != build]:
            del _NAMESPACES[old]
        source = entry_source(widget)
        namespace = {"__name__": f"widget_{widget.name.replace('-', '_')}"}
        try:
            exec(compile(source, str(widget.folder / "widget.py"), "exec"), namespace)
        except BaseException as err:  # noqa: BLE001 - the entry is course content: report it
            line = getattr(err, "lineno", None) or _entry_line(err)
            raise EntryError(f"{type(err).__name__}: {err}", line, missing_module_hint(err)) from None
        if not callable(namespace.get("run")):
            raise EntryError("widget.py defines no function run(**params)", 1)
        _NAMESPACES[key] = namespace
    return _NAMESPACES[key]


def entry_source(widget: Widget) -> str:
    """Return the entry's source: the exact text the browser shows and runs."""
    return (widget.folder / "widget.py").read_text(encoding="utf-8")


def _entry_line(err: BaseException) -> int:
    """Return the line of widget.py where the exception passed last, or 0."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename.endswith("widget.py")]
    return (frames[-1].lineno or 0) if frames else 0


def checked_result(widget: Widget, result) -> dict:
    """Return the result when it is a JSON-able dict holding every declared output."""
    if not isinstance(result, dict):
        raise EntryError(f"run() returned {type(result).__name__}, not a dict")
    missing = [key for key in widget.outputs if key not in result]
    if missing:
        raise EntryError(f"run() returned no {', '.join(missing)} (declared under outputs in spec.yaml)")
    try:
        json.dumps(result, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise EntryError(f"run() returned something JSON cannot hold: {err}") from None
    return result


def shown_result(widget: Widget, result, run) -> dict:
    """Return what the theme draws for a widget without a look of its own (present.present's record), or raise
    EntryError at the line of `def run` when run() returned something it cannot show."""
    line = getattr(getattr(run, "__code__", None), "co_firstlineno", 0)
    if isinstance(result, Mapping):
        missing = [key for key in widget.outputs if key not in result]
        if missing:
            raise EntryError(f"run() returned no {', '.join(missing)} (declared under outputs in spec.yaml)", line)
    try:
        return present(result, widget.live_only)
    except ValueError as err:
        raise EntryError(str(err), line) from None


def baked(widget: Widget, result: dict) -> dict:
    """Return a result without the outputs only a live run can give (timings)."""
    return {k: v for k, v in result.items() if k not in widget.live_only}


def compact_states(widget: Widget, states: list[tuple[dict, dict]]) -> dict:
    """Return baked states compactly: outputs equal in every state once, the rest column by column.

    Columns put like values side by side (all verdicts, then all margins), which gzip packs
    about a fifth smaller than state-by-state rows.
    """
    results = [result for _, result in states]
    const = {k: v for k, v in results[0].items() if all(r.get(k) == v for r in results)}
    return {
        "params": {p.name: [params[p.name] for params, _ in states] for p in widget.params},
        "const": const,
        "outputs": {k: [r[k] for r in results] for k in results[0] if k not in const},
    }


def states_json(data: dict) -> str:
    """Return JSON safe to place inside a <script> element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c")
