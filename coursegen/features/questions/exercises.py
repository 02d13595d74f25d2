"""`:::: exercise` questions: the learner writes Python, the page checks it against baked cases.

The block holds a prompt, a ```` ```python starter ```` fence, a ```` ```python solution ```` fence (the
reference), a ```` ```yaml checks ```` fence and optional `::: hint` parts. At build time the starter
and the reference must be valid Python, and the reference runs in the author-code worker (time-limited)
on every case: its results become the expected values baked into the page, and then it must pass the
checks exactly as the page will check the learner (coursegen/exercise_harness.py, which the page runs
in Pyodide). The reference reaches the page only inside the answer's `<details>`.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import json
import math
import random
import sys
from pathlib import Path

from markdown_it.token import Token

from coursegen.author_code import AuthorCodeStopped
from coursegen.course_code import ADDRESS, LIMIT_HINT, CalcError, kernel_names
from coursegen.features.questions import harness as exercise_harness
from coursegen.schema import Schema, blank, check
from coursegen.stages.parse import split_info
from coursegen.yamlio import LineDict, YamlError, load_yaml

ROLES = ("starter", "solution", "checks")
CHECKS = Schema(
    "the exercise's checks",
    {"function": str, "tolerance": (int, float), "cases": list},
    hints={"tolerance": "YAML reads 1e-9 as text: write 1.0e-9"},
)
CASE = Schema(
    "a check case",
    {"name": str, "args": list, "expected": object, "assert": str, "generate": str, "seed": int, "count": int},
    required={"name": "name: a floor of -5"},
)
DEFAULT_TOLERANCE = 1e-9
MIN_TOLERANCE = 1e-10  # baked floats keep 12 significant digits: a tighter tolerance could fail on them
FIGURES = 12
MAX_GENERATED = 50
MAX_EXACT_INT = 2**53  # the page reads its cases with JSON.parse: whole numbers beyond this lose digits
MAX_FLOAT = int(sys.float_info.max)  # and beyond this it reads Infinity
MAX_CODE = (
    50_000  # characters of a starter or reference: Python takes seconds to read millions, and no learner wants them
)
HARNESS = Path(exercise_harness.__file__).read_text(encoding="utf-8")


def fence_role(token) -> str:
    """Return 'starter', 'solution' or 'checks' for an exercise's fence, or ''."""
    name, rest = split_info(token.info)
    role = rest.split()[0] if rest.split() else ""
    return role if name in ("python", "yaml") and role in ROLES else ""


def prepare_exercise(tokens, start: int, end: int, env: dict, report) -> dict | None:
    """Check one exercise's fences and bake its cases; return what the page needs, or None after reporting."""
    level = tokens[start].level + 1
    fences: dict[str, list] = {role: [] for role in ROLES}
    for token in tokens[start + 1 : end]:
        if token.type == "fence" and token.level == level and fence_role(token):
            fences[fence_role(token)].append(token)
    usable = True
    packaged = tokens[start].meta.get("solution", "")  # `solution: module.function` in the course's package
    if packaged and fences["solution"]:
        report("':::: exercise' has a 'solution' attribute and a '```python solution' block; keep one")
        return None
    for role, found in fences.items():
        info = "yaml checks" if role == "checks" else f"python {role}"
        if packaged and role == "solution":
            continue
        if len(found) != 1:
            report(
                f"':::: exercise' needs one '```{info}' block, found {len(found)}",
                "an exercise holds a starter, a reference solution and its checks",
            )
            usable = False
    if not usable:
        return None
    starter, checks_fence = fences["starter"][0], fences["checks"][0]
    solution: Token | None = None if packaged else fences["solution"][0]
    for role, token in (("starter", starter), ("reference solution", solution)):
        problem = token is not None and _syntax_problem(token.content)
        if problem:
            line, message = problem
            _report_at(env, token, line, f"the exercise's {role} {message}")
            usable = False
    checks = _checks(checks_fence, env)
    if not usable or checks is None:
        return None
    code = env["ctx"].python
    try:
        if packaged:
            source, cases = code.call(
                bake_from_package, packaged, checks["function"], checks["cases"], checks["tolerance"]
            )
            solution = Token("fence", "code", 0)
            solution.content, solution.block, solution.level = source, True, level
            tokens.insert(tokens.index(checks_fence) + 1, solution)
        else:
            assert solution is not None  # an exercise without a package has its solution fence (checked above)
            cases = code.call(bake_cases, solution.content, checks["function"], checks["cases"], checks["tolerance"])
    except AuthorCodeStopped as stopped:
        report(f"the exercise's reference solution {stopped.located()}", LIMIT_HINT)
        return None
    except CaseError as err:  # at the line of the check case it is about
        env["problems"].error(env["path"], err.line, err.message, err.hint)
        return None
    except CalcError as err:
        report(err.message, err.hint)
        return None
    for token in (starter, solution):
        if token is not None:  # always, by now: a packaged reference was made into a fence above
            token.info = "python"  # rendered as plain Python code
    return {
        "function": checks["function"],
        "tolerance": checks["tolerance"],
        "cases": cases,
        "starter": starter,
        "solution": solution,
        "checks": checks_fence,
    }


