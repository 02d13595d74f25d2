"""Numeric questions: `:::: numeric {answer: …, tolerance: …, unit: …}`.

The answer is a number, or a `{calc}` expression the build evaluates over the course's package, so the
number the page checks against cannot drift from the kernels. With `generate`, `seed` and `count` the
question comes in seeded variants: each draws its numbers (shown in the prompt by `` {var}`name` ``
roles) and its answer is computed from them; all are baked into the page and numeric.js picks one per
visit. Every mistake is a problem at the block's line (or the role's).
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation

from markdown_it.common.utils import escapeHtml

from coursegen.author_code import AuthorCodeStopped
from coursegen.course_code import LIMIT_HINT, CalcError
from coursegen.features.calc.extension import FROM_SUPERSCRIPT, MINUS, NBSP, SCI_TEXT, format_number, read_number
from coursegen.features.questions.blocks import answer_opening, closing, find, html
from coursegen.features.questions.kinds.numeric_answers import answers_for_course
from coursegen.stages.roles import register_role
from coursegen.theme.messages import say, texts

ATTRS = {
    "answer": (int, float, str),
    "tolerance": (int, float, str),
    "close": (int, float, str),
    "unit": (str, list),
    "generate": str,
    "seed": int,
    "count": int,
}
CALC_ANSWER = re.compile(r"^\{calc\}`([^`]+)`$", re.S)
UNIT = re.compile(r"^[^\d\s.,+\-−][^\n]{0,23}$")
MAX_VARIANTS = 50
ANSWER_HINT = 'give the number, {answer: 42}, or compute it from the course\'s package: {answer: "{calc}`module.NAME`"}'


def install(md) -> None:
    """Register the `{var}` role (a drawn number in a variant's prompt) and the check of stray ones."""
    register_role(md, "var", _render_var)
    md.core.ruler.push("question_vars", _check_vars)


def _render_var(token, env: dict, line: int) -> str:
    """Return a placeholder for a drawn number; the numeric question it sits in fills it in."""
    env.setdefault("question_vars", []).append((token, line))
    return f'<span class="question-var">{escapeHtml(token.content)}</span>'


def _check_vars(state) -> None:
    """Report `{var}` roles that no numeric question with variants filled in."""
    for token, line in state.env.pop("question_vars", []):
        if "filled" not in token.meta:
            state.env["problems"].error(
                state.env["path"],
                line,
                f"{{var}}`{token.content}` is outside a ':::: numeric' question with variants",
                "{var} shows a number that the question's 'generate' drew; use {calc} for a fixed number",
            )


# ---- checking and baking ------------------------------------------------------------------------


def prepare(tokens, start: int, attrs: dict, env: dict, report) -> dict | None:
    """Return the baked question (variants, tolerances, units) from its checked attributes, or None after
    reporting what is wrong (its `{var}` roles then say nothing more)."""
    baked = _prepare(attrs, env, report)
    if baked is None:
        for _, token in _var_roles(tokens[start : closing(tokens, start)]):
            token.meta["filled"] = True
    return baked


def _prepare(attrs: dict, env: dict, report) -> dict | None:
    if "answer" not in attrs:
        report("':::: numeric' question has no right answer", ANSWER_HINT)
        return None
    tolerance = _tolerance(attrs, "tolerance", report)
    close = _tolerance(attrs, "close", report)
    units = _units(attrs.get("unit"), report)
    variants = _variants(attrs, env, report)
    if tolerance is False or close is False or units is None or variants is None:
        return None
    if tolerance and close and tolerance[1] == close[1] and close[0] <= tolerance[0]:
        report(
            f"'close' ({close[2]}) must be wider than 'tolerance' ({tolerance[2]})",
            "'close' is the wider margin that scores an answer 'partly'",
        )
        return None
    baked = [b for b in (_baked(v, tolerance, close, units, report) for v in variants) if b is not None]
    if len(baked) < len(variants):
        return None
    return {"units": units or _calc_units(baked), "variants": baked}


def _tolerance(attrs: dict, key: str, report):
    """Return (Decimal, relative, text) for a `tolerance` or `close`, None when absent, False when malformed."""
    if key not in attrs:
        return None
    raw = str(attrs[key]).strip()
    relative = raw.endswith("%")
    try:
        value = Decimal(raw[:-1].strip() if relative else raw)
    except InvalidOperation:
        value = Decimal("NaN")
    if not value.is_finite() or value < 0:
        report(
            f"'{key}' must be a number or a percentage, found {attrs[key]!r}",
            f"an absolute margin such as {{{key}: 0.01}} or {{{key}: 1e-3}}, or a relative one such as {{{key}: 1%}}",
        )
        return False
    return (value / 100 if relative else value, relative, _plain_decimal(value) + ("%" if relative else ""))


def _units(value, report) -> list[str] | None:
    """Return the units an answer may be written in (the first is the one shown), or None when malformed."""
    units = [value] if isinstance(value, str) else list(value or [])
    for unit in units:
        if not isinstance(unit, str) or not UNIT.match(unit.strip()):
            report(
                f"'unit' lists the units an answer may be written in, found {unit!r}",
                "texts such as {unit: nats} or {unit: [nats, nat]}, not starting with a digit or a sign",
            )
            return None
    return [unit.strip() for unit in units]


def _variants(attrs: dict, env: dict, report) -> list[dict] | None:
    """Return each variant's drawn numbers, value and displayed answer (one without `generate`), or None."""
    answer, generate = attrs["answer"], attrs.get("generate", "").strip()
    calc = CALC_ANSWER.match(answer.strip()) if isinstance(answer, str) else None
    if generate and not calc:
        report("a numeric question with 'generate' needs a {calc} answer over the drawn names", ANSWER_HINT)
        return None
    if generate and ("seed" not in attrs or not 2 <= attrs.get("count", 0) <= MAX_VARIANTS):
        report(
            f"'generate' needs a 'seed' and a 'count' of variants from 2 to {MAX_VARIANTS}",
            "e.g. {generate: \"{'g': rng.randint(-8, -2)}\", seed: 1, count: 8}",
        )
        return None
    if not calc:
        return _plain_answer(answer, report)
    try:
        try:
            return env["ctx"].python.call(
                answers_for_course, calc.group(1).strip(), generate, attrs.get("seed", 0), attrs.get("count", 1)
            )
        except AuthorCodeStopped as stopped:
            raise CalcError(f"the numeric answer {stopped.located()}", LIMIT_HINT) from None
    except CalcError as err:
        report(err.message, err.hint)
        return None


def _plain_answer(answer, report) -> list[dict] | None:
    """Return the one variant of an answer written as a number (YAML reads 1e-3 as text: so does this)."""
    text = answer.strip() if isinstance(answer, str) else repr(answer)
    try:
        value = read_number(text)
    except ValueError:
        value = float("nan")
    if isinstance(answer, bool) or value != value or value in (float("inf"), float("-inf")):
        report(f"the numeric answer {answer!r} is not a number", ANSWER_HINT)
        return None
    shown = MINUS + text[1:] if text.startswith("-") else text
    return [{"drawn": {}, "value": answer if isinstance(answer, int) else value, "shown": shown}]


def _baked(variant: dict, tolerance, close, units: list[str], report) -> dict | None:
    """Return a variant as the page reads it: answer, its text (with the unit), the margins in absolute terms."""
    number, _, unit = variant["shown"].partition(NBSP)
    if unit and units and unit not in units:
        report(
            f"unknown unit '{unit}' in the numeric answer's {{calc}} format",
            "the question's units are " + ", ".join(f"'{u}'" for u in units) + "; use one of them or list it in 'unit'",
        )
        return None
    if number.endswith("%"):
        report("a numeric answer cannot be a percentage format", "compute the number itself and give 'unit: \"%\"'")
        return None
    unit = unit or (units[0] if units else "")
    value = Decimal(repr(variant["value"]))
    limit, limit_text = _margin(tolerance, value, number)
    out = {
        "answer": variant["value"],
        "shown": number + (NBSP + unit if unit else ""),
        "limit": float(limit),
        "limit_text": limit_text,
        "drawn": variant["drawn"],
    }
    if close:
        out["close"] = float(_margin(close, value, number)[0])
    return out


def _margin(tolerance, value: Decimal, number: str) -> tuple[Decimal, str]:
    """Return (the absolute margin, its text) of a tolerance; without one, half a unit of the shown last digit."""
    if tolerance:
        amount, relative, text = tolerance
        return (amount * abs(value), text) if relative else (amount, text)
    half = _half_last_digit(number)
    return half, _plain_decimal(half)


def _half_last_digit(number: str) -> Decimal:
    """Return half a unit in the last place of a displayed number ("88.72" → 0.005, "3.4 × 10³⁸" → 5e36)."""
    clean = number.replace(MINUS, "-").replace(",", "").strip()
    sci = SCI_TEXT.match(clean)
    mantissa = sci.group(1) if sci else clean
    exponent = 0
    if sci:
        exponent = int(sci.group(2).translate(FROM_SUPERSCRIPT)) if sci.group(2) else int(sci.group(3))
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return Decimal(5).scaleb(exponent - decimals - 1)


def _plain_decimal(value: Decimal) -> str:
    """Return a Decimal written out without an exponent or trailing zeros (0.005, 50, 1.5)."""
    return format(value.normalize(), "f")


def _calc_units(baked: list[dict]) -> list[str]:
    """Return the unit the {calc} format gave the answer, when the question lists none."""
    unit = baked[0]["shown"].partition(NBSP)[2]
    return [unit] if unit else []


# ---- the page -------------------------------------------------------------------------------------


def reshape(tokens, start: int, numeric: dict, env: dict) -> None:
    """Close the prompt, add the page's data and the answer for the study sheet, fill in the drawn numbers."""
    level, messages = tokens[start].level + 1, texts(env)
    first = numeric["variants"][0]
    contents = _var_contents(tokens[start : closing(tokens, start)])
    variants = [{k: v for k, v in variant.items() if k != "drawn"} for variant in numeric["variants"]]
    _fill_vars(tokens[start : closing(tokens, start)], first["drawn"], env)  # reports unknown names, bad formats
    for variant, baked in zip(variants, numeric["variants"], strict=True):
        variant["vars"] = {c: _var_or_blank(baked["drawn"], c) for c in contents}
    data = json.dumps(
        {"units": numeric["units"], "variants": variants},
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    ).replace("<", "\\u003c")
    script = f'<script type="application/json" data-numeric>{data}</script>\n'
    expected = html(
        '<p class="numeric-expected" data-numeric-expected>'
        f"{escapeHtml(say(messages, 'numeric.expected', answer=first['shown'], tolerance=first['limit_text']))}</p>\n"
    )
    answer = find(tokens, start, closing(tokens, start), level, "container_answer_open")
    if answer >= 0:
        tokens.insert(answer + 1, expected)
        tokens.insert(answer, html("</div>\n" + script))
    else:
        end = closing(tokens, start)
        tokens[end:end] = [
            html("</div>\n" + script + answer_opening(say(messages, "numeric.answer"))),
            expected,
            html("</div>\n</details>\n"),
        ]


def _fill_vars(tokens, drawn: dict, env: dict) -> None:
    """Show the first variant's numbers in the question's `{var}` roles (numeric.js swaps in another's)."""
    for block, token in _var_roles(tokens):
        token.meta["filled"] = True
        name, spec, line = _var_name(token.content), _var_spec(token.content), block.map[0] + 1 if block.map else 1
        if name not in drawn:
            known = ", ".join(drawn) or "none: the question has no 'generate'"
            env["problems"].error(
                env["path"], line, f"unknown name '{name}' in {{var}}", f"the question's variants draw: {known}"
            )
            continue
        try:
            shown = var_text(drawn[name], spec)
        except CalcError as err:
            env["problems"].error(env["path"], line, err.message, err.hint)
            continue
        token.meta["html"] = (
            f'<span class="question-var" data-var="{escapeHtml(token.content)}">{escapeHtml(shown)}</span>'
        )


def _var_or_blank(drawn: dict, content: str) -> str:
    """Return a role's text for one variant ('' when it is wrong: _fill_vars reported it and the build stops)."""
    try:
        return var_text(drawn[_var_name(content)], _var_spec(content))
    except (KeyError, CalcError):
        return ""


def _var_roles(tokens):
    """Yield (block, role token) for every `{var}` role among the tokens."""
    for block in tokens:
        for token in block.children or ():
            if token.type == "myst_role" and token.meta.get("name") == "var":
                yield block, token


def _var_contents(tokens) -> list[str]:
    return sorted({token.content for _, token in _var_roles(tokens)})


def _var_name(content: str) -> str:
    return content.partition("|")[0].strip()


def _var_spec(content: str) -> str:
    return content.partition("|")[2].strip()


def var_text(value, spec: str) -> str:
    """Return a drawn number as a `{var}` shows it: formatted by `spec`, else in full (12 significant digits)."""
    return format_number(value, spec or ("d" if isinstance(value, int) else ".12g"))
