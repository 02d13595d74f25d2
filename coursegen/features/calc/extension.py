"""Kernel-checked numbers: the `` {calc}`EXPRESSION | FORMAT | = STATED` `` inline role.

EXPRESSION is evaluated (safely, see calc_eval) over every public module of the course's own
Python package (`python: {package: …}` in course.yaml, default `kernels/`) and `math`; FORMAT
is a Python format spec or `sci:N`, optionally followed by a unit; `= STATED` is the number the
author claims, checked against the computed value at the displayed precision.
Every mistake is a problem at the role's line; the number in the page always comes from code.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import math
import os
import pkgutil
import re
import sys
import types
from pathlib import Path

from markdown_it.common.utils import escapeHtml

from coursegen import author_code
from coursegen.author_code import AuthorCodeStopped, Limits
from coursegen.extras import missing_module_hint
from coursegen.features.calc.evaluate import CalcError, evaluate
from coursegen.stages.roles import register_role

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
FROM_SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
MINUS = "\u2212"
NBSP = "\u00a0"
LIMIT_HINT = "each call of the course's Python may run for `limits: {seconds: …}` of course.yaml (default 10)"
FORMAT_HINT = "use a Python format spec such as .2f, ',' or .3g, or sci:N, then an optional unit (.2f nats)"
SCI_TEXT = re.compile(r"^([-+]?[\d.]+)\s*(?:[×x]\s*10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)|[eE]([-+]?\d+))$")

SESSION_HOOKS = ("prepare",)  # these hooks also take the build's session (extensions.ModuleExtension)


def install(md) -> None:
    """Register the `{calc}` role."""
    register_role(md, "calc", render_calc)


def prepare(root: Path, config, problems, session) -> CourseCode:
    """Return the way to the course's own Python for this build (its package, under the time limit)."""
    if config is None:
        return CourseCode(root, session.author_code, Limits())
    return CourseCode(root, session.author_code, config.limits, config.python.package)


def render_calc(token, env: dict, line: int) -> str:
    """Return the HTML for one `{calc}` role, recording any problem at `line`."""
    try:
        try:
            expression, text = env["ctx"].extra["calc"].call(compute_for_course, token.content)
        except AuthorCodeStopped as stopped:
            raise CalcError(
                f"{{calc}} '{token.content.split('|')[0].strip()[:60]}' {stopped.located()}", LIMIT_HINT
            ) from None
    except CalcError as err:
        env["problems"].error(env["path"], line, err.message, err.hint, col=token.meta.get("col", 0))
        return f'<code class="calc-error">{escapeHtml(token.content)}</code>'
    return f'<span class="calc" data-calc="{escapeHtml(expression)}">{escapeHtml(text)}</span>'


def warm_up(root: Path, config, session) -> None:
    """Start the course's author-code worker and its import of the kernels now (see CourseCode.warm_up)."""
    prepare(root, config, None, session).warm_up()


class CourseCode:
    """Calls into the course's own Python for one build, in the worker (see author_code).

    Before a worker runs its first call, it imports the kernels package as a call of its own, so
    that a package that cannot be imported, or never finishes importing, is reported as such;
    later calls get the same error at once instead of waiting out the limit again.
    """

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

    def call_each(self, function, arg_tuples: list[tuple]):
        """Yield `function(root, package, *args, build)` for each of `arg_tuples`, like `call` (see
        AuthorCode.call_each)."""
        folder = kernels_folder(self.root, self.package)
        calls = [(self.root, self.package, *args, self.build) for args in arg_tuples]
        try:
            yield from self.runtime.call_each(self.limits, self.root, function, calls, setup=self.setup)
        except author_code.SetupFailed as failed:
            err = failed.error
            if isinstance(err, AuthorCodeStopped):
                err = CalcError(f"{folder.name}/ cannot be imported: it {err.located()}", LIMIT_HINT)
            elif not isinstance(err, CalcError):
                raise err from failed  # a bug: keep its traceback (and the worker's, its cause)
            raise err from None


def import_kernels(root: Path, package: str, signature: str) -> None:
    """Import the course's package and its public modules (what a worker runs first), or raise CalcError."""
    public_modules(root, package)


def compute_for_course(root: Path, package: str, content: str, build: str) -> tuple[str, str]:
    """Return `compute(content)` over the course's package: what the worker runs for one role."""
    names = names_for_build(root, package, build)
    try:
        return compute(content, names, package)
    except CalcError:
        raise
    except BaseException as err:  # noqa: BLE001 - raised by a kernel value's own code (its __getattr__, __format__ …)
        raise CalcError(
            f"{{calc}} '{content.split('|')[0].strip()[:60]}' failed: {type(err).__name__}: {err}"
        ) from None


def compute(content: str, names: dict, package: str = "kernels") -> tuple[str, str]:
    """Return (expression, displayed text) for a role's content, or raise CalcError (naming the course's
    `package`, whatever course.yaml calls it)."""
    expression, spec, unit, stated = split_role(content)
    value = as_number(evaluate(expression, names), expression)
    if isinstance(value, float) and not math.isfinite(value):
        raise CalcError(
            f"{{calc}} '{expression}' gives {value}, not a finite number",
            "a page cannot state an infinite or undefined quantity; check the expression",
        )
    if spec is None:
        spec = spec_from_stated(stated) if stated else default_spec(value)
    shown = format_number(value, spec)
    if stated is not None and not same_number(shown, stated):
        raise CalcError(
            f"{{calc}} '{expression}' gives {shown}, but the text states {stated}",
            f"the course's package '{package}' computes {value!r}; correct the stated number or the expression",
        )
    return expression, shown + (NBSP + unit if unit else "")


