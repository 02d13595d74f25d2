"""What a `:::: numeric` question's answer is, computed in the author-code worker: its `{calc}` expression
evaluated over the course's package (once, or once per seeded variant whose drawn numbers join the names).

This module runs in the worker, so it imports only the calc evaluator, not the Markdown parser.
"""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path

from coursegen.course_code import CalcError, names_for_build
from coursegen.features.calc.evaluate import UnknownName, evaluate
from coursegen.features.calc.extension import as_number, compute, package_hint

FIGURES = 12  # significant digits a number keeps in the page: no round-off differs between machines
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
GENERATE_HINT = (
    "write a Python expression over `rng` giving a mapping of names to numbers, e.g. {'g': rng.randint(-8, -2)}"
)


def answers_for_course(
    root: Path, package: str, content: str, generate: str, seed: int, count: int, build: str
) -> list[dict]:
    """Return one {"drawn": {name: number}, "value": number, "shown": text} per variant (one without `generate`)."""
    names = names_for_build(root, package, build) if root is not None else {"math": math}
    draws = [_drawn(generate, seed, number, names) for number in range(count)] if generate else [{}]
    return [{"drawn": drawn, **_answer(content, {**names, **drawn}, package)} for drawn in draws]


def _answer(content: str, names: dict, package: str) -> dict:
    """Return the value and the displayed text of one `{calc}` content over `names`."""
    parts = re.split(r"(\\?\|)", content, maxsplit=1)
    expression, rest = parts[0], "".join(parts[1:])  # rest: the role's `| FORMAT | = STATED`, bar included
    try:
        value = as_number(evaluate(expression, names), expression.strip())
    except UnknownName as err:
        raise CalcError(
            err.message, err.hint if err.near else f"{err.hint}; {package_hint(err.name, package)}"
        ) from None
    except CalcError:
        raise
    except BaseException as err:  # noqa: BLE001 - a kernel value's own code failing is the author's to fix
        raise CalcError(f"{{calc}} '{expression.strip()[:60]}' failed: {type(err).__name__}: {err}") from None
    try:  # the role's format and its `= STATED` check, on the value computed once
        _, shown = compute(f"answer {rest}", {"answer": value}, package)
    except CalcError as err:
        raise CalcError(err.message.replace("'answer'", f"'{expression.strip()}'", 1), err.hint) from None
    return {"value": _kept(value), "shown": shown}


def _kept(value):
    """Return a number as the page keeps it: integers whole, floats to FIGURES significant digits."""
    return value if isinstance(value, int) else float(f"{value:.{FIGURES}g}")


def _drawn(generate: str, seed: int, number: int, names: dict) -> dict:
    """Return the numbers one variant draws (the same twice from its seed, or CalcError)."""
    first, again = (_draw_once(generate, seed, number, names) for _ in range(2))
    if json.dumps(first) != json.dumps(again):
        raise CalcError(
            f"'generate' drew other numbers from the same seed the second time ({first}, then {again}), "
            "so every build would bake other variants",
            "draw only from `rng` (rng.random(), rng.randint(…), rng.choice(…)), not the random module or the clock",
        )
    return first


def _draw_once(generate: str, seed: int, number: int, names: dict) -> dict:
    rng = random.Random(seed * 1000 + number)
    try:
        drawn = eval(generate, {**names, "rng": rng, "math": math})  # the course's own code, as exercises' generate
    except BaseException as err:  # noqa: BLE001 - sys.exit() too: an author mistake
        raise CalcError(
            f"'generate' cannot draw variant {number + 1}: {type(err).__name__}: {err}", GENERATE_HINT
        ) from None
    if not isinstance(drawn, dict) or not drawn:
        raise CalcError(
            f"'generate' must give a mapping of names to numbers, not {type(drawn).__name__}", GENERATE_HINT
        )
    out = {}
    for name, value in drawn.items():
        if not isinstance(name, str) or not NAME.match(name):
            raise CalcError(f"'generate' drew a number under the name {name!r}", "names are letters, digits and '_'")
        if hasattr(value, "item") and getattr(value, "size", None) == 1:
            value = value.item()  # a numpy scalar
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise CalcError(f"'generate' drew {value!r} for '{name}', not a finite number", GENERATE_HINT)
        out[name] = _kept(value)
    return dict(sorted(out.items()))