def _syntax_problem(code: str) -> tuple[int, str] | None:
    """Return (line in the code, what is wrong) when the code cannot be read as Python, or None."""
    if len(code) > MAX_CODE:
        return 1, f"is too long: {len(code):,} characters, more than the {MAX_CODE:,} an exercise's code may hold"
    try:
        ast.parse(code)
    except SyntaxError as err:
        return err.lineno or 1, f"is not valid Python: {err.msg}"
    except (MemoryError, RecursionError):  # the parser's own limits: nesting, or expressions thousands of terms long
        return 1, "cannot be read: it is nested too deeply, or an expression in it is too long, for Python's parser"
    return None


def _report_at(env: dict, fence, line_in_code: int, message: str, hint: str = "") -> None:
    """Report at a line of a fence's content (the fence's own line is map[0] + 1)."""
    env["problems"].error(env["path"], fence.map[0] + 1 + line_in_code, message, hint)


def _checks(fence, env: dict) -> dict | None:
    """Return the checked `yaml checks` block: function, tolerance, cases (as written), or None."""
    first = fence.map[0] + 2
    path, problems = env["path"], env["problems"]
    try:
        data = load_yaml(fence.content, first_line=first)
    except YamlError as err:
        problems.error(path, err.line, err.message, err.hint)
        return None
    if not isinstance(data, LineDict):  # every mapping load_yaml reads
        problems.error(path, first, "the exercise's checks must be a mapping with 'function' and 'cases'")
        return None
    good = len(check(data, CHECKS, path, problems, first)) == len(data)  # every key known and of its type
    for key in ("function", "cases"):
        if key not in data:
            problems.error(
                path,
                first,
                f"the exercise's checks name no '{key}'",
                "e.g. function: largest_tile and cases: [{name: …, args: […]}]",
            )
            good = False
    if not good:
        return None
    tolerance = data.get("tolerance", DEFAULT_TOLERANCE)
    if not (MIN_TOLERANCE <= tolerance <= 1) or not math.isfinite(tolerance):
        problems.error(
            path,
            data.line_of("tolerance"),
            f"'tolerance' must be from {MIN_TOLERANCE:g} to 1, found {tolerance!r}",
            "expected floats keep 12 significant digits on the page",
        )
        return None
    if not data["function"].isidentifier():
        problems.error(path, data.line_of("function"), f"'function' must be a Python name, found {data['function']!r}")
        return None
    cases = [_case(case, data.line_of("cases"), env) for case in data["cases"]]
    if not data["cases"]:
        problems.error(path, data.line_of("cases"), "the exercise has no check cases", "list at least one")
    if not data["cases"] or None in cases:
        return None
    return {"function": data["function"], "tolerance": float(tolerance), "cases": cases}


