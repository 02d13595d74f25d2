"""Widget specs: `widgets/<name>/spec.yaml` validated into frozen dataclasses, and parameter values.

A spec names the widget's parameters (type, range or choices, step, default, label, unit), what
its Python entry returns (`outputs`), which outputs only a live run can give (`live_only`, e.g.
timings), which states the build bakes into the page (`precompute`) and which Pyodide packages
its live Python needs (`packages`, e.g. [numpy, ml-dtypes]; none by default).
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from dataclasses import dataclass
from pathlib import Path

from coursegen.errors import Problems, choices_hint
from coursegen.memo import Memo, remembered
from coursegen.schema import Schema, check
from coursegen.stages.assets import file_stamps
from coursegen.stages.config import read_text
from coursegen.yamlio import LineDict, YamlError, load_yaml

WIDGET_FILES = ("spec.yaml", "widget.py", "view.js", "style.css", "result.html")
NEEDED = ("spec.yaml", "widget.py")  # a widget without a look of its own: the theme draws it (present.py)
OWN_LOOK = ("view.js", "result.html", "style.css")  # a widget that draws itself has all three
TEXT_FILES = ("spec.yaml", "widget.py", "result.html")  # read as text by the build: they must be UTF-8
SPEC = Schema(
    "a widget spec",
    {
        "title": str,
        "summary": str,
        "params": dict,
        "outputs": dict,
        "live_only": list,
        "precompute": object,
        "packages": list,
    },
    required={"title": "title: Growth step by step"},
)
PARAM_KEYS = {
    "type": str,
    "min": object,
    "max": object,
    "step": object,
    "choices": list,
    "default": object,
    "label": str,
    "unit": str,
    "help": str,
}
PARAM_TYPES = ("float", "int", "choice")
PACKAGE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
GRID_LIMIT = 2000  # most states a page may carry for one widget
VALUES_LIMIT = 100_000  # most values values() lists (a template may call it; count() is for counting)
MAX_BOUND = 1e300  # bounds and steps beyond this (or infinite, or NaN) make no slider


@dataclass(frozen=True)
class Param:
    """One widget parameter: its type and allowed values, default, label and unit."""

    name: str
    type: str
    default: object
    label: str
    unit: str = ""
    help: str = ""
    min: float | None = None
    max: float | None = None
    step: float | None = None
    choices: tuple = ()

    def span(self) -> tuple[float, float, float]:
        """Return (min, max, step) of a number parameter (load_widget gives every one all three)."""
        assert self.min is not None and self.max is not None and self.step is not None, self.name
        return self.min, self.max, self.step

    def count(self) -> int:
        """Return how many values the parameter allows, computed, not counted (a range may hold billions)."""
        if self.type == "choice":
            return len(self.choices)
        low, high, step = self.span()
        return round((high - low) / step) + 1

    def values(self) -> tuple:
        """Return every allowed value (the grid along this parameter), in order."""
        if self.type == "choice":
            return self.choices
        if self.count() > VALUES_LIMIT:
            raise ValueError(f"parameter '{self.name}' has {self.count()} values, too many to list")
        cast = int if self.type == "int" else float
        low, _, step = self.span()
        return tuple(cast(round(low + i * step, 10)) for i in range(self.count()))

    def describe(self) -> str:
        """Return the allowed values in words, for hints."""
        if self.type == "choice":
            return "one of: " + ", ".join(str(c) for c in self.choices)
        return f"from {fmt(self.min)} to {fmt(self.max)} in steps of {fmt(self.step)}"


@dataclass(frozen=True)
class Widget:
    """A widget folder: its validated spec and where its files are."""

    name: str
    folder: Path
    title: str
    params: tuple[Param, ...]
    outputs: tuple[str, ...]
    live_only: tuple[str, ...] = ()
    precompute: tuple[str, ...] = ()  # parameters the baked grid varies over
    packages: tuple[str, ...] = ()  # Pyodide packages live Python loads before running the entry
    own_look: bool = True  # False: no view.js or result.html, the theme draws what run() returns
    stylesheet: bool = True  # it has a style.css (optional for a widget without a look of its own)

    def param(self, name: str) -> Param | None:
        """Return the parameter called `name`, or None."""
        return next((p for p in self.params if p.name == name), None)

    def defaults(self) -> dict:
        """Return {parameter: default value}."""
        return {p.name: p.default for p in self.params}

    def grid(self, fixed: dict) -> list[dict]:
        """Return every state to bake: `fixed` values, varied over the precompute parameters."""
        axes = [p.values() if p.name in self.precompute else (fixed[p.name],) for p in self.params]
        states = [dict(zip([p.name for p in self.params], combo)) for combo in itertools.product(*axes)]
        return [fixed, *(state for state in states if state != fixed)]  # the page's own state first


def fmt(value) -> str:
    """Return a number as an author would write it (no trailing .0)."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def parse_value(param: Param, text: str):
    """Return `text` as a value of `param`, or raise ValueError with a sentence saying what is allowed."""
    if param.type == "choice":
        for choice in param.choices:
            if str(choice) == text:
                return choice
        raise ValueError(f"must be {param.describe()}")
    try:
        value = int(text) if param.type == "int" else float(text)
    except ValueError:
        kind = "an integer" if param.type == "int" else "a number"
        raise ValueError(f"must be {kind}") from None
    check_value(param, value)
    return value