def split_role(content: str) -> tuple[str, str | None, str, str | None]:
    """Split `EXPRESSION | FORMAT | = STATED` into (expression, spec or None, unit, stated or None)."""
    parts = [p.strip() for p in re.split(r"\\?\|", content)]
    expression, spec, unit, stated = parts[0], None, "", None
    if not expression:
        raise CalcError("{calc} has no expression", "write one such as {calc}`math.sqrt(2) | .3f`")
    for part in parts[1:]:
        if part.startswith("="):
            stated = part[1:].strip()
        elif part and spec is None:
            spec, _, unit = part.partition(" ")
            unit = unit.strip()
        elif part:
            raise CalcError(f"{{calc}} has more than one format: '{part}'", "write EXPRESSION | FORMAT | = STATED")
    return expression, spec, unit, stated


def as_number(value, expression: str) -> float | int:
    """Return a plain int or float for a kernel result, or raise CalcError when it is not one number."""
    if not isinstance(value, (int, float)) and getattr(value, "size", None) == 1 and hasattr(value, "item"):
        value = value.item()  # a numpy scalar or one-element array (numpy is not imported here: startup time)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = type(value).__name__
        hint = ("pick one entry, e.g. [" + repr(sorted(value)[0]) + "]") if isinstance(value, dict) and value else ""
        raise CalcError(f"{{calc}} '{expression}' gives a {kind}, not a number", hint)
    return value


def default_spec(value) -> str:
    """Return the format used when the author gives none: integers in full, others to 4 figures."""
    if isinstance(value, int):
        return "d"
    return "sci:4" if value and math.isfinite(value) and not 1e-4 <= abs(value) < 1e6 else ".4g"


def spec_from_stated(stated: str) -> str:
    """Return a format showing the computed value with the stated number's precision."""
    text = stated.replace(MINUS, "-").strip()
    sci = SCI_TEXT.match(text.replace(",", ""))
    if sci:
        return f"sci:{len(sci.group(1).replace('.', '').lstrip('-+0')) or 1}"
    decimals = len(text.split(".", 1)[1].rstrip("%")) if "." in text else 0
    return ("," if "," in text else "") + f".{decimals}f" + ("%" if text.endswith("%") else "")


def format_number(value, spec: str) -> str:
    """Return `value` formatted by a Python spec or `sci:N` (N significant figures, × 10ⁿ)."""
    try:
        text = scientific(value, int(spec[4:])) if spec.startswith("sci:") else format(value, spec)
    except (ValueError, TypeError) as err:
        raise CalcError(f"bad {{calc}} format '{spec}': {err}", FORMAT_HINT) from None
    except OverflowError as err:  # an integer too large for a float format (.2e, sci:N)
        raise CalcError(
            f"{{calc}} value cannot be shown as '{spec}': {err}", "use an integer format such as d"
        ) from None
    return MINUS + text[1:] if text.startswith("-") else text


def scientific(value, figures: int) -> str:
    """Return `value` with `figures` significant figures as `m × 10ⁿ` (e.g. 3.39 × 10³⁸)."""
    if not 1 <= figures <= 17:
        raise ValueError(f"sci needs 1 to 17 significant figures, not {figures}")
    if not math.isfinite(value):
        return "∞" if value > 0 else ("−∞" if value < 0 else "NaN")
    mantissa, _, exponent = format(value, f".{figures - 1}e").partition("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"


def read_number(text: str) -> float:
    """Return the number a displayed or stated text means (commas, −, % and × 10ⁿ understood)."""
    clean = text.replace(MINUS, "-").replace(",", "").replace("_", "").replace(NBSP, "").strip().rstrip("%")
    sci = SCI_TEXT.match(clean)
    if sci:
        exponent = sci.group(2).translate(FROM_SUPERSCRIPT) if sci.group(2) else sci.group(3)
        return float(sci.group(1)) * 10.0 ** int(exponent)
    return float(clean.replace("∞", "inf"))


def same_number(shown: str, stated: str) -> bool:
    """Return True when the stated text means the same number as the displayed one."""
    try:
        claimed = read_number(stated)
    except ValueError:
        raise CalcError(
            f"cannot read the stated number '{stated}'", "state a plain number such as 88.72, 1,024 or 3.4 × 10³⁸"
        ) from None
    return math.isclose(read_number(shown), claimed, rel_tol=1e-12, abs_tol=0.0) or read_number(shown) == claimed


# ---- the course's Python package, loaded from its own folder ----------------------------


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


# The worker process's own tables, never the build's: the worker imports the course's kernels once and
# answers every call of its session's builds from them (per process by nature: each worker has its own).
_NAMES: list = [None, {}]  # [(root, package, build), its names], in the worker


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
        spec = importlib.util.spec_from_file_location(
            name, folder / "__init__.py", submodule_search_locations=[str(folder)]
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


_LOADED: dict[str, str] = {}  # kernels folder → name of the package loaded from it (in the worker, as _NAMES)


def _forget(name: str) -> None:
    """Drop a loaded kernels package and its submodules from sys.modules."""
    for module in [m for m in sys.modules if name and (m == name or m.startswith(name + "."))]:
        del sys.modules[module]


def _signature(folder: Path) -> str:
    """Return a short hash of the kernel files' paths, sizes and modification times."""
    parts = [str(folder.resolve())] + [
        f"{f.relative_to(folder)}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in sorted(folder.rglob("*.py"))
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
