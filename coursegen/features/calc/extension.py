"""Kernel-checked numbers: the `` {calc}`EXPRESSION | FORMAT | = STATED` `` inline role.

EXPRESSION is evaluated (safely, see calc_eval) over every public module of the course's own
Python package (`python: {package: …}` in course.yaml, default `kernels/`) and `math`; FORMAT
is a Python format spec or `sci:N`, optionally followed by a unit; `= STATED` is the number the
author claims, checked against the computed value at the displayed precision.
Every mistake is a problem at the role's line; the number in the page always comes from code.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from markdown_it.common.utils import escapeHtml

from coursegen.author_code import AuthorCodeStopped
from coursegen.course_code import LIMIT_HINT, CalcError, CourseCode, names_for_build
from coursegen.features.calc.evaluate import UnknownName, evaluate
from coursegen.stages.roles import register_role

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
FROM_SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
MINUS = "\u2212"
NBSP = "\u00a0"
FORMAT_HINT = "use a Python format spec such as .2f, ',' or .3g, or sci:N, then an optional unit (.2f nats)"
SCI_TEXT = re.compile(r"^([-+]?[\d.]+)\s*(?:[×x]\s*10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)|[eE]([-+]?\d+))$")


def install(md) -> None:
    """Register the `{calc}` role."""
    register_role(md, "calc", render_calc)


def start(root: Path, config, python: CourseCode) -> None:
    """Start the course's author-code worker and its import of the package now, while the build
    loads extensions and prepares (see CourseCode.warm_up): the first page that needs it waits less."""
    python.warm_up()


def render_calc(token, env: dict, line: int) -> str:
    """Return the HTML for one `{calc}` role, recording any problem at `line`."""
    try:
        try:
            expression, text = env["ctx"].python.call(compute_for_course, token.content)
        except AuthorCodeStopped as stopped:
            raise CalcError(
                f"{{calc}} '{token.content.split('|')[0].strip()[:60]}' {stopped.located()}", LIMIT_HINT
            ) from None
    except CalcError as err:
        env["problems"].error(env["path"], line, err.message, err.hint, col=token.meta.get("col", 0))
        return f'<code class="calc-error">{escapeHtml(token.content)}</code>'
    return f'<span class="calc" data-calc="{escapeHtml(expression)}">{escapeHtml(text)}</span>'


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
    try:
        value = as_number(evaluate(expression, names), expression)
    except UnknownName as err:
        raise CalcError(
            err.message, err.hint if err.near else f"{err.hint}; {package_hint(err.name, package)}"
        ) from None
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


def package_hint(name: str, package: str) -> str:
    """Return where {calc}'s names come from, for a name that matches none: the course's package is
    'kernels' unless course.yaml's `python: {package: …}` names another, and its modules go without it."""
    if name == package:
        return f"{{calc}} names the modules of the package '{package}' directly: write {{calc}}`MODULE.NAME`"
    where = "the default" if package == "kernels" else "named by course.yaml's python: {package: …}"
    return (
        f"{{calc}} knows math and the modules of the course's package '{package}' ({where}); "
        f"if '{name}' is your package's folder, write python: {{package: {name}}} in course.yaml "
        "and name its modules directly"
    )


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