def check_value(param: Param, value) -> None:
    """Raise ValueError when a number is outside the parameter's range or off its steps."""
    if not math.isfinite(value) or not param.min <= value <= param.max:
        raise ValueError(f"must be between {fmt(param.min)} and {fmt(param.max)}")
    offset = (value - param.min) / param.step
    if abs(offset - round(offset)) > 1e-9:
        raise ValueError(f"must be {param.describe()}")


def widget_folders(root: Path) -> list[Path]:
    """Return every widget folder under `widgets/`, valid or not, sorted."""
    return sorted(p for p in (root / "widgets").glob("*") if p.is_dir())


def load_widgets(root: Path, problems: Problems, memo: Memo | None = None) -> dict[str, Widget]:
    """Return every valid widget under `widgets/`, keyed by name, reporting broken specs (each kept in
    `memo` by its files' stamps)."""
    found = {}
    for folder in widget_folders(root):
        widget = load_widget(root, folder, problems, memo)
        if widget:
            found[widget.name] = widget
    return found


def load_widget(root: Path, folder: Path, problems: Problems, memo: Memo | None = None) -> Widget | None:
    """Return the widget in `folder`, or None (with problems) when its spec or files are broken.

    Read again only when one of its files changes (`serve` loads every widget on every rebuild):
    the widget and its problems are kept in the build's memo, keyed by the files' times and sizes."""
    shown = (folder / "spec.yaml").relative_to(root).as_posix()
    present = [name for name in WIDGET_FILES if (folder / name).is_file()]
    own_look = any(name in present for name in ("view.js", "result.html"))
    missing = [name for name in NEEDED + (OWN_LOOK if own_look else ()) if name not in present]
    if missing:
        problems.error(
            shown,
            1,
            f"widget '{folder.name}' lacks {', '.join(missing)}",
            f"a widget folder holds {' and '.join(NEEDED)}, and for a look of its own also " + ", ".join(OWN_LOOK),
        )
        return None
    key = (root, folder, file_stamps([folder / name for name in present]))
    widget, found = remembered(memo, "widget spec", key, lambda: _read_widget(root, folder, shown))
    problems.items.extend(found)
    return widget


def _read_widget(root: Path, folder: Path, shown: str) -> tuple[Widget | None, list]:
    problems = Problems()
    return _widget_from_files(root, folder, shown, problems), problems.items


def _widget_from_files(root: Path, folder: Path, shown: str, problems: Problems) -> Widget | None:
    texts = [
        read_text(folder / name, (folder / name).relative_to(root).as_posix(), problems) if (folder / name).is_file() else ""
        for name in TEXT_FILES
    ]  # each reported where it is not UTF-8
    if any(text is None for text in texts):
        return None
    try:
        data = load_yaml(texts[0] or "")  # never None here: checked above
    except YamlError as err:
        problems.error(shown, err.line, err.message, err.hint)
        return None
    before = len(problems.errors())
    top = check(data, SPEC, shown, problems)
    params = _params(top.get("params", LineDict()), shown, problems)
    precompute = _precompute(top.get("precompute", []), params, top, shown, problems)
    packages = top.get("packages", [])
    if not all(isinstance(name, str) and PACKAGE_NAME.match(name) for name in packages):
        problems.error(
            shown,
            top.line_of("packages"),
            f"'packages' must list Pyodide package names, found {packages!r}",
            "for example: packages: [numpy, ml-dtypes]",
        )
    if not len(problems.errors()) > before:
        check_entry_signature(texts[1] or "", params, folder, shown, top.line_of("params"), problems)
    if len(problems.errors()) > before:
        return None
    return Widget(
        folder.name,
        folder,
        top["title"],
        params,
        tuple(top.get("outputs", {})),
        tuple(top.get("live_only", [])),
        precompute,
        tuple(packages),
        own_look=(folder / "view.js").is_file(),
        stylesheet=(folder / "style.css").is_file(),
    )