def _case(case, fallback_line: int, env: dict) -> dict | None:
    """Return one case as written (checked), or None after reporting."""
    path, problems = env["path"], env["problems"]
    line = case.line if hasattr(case, "line") else fallback_line
    checked = check(case, CASE, path, problems, line)  # a case that is no mapping is reported there too
    if not isinstance(case, dict) or len(checked) < len(case) or blank(case.get("name")):
        return None  # reported by check
    if ("args" in case) == ("generate" in case):
        problems.error(
            path,
            line,
            f"check '{case['name']}' needs either 'args' (literal inputs) or 'generate' "
            "(a Python expression over `rng`, giving the argument list)",
        )
        return None
    if "generate" in case and ("seed" not in case or not 1 <= case.get("count", 1) <= MAX_GENERATED):
        problems.error(
            path,
            line,
            f"check '{case['name']}' generates inputs: it needs a 'seed' and a 'count' from 1 to {MAX_GENERATED}",
        )
        return None
    if "expected" in case and "assert" in case:
        problems.error(path, line, f"check '{case['name']}' has both 'expected' and 'assert'; keep one")
        return None
    return {**case, "line": line}  # the line goes to the worker, for its messages; never to the page


class CaseError(CalcError):
    """An author mistake about one check case, reported at the case's line."""

    def __init__(self, message: str, hint: str = "", line: int = 0):
        super().__init__(message, hint)
        self.line = line

    def __reduce__(self):  # the worker sends it back to the build whole, line included
        return type(self), (self.message, self.hint, self.line)


# ---- in the author-code worker ------------------------------------------------------------


def bake_cases(
    root: Path, package: str, solution: str, function: str, cases: list, tolerance: float, build: str
) -> list[dict]:
    """Return the concrete cases (generated inputs, expected values from the reference), or raise CalcError
    when the reference raises or does not pass its own checks as the page would check it."""
    names = kernel_names(root, package)  # the reference sees the course's modules by short name, as {calc} does
    namespace = {"__name__": "__exercise__", **names}
    with printing_kept():
        try:
            exec(compile(solution, exercise_harness.FILE, "exec"), namespace)
        except BaseException as err:  # noqa: BLE001 - sys.exit() too: an author mistake
            raise CalcError(f"the exercise's reference solution raised {exercise_harness.located(err)}") from None
        target = namespace.get(function)
        if not callable(target):
            raise CalcError(
                f"the exercise's reference solution defines no function {function}()",
                "name the function the checks call in 'function'",
            )
        return _bake(target, solution, function, cases, tolerance, names)


@contextlib.contextmanager
def printing_kept():
    """Keep what the reference prints as the page keeps the learner's (the first few thousand characters),
    not on the build's terminal: a reference printing a hundred megabytes must not flood it."""
    kept = exercise_harness.Kept()
    with contextlib.redirect_stdout(kept), contextlib.redirect_stderr(kept):
        yield kept


def bake_from_package(
    root: Path, package: str, dotted: str, function: str, cases: list, tolerance: float, build: str
) -> tuple[str, list[dict]]:
    """Return (the source shown as the reference, the baked cases) for a reference that is a function of the
    course's package, `module.function`; raise CalcError when there is no such function."""
    names = kernel_names(root, package)
    module, _, name = dotted.partition(".")
    target = getattr(names.get(module), name, None) if module in names and module != "math" else None
    if not callable(target):
        modules = ", ".join(sorted(n for n in names if n != "math")) or f"none: the course has no {package}/ package"
        raise CalcError(
            f"the exercise's solution '{dotted}' names no function of the course's {package} package",
            f"write module.function; its modules: {modules}",
        )
    try:
        source = inspect.getsource(target)
    except (OSError, TypeError):
        raise CalcError(f"the source of '{dotted}' cannot be read for the page") from None
    with printing_kept():
        return source, _bake(target, "", function, cases, tolerance, {**names, function: target})


