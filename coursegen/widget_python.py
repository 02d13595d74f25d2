"""Running widget entries in CPython at build time, and compacting their results for the page.

An entry (`widgets/<name>/widget.py`) is executed exactly as the browser's worker executes it:
its source in a fresh namespace, then `run(**params)`. `import kernels` (or the name course.yaml
gives under `python: {package: …}`) inside it resolves to the course's own package, the one the
build also ships to the browser as a wheel. A course without a package runs entries without one.
"""
from __future__ import annotations

import contextlib
import json
import sys
import traceback

from .calc import load_kernels, public_modules
from .widget_spec import Widget


class EntryError(Exception):
    """A widget entry that failed: the message and the entry line it failed at (0 if unknown)."""

    def __init__(self, message: str, line: int = 0):
        super().__init__(message)
        self.message, self.line = message, line


@contextlib.contextmanager
def course_kernels(root, package: str = "kernels"):
    """Make `import <package>` give the course's own package while the block runs (if it has one)."""
    if not (root / package / "__init__.py").is_file():
        yield
        return
    modules = public_modules(root, package)
    replaced = {package: load_kernels(root, package),
                **{f"{package}.{name}": module for name, module in modules.items()}}
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
    """Runs widget entries against the course's kernels, caching each result for the build."""

    def __init__(self, root, package: str = "kernels"):
        self.root, self.package = root, package
        self.namespaces: dict[str, dict] = {}
        self.results: dict[tuple, dict] = {}

    def run(self, widget: Widget, params: dict) -> dict:
        """Return the entry's JSON-able result for `params`, or raise EntryError."""
        key = (widget.name, json.dumps(params, sort_keys=True))
        if key not in self.results:
            with course_kernels(self.root, self.package):
                namespace = self._namespace(widget)
                try:
                    result = namespace["run"](**params)
                except Exception as err:  # noqa: BLE001 - reported at the fence with the entry's line
                    raise EntryError(f"{type(err).__name__}: {err}", _entry_line(err)) from None
            self.results[key] = checked_result(widget, result)
        return self.results[key]

    def _namespace(self, widget: Widget) -> dict:
        if widget.name not in self.namespaces:
            source = entry_source(widget)
            namespace = {"__name__": f"widget_{widget.name.replace('-', '_')}"}
            try:
                exec(compile(source, str(widget.folder / "widget.py"), "exec"), namespace)  # noqa: S102
            except Exception as err:  # noqa: BLE001 - the entry is course content: report it
                line = getattr(err, "lineno", None) or _entry_line(err)
                raise EntryError(f"{type(err).__name__}: {err}", line) from None
            if not callable(namespace.get("run")):
                raise EntryError("widget.py defines no function run(**params)", 1)
            self.namespaces[widget.name] = namespace
        return self.namespaces[widget.name]


def entry_source(widget: Widget) -> str:
    """Return the entry's source: the exact text the browser shows and runs."""
    return (widget.folder / "widget.py").read_text(encoding="utf-8")


def _entry_line(err: Exception) -> int:
    """Return the line of widget.py where the exception passed last, or 0."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename.endswith("widget.py")]
    return frames[-1].lineno if frames else 0


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
    return {"params": {p.name: [params[p.name] for params, _ in states] for p in widget.params},
            "const": const,
            "outputs": {k: [r[k] for r in results] for k in results[0] if k not in const}}


def states_json(data: dict) -> str:
    """Return JSON safe to place inside a <script> element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c")