def check_entry_signature(source: str, params, folder: Path, shown: str, line: int, problems: Problems) -> None:
    """Report, at the spec, each parameter that widget.py's `def run(...)` and spec.yaml's params disagree on:
    one run() needs and the spec lacks (the bake would fail with a TypeError at every page), or one the
    spec lists and run() does not take. An entry whose run is no plain function is left to the bake."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return  # reported, at its line, when the bake runs the entry
    run = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run"), None)
    if run is None:
        return
    args = run.args
    if args.vararg or args.posonlyargs:
        return
    positional = [a.arg for a in args.args]
    required = positional[: len(positional) - len(args.defaults)]
    required += [a.arg for a, default in zip(args.kwonlyargs, args.kw_defaults) if default is None]
    takes = set(positional) | {a.arg for a in args.kwonlyargs}
    listed = [p.name for p in params]
    entry = f"widgets/{folder.name}/widget.py"
    for name in required:
        if name not in listed:
            problems.error(
                shown,
                line,
                f"run() in {entry} (line {run.lineno}) needs parameter '{name}', which spec.yaml does not list "
                "under params",
                f"add '{name}' under params, or give it a default in run()",
            )
    if args.kwarg is None:
        for name in listed:
            if name not in takes:
                problems.error(
                    shown,
                    line,
                    f"spec.yaml lists parameter '{name}', which run() in {entry} (line {run.lineno}) does not take",
                    f"add '{name}' to run()'s parameters, or remove it from params",
                )


def _params(data: dict, shown: str, problems: Problems) -> tuple[Param, ...]:
    params = []
    for name, entry in data.items():
        line = data.line_of(name) if isinstance(data, LineDict) else 1
        good = check(entry, Schema(f"parameter '{name}'", PARAM_KEYS), shown, problems, line)
        kind = good.get("type", "")
        if kind not in PARAM_TYPES:
            problems.error(
                shown, line, f"parameter '{name}' has type {kind!r}", "the types are: " + ", ".join(PARAM_TYPES)
            )
            continue
        param = _param(name, kind, good, line, shown, problems)
        if param:
            params.append(param)
    if not params:
        problems.error(shown, getattr(data, "line", 1), "widget spec lists no 'params'")
    return tuple(params)


def _param(name: str, kind: str, good: dict, line: int, shown: str, problems: Problems) -> Param | None:
    need = ("choices", "default", "label") if kind == "choice" else ("min", "max", "step", "default", "label")
    absent = [key for key in need if key not in good]
    if absent:
        problems.error(shown, line, f"parameter '{name}' lacks {', '.join(absent)}")
        return None
    numbers = {k: good[k] for k in ("min", "max", "step") if k in good}
    wanted = int if kind == "int" else (int, float)
    if any(isinstance(v, bool) or not isinstance(v, wanted) for v in numbers.values()):
        noun = "integers" if kind == "int" else "numbers"
        problems.error(shown, line, f"parameter '{name}' is {kind}, so its min, max and step must be {noun}")
        return None
    default = good["default"]
    if kind == "float":  # one type per parameter, whatever YAML made of the numbers
        numbers = {k: float(v) for k, v in numbers.items()}
        default = float(default) if isinstance(default, int) and not isinstance(default, bool) else default
    param = Param(
        name,
        kind,
        default,
        good["label"],
        good.get("unit", ""),
        good.get("help", ""),
        choices=tuple(good.get("choices", ())),
        **numbers,
    )
    problem = _param_problem(param)
    if problem:
        problems.error(shown, line, f"parameter '{name}' {problem}")
        return None
    return param


def _param_problem(param: Param) -> str:
    """Return what is wrong with a parameter's range, step, choices or default, or ''."""
    if param.type == "choice":
        if not param.choices:
            return "has no choices"
        return "" if param.default in param.choices else f"has default {param.default!r}, not one of its choices"
    found = f"found min {param.min}, max {param.max}, step {param.step}"
    low, high, step = param.span()
    if not all(abs(v) <= MAX_BOUND for v in (low, high, step)):  # also refuses NaN
        return f"needs finite min, max and step within ±{MAX_BOUND:g}, {found}"
    if low >= high or step <= 0:
        return f"needs min < max and step > 0, {found}"
    if not math.isfinite((high - low) / step):
        return f"has a step of {step}, too small for its range"
    if abs(round((high - low) / step) * step - (high - low)) > 1e-9:
        return "has a range that is not a whole number of steps"
    try:
        check_value(param, param.default)
    except (ValueError, TypeError) as err:
        return f"has default {param.default!r}, which {err}"
    return ""


def _precompute(value, params, data, shown: str, problems: Problems) -> tuple[str, ...]:
    names = [p.name for p in params]
    chosen = names if value == "grid" else value if isinstance(value, list) else None
    line = data.line_of("precompute")
    if chosen is None:
        problems.error(shown, line, f"precompute must be 'grid' or a list of parameters, found {value!r}")
        return ()
    for name in chosen:
        if name not in names:
            problems.error(
                shown, line, f"precompute names unknown parameter '{name}'", choices_hint(name, names, "parameters")
            )
    size = math.prod(p.count() for p in params if p.name in chosen)  # arithmetic: no grid is built to count it
    if size > GRID_LIMIT:
        problems.error(
            shown,
            line,
            f"precompute would bake {size} states, more than {GRID_LIMIT}",
            "vary fewer parameters, or use coarser steps",
        )
    return tuple(n for n in chosen if n in names)