def _bake(target, solution: str, function: str, cases: list, tolerance: float, names: dict) -> list[dict]:
    """Return the concrete cases with the reference's results as expected values, checked as the page checks."""
    baked, lines = [], {}
    for case in _concrete(cases):
        entry = {"name": case["name"], "args": case["args"]}
        lines[case["name"]] = line = case.get("line", 0)
        if "assert" in case:
            entry["assert"] = case["assert"]
        else:
            try:
                value = target(*json.loads(json.dumps(case["args"])))
            except BaseException as err:  # noqa: BLE001 - sys.exit() too: an author mistake
                raise CaseError(
                    f"the exercise's reference solution fails check '{case['name']}': {exercise_harness.located(err)}",
                    line=line,
                ) from None
            if "expected" not in case:
                value = written(value, case["name"], line)
            entry["expected"] = rounded(case.get("expected", value), case["name"], line, exact=False)
        baked.append(entry)
    report = exercise_harness.run(solution, function, baked, tolerance, names=names)
    for result in report.get("results", []):
        if not result["passed"]:
            detail = result.get("error") or f"expected {_brief(result['expected'])}, got {_brief(result['actual'])}"
            raise CaseError(
                f"the exercise's reference solution fails check '{result['name']}': {detail}",
                "correct the reference solution or the check",
                lines.get(result["name"], 0),
            )
    return baked


def expected_lines(exercise: dict) -> tuple[str, ...]:
    """Return one line per baked check, `name: function(args) == expected` (or its assert), for an author
    to read what the reference solution answered: its answers are what the page accepts."""
    function = exercise["function"]
    lines = []
    for case in exercise["cases"]:
        call = f"{function}({', '.join(_brief(arg, 40) for arg in case['args'])})"
        shown = f"assert {case['assert']}" if "assert" in case else f"== {_brief(case['expected'])}"
        lines.append(f"{case['name']}: {call} {shown}")
    return tuple(lines)


def expected_listing(course) -> list[str]:
    """Return, for `check --expected`, each exercise of the written units at its line, then what its
    reference solution answered for each check: the answers the page will accept."""
    listing = []
    for unit in course.written:
        for question in unit.page.questions:
            if question.expected:
                listing.append(
                    f"{unit.page.source.path}:{question.line}: exercise '{question.id}' accepts what its "
                    "reference solution answered:"
                )
                listing += [f"    {line}" for line in question.expected]
    return listing


def _brief(value, limit: int = 80) -> str:
    """Return `value`'s repr, shortened to `limit` characters (a 400-digit number, a long list)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def written(value, name: str, line: int = 0, whose: str = "the reference returns"):
    """Return a reference's result as the data the page is given (arrays and tuples as lists, numpy
    numbers as numbers), or raise CaseError for a value no page can be given the same way every build:
    a set (its order follows the hash seed), a generator, an array of objects, an object's repr."""
    if hasattr(value, "tolist") and getattr(getattr(value, "dtype", None), "kind", "") == "O":
        raise CaseError(
            f"check '{name}': {whose} an array of Python objects (dtype=object), which cannot be written into the page",
            "return an array of numbers, or a list",
            line,
        )
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [written(item, name, line, whose) for item in value]
    if isinstance(value, dict):
        return {_key(key, name, line, whose): written(item, name, line, whose) for key, item in value.items()}
    if isinstance(value, str) and (address := ADDRESS.search(value)):
        raise CaseError(
            f"check '{name}': {whose} text holding a memory address "
            f"({address.group(0)[4:-1]}), which changes on every run",
            "return the values themselves, not an object's repr",
            line,
        )
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise CaseError(
        f"check '{name}': {whose} {_kind(value)}, which cannot be written into the page the same way every build",
        "return sorted(…) for a set, list(…) for a generator; numbers, text, lists and dicts are kept",
        line,
    )


def _key(key, name: str, line: int, whose: str) -> str:
    """Return a dict key as the page's text key (as the learner's are made: str(key)), plain keys only."""
    if key is None or isinstance(key, (bool, int, float, str)):
        return str(key)
    if isinstance(key, tuple):
        written(list(key), name, line, whose)  # a tuple of plain values reads the same every build
        return str(key)
    raise CaseError(f"check '{name}': {whose} a dict keyed by {_kind(key)}", "key it by text or numbers", line)


def _kind(value) -> str:
    """Return `a set`, `a generator`, `a Point` for a value's type, in words."""
    kind = type(value).__name__
    return f"an {kind}" if kind[:1].lower() in "aeiou" else f"a {kind}"


