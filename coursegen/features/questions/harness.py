"""Checks code written for an exercise against its baked cases: standard library only, so that the
same file runs in the build's CPython (on the reference solution) and in the page's Pyodide (on the
learner's code, sent as the source of a widget-style `run(**params)` entry).

`run` never raises for a mistake in the checked code: it returns what went wrong, with the line
number in that code (compiled as `<exercise>`), as plain JSON-ready data.
"""

import contextlib
import io
import json
import math
import traceback

FILE = "<exercise>"
OUTPUT_LIMIT = 4000  # characters of printed output kept


class Kept(io.TextIOBase):
    """Printed output kept up to OUTPUT_LIMIT characters; the rest is dropped as it comes, so code that
    prints a hundred megabytes costs the time to print them, not the memory to hold them."""

    def __init__(self):
        super().__init__()
        self.parts, self.size = [], 0

    def writable(self):
        return True

    def write(self, text):
        if self.size < OUTPUT_LIMIT:
            self.parts.append(text[: OUTPUT_LIMIT - self.size])
            self.size += len(self.parts[-1])
        return len(text)

    def getvalue(self):
        return "".join(self.parts)


def run(code, function, cases, tolerance, mode="check", names=None):
    """Execute `code`; for mode "check", call `function` on every case and compare. Return a report dict."""
    printed = Kept()
    namespace = {"__name__": "__exercise__", **(names or {})}
    try:
        compiled = compile(code, FILE, "exec")
    except SyntaxError as err:
        return {"error": f"line {err.lineno}: SyntaxError: {err.msg}", "output": ""}
    with contextlib.redirect_stdout(printed):
        try:
            exec(compiled, namespace)
        except BaseException as err:  # noqa: BLE001 - the learner's mistake (even sys.exit()), reported with its line
            return {"error": located(err), "output": printed.getvalue()[:OUTPUT_LIMIT]}
        if mode != "check":
            return {"output": printed.getvalue()[:OUTPUT_LIMIT]}
        target = namespace.get(function)
        if not callable(target):
            return {"error": f"your code defines no function {function}()", "output": printed.getvalue()[:OUTPUT_LIMIT]}
        results = [check_case(target, case, tolerance) for case in cases]
    return {"results": results, "output": printed.getvalue()[:OUTPUT_LIMIT]}


def check_case(target, case, tolerance):
    """Return {name, passed, args, …} for one case: the expected and actual values, or the error."""
    report = {"name": case["name"], "args": case["args"], "passed": False}
    try:
        result = plain(target(*json.loads(json.dumps(case["args"]))))  # a fresh copy: the code may change it
    except BaseException as err:  # noqa: BLE001 - as in run()
        report["error"] = located(err)
        return report
    report["actual"] = shown(result)
    if "assert" in case:
        try:
            exec(compile(case["assert"], "<check>", "exec"), {"result": result, "args": case["args"], "math": math})
        except AssertionError as err:
            report["error"] = f"the check '{case['assert']}' does not hold" + (f": {err}" if str(err) else "")
            return report
        except BaseException as err:  # noqa: BLE001 - even `raise SystemExit` in a check is a failed check
            report["error"] = f"the check '{case['assert']}' raised {type(err).__name__}" + (
                f": {err}" if str(err) else ""
            )
            return report
        report["passed"] = True
        return report
    report["expected"] = case["expected"]
    try:
        report["passed"] = close(result, case["expected"], tolerance)
    except OverflowError:  # an int too large for a float (10**400 against 2.5): no number is near it
        report["error"] = "a whole number too large to compare with a float"
    return report


def located(err):
    """Return `line N: Type: message`, N the last line of the checked code the error passed through."""
    lines = [frame.lineno for frame in traceback.extract_tb(err.__traceback__) if frame.filename == FILE]
    where = f"line {lines[-1]}: " if lines else ""
    return f"{where}{type(err).__name__}: {err}"


def plain(value):
    """Return `value` as JSON-like data: arrays and tuples become lists, numpy scalars numbers."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def shown(value):
    """Return `value` with non-finite floats as text, so the report is valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, list):
        return [shown(item) for item in value]
    if isinstance(value, dict):
        return {key: shown(item) for key, item in value.items()}
    return value


def close(actual, expected, tolerance):
    """Return whether `actual` equals `expected`, numbers within `tolerance` (relative or absolute)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return actual is expected
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        if isinstance(expected, int) and isinstance(actual, int):
            return actual == expected
        return math.isclose(actual, expected, rel_tol=tolerance, abs_tol=tolerance)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(actual) == len(expected) and all(close(a, e, tolerance) for a, e in zip(actual, expected))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return actual.keys() == expected.keys() and all(close(actual[k], expected[k], tolerance) for k in expected)
    return actual == expected