def _concrete(cases: list) -> list[dict]:
    """Return the cases with generated inputs made: `generate` evaluated `count` times, over seeded `rng`s."""
    out = []
    for case in cases:
        line = case.get("line", 0)
        if "generate" not in case:
            out.append({**case, "args": rounded(case["args"], case["name"], line)})
            continue
        for number in range(case.get("count", 1)):
            args, again = (_generated(case, number) for _ in range(2))  # the same seed twice: the same inputs?
            if json.dumps(args) != json.dumps(again):
                raise CaseError(
                    f"check '{case['name']}': 'generate' gave other inputs from the same seed the second time "
                    f"({_brief(args, 60)}, then {_brief(again, 60)}), so every build would bake other cases",
                    "draw only from `rng` (rng.random(), rng.randint(…), rng.choice(…)), "
                    "not the random module or the clock",
                    line,
                )
            name = f"{case['name']} #{number + 1}" if case.get("count", 1) > 1 else case["name"]
            out.append(
                {
                    **{k: v for k, v in case.items() if k not in ("generate", "seed", "count")},
                    "name": name,
                    "args": args,
                }
            )
    return out


def _generated(case: dict, number: int) -> list:
    """Return the arguments `generate` gives for the `number`th case of a seed, as the page is given them."""
    line = case.get("line", 0)
    rng = random.Random(case["seed"] * 1000 + number)
    try:
        args = eval(case["generate"], {"rng": rng, "math": math})
    except BaseException as err:  # noqa: BLE001 - sys.exit() too: an author mistake
        raise CaseError(
            f"check '{case['name']}' cannot generate its inputs: {type(err).__name__}: {err}", line=line
        ) from None
    if not isinstance(args, (list, tuple)):
        raise CaseError(
            f"check '{case['name']}': 'generate' must give the list of arguments, not {type(args).__name__}", line=line
        )
    return rounded(written(list(args), case["name"], line, "'generate' gives"), case["name"], line)


def rounded(value, name: str, line: int = 0, exact: bool = True):
    """Return JSON data with floats kept to 12 significant digits: no round-off differences on the page.

    The page reads the cases with JavaScript's JSON.parse, whose numbers are floats: a whole number
    beyond 2**53 reaches the learner's code changed, so inputs (`exact`) may not hold one, and an
    expected value (compared within the tolerance) may not be beyond the largest float."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CaseError(f"check '{name}' has a value that is not finite: {value}", line=line)
        return float(f"{value:.{FIGURES}g}")
    if isinstance(value, (list, tuple)):
        return [rounded(item, name, line, exact) for item in value]
    if isinstance(value, dict):
        return {str(key): rounded(item, name, line, exact) for key, item in value.items()}
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > (MAX_EXACT_INT if exact else MAX_FLOAT):
        raise CaseError(
            f"check '{name}' has the whole number {_brief(value, 24)} ({len(str(abs(value)))} digits), larger than "
            + (
                "the page reads exactly (2**53), so the learner's code would be given another"
                if exact
                else "the page can read (about 1.8e308)"
            ),
            "use a float, or a smaller number",
            line,
        )
    if value is None or isinstance(value, (bool, int, str)):
        return value
    raise CaseError(
        f"check '{name}' has a value that cannot be written into the page: {type(value).__name__}", line=line
    )


def page_data(spec: dict, packages: list, runtime: dict, missing: dict | None = None) -> str:
    """Return the JSON the page's exercise.js reads: cases and expected values, Pyodide, the harness,
    and the packages this site's Pyodide copy lacks (name → why), so the page can say so before any run."""
    lacking = {name: why for name, why in (missing or {}).items() if name in packages}
    data = {
        "function": spec["function"],
        "tolerance": spec["tolerance"],
        "cases": spec["cases"],
        "packages": packages,
        "harness": HARNESS,
        "runtime": {key: runtime.get(key, "") for key in ("worker", "indexURL", "integrity")},
        **({"missing": lacking} if lacking else {}),
    }
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c")  # no `</script>` can end the block early
