"""A small, safe evaluator for `{calc}` expressions over the course's kernels.

Only an allow-list of syntax is accepted: numbers and strings, arithmetic, names of the
kernel modules and `math`, their public attributes, calls, subscripts, tuples and lists.
Anything else (builtins, lambdas, comprehensions, dunder or private names, imported modules
reached through a kernel such as `overflow.np`) is refused with a message, so an expression
can compute a number but never touch files or the interpreter.
"""

from __future__ import annotations

import ast
import operator
import types
from collections.abc import Callable
from typing import Any

from coursegen.course_code import CalcError
from coursegen.errors import choices_hint, did_you_mean

__all__ = ["CalcError", "evaluate"]  # CalcError: the course's Python's error, raised here for a wrong expression

BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
# read-only attributes allowed on values a kernel returns (numpy arrays and scalars)
VALUE_ATTRIBUTES = {
    "sum",
    "min",
    "max",
    "mean",
    "prod",
    "std",
    "item",
    "size",
    "shape",
    "ndim",
    "real",
    "imag",
    "argmax",
    "argmin",
}
MAX_INT_EXPONENT = 10_000
NESTED_HINT = "split it, or compute the value in a function of the course's package"
MAX_INT_BITS = 100_000  # about 30,000 digits: far more than prose needs, and quick to compute


def evaluate(expression: str, names: dict):
    """Return the value of `expression` with only `names` in scope, or raise CalcError."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as err:
        raise CalcError(
            f"cannot read {{calc}} expression '{expression.strip()}': {err.msg}",
            "write a Python expression such as math.sqrt(2) * 3",
        ) from None
    except (RecursionError, MemoryError):  # the parser's own stack: thousands of nested operators
        raise CalcError(
            f"{{calc}} expression '{expression.strip()[:60]}' is nested too deeply to read", NESTED_HINT
        ) from None
    try:
        return _eval(tree.body, names)
    except RecursionError:
        raise CalcError(
            f"{{calc}} expression '{expression.strip()[:60]}' is nested too deeply to evaluate", NESTED_HINT
        ) from None


def _eval(node: ast.AST, names: dict):
    handler = HANDLERS.get(type(node))
    if handler is None:
        raise CalcError(
            f"{{calc}} expressions cannot use {type(node).__name__} syntax",
            "use numbers, arithmetic, the names of the course's modules, attributes, calls and [subscripts]",
        )
    return handler(node, names)


def _constant(node: ast.Constant, names: dict):
    if isinstance(node.value, (int, float, str)) or node.value is None:
        return node.value
    raise CalcError(f"{{calc}} expressions cannot use the constant {node.value!r}")


class UnknownName(CalcError):
    """A name that is neither `math` nor a module of the course's package (compute adds which package)."""

    def __init__(self, name: str, names: dict):
        super().__init__(f"unknown name '{name}' in {{calc}}", choices_hint(name, names, "names"))
        self.name, self.near = name, bool(did_you_mean(name, names))

    def __reduce__(self):
        return (CalcError, (self.message, self.hint))


def _name(node: ast.Name, names: dict):
    if node.id not in names:
        raise UnknownName(node.id, names)
    return names[node.id]


def _attribute(node: ast.Attribute, names: dict):
    owner = _eval(node.value, names)
    attr = node.attr
    if attr.startswith("_"):
        raise CalcError(
            f"{{calc}} cannot use the private name '{attr}'", "use a public function or constant of the module"
        )
    if isinstance(owner, types.ModuleType):
        public = public_names(owner)
        if attr not in public:
            raise CalcError(f"module '{short_name(owner)}' has no '{attr}'", choices_hint(attr, public, "names"))
        return getattr(owner, attr)
    if attr not in VALUE_ATTRIBUTES or not hasattr(owner, attr):
        raise CalcError(
            f"{{calc}} cannot use '.{attr}' on a {type(owner).__name__}",
            "allowed on results: " + ", ".join(sorted(VALUE_ATTRIBUTES)),
        )
    return getattr(owner, attr)


def public_names(module: types.ModuleType) -> list[str]:
    """Return the names a module defines itself: no private names, no modules it merely imports."""
    own = module.__name__
    return sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and getattr(value, "__module__", own) in (own, None, "builtins", "math")
    )


def short_name(module: types.ModuleType) -> str:
    """Return a module's last dotted name part (`overflow` for a private package's submodule)."""
    return module.__name__.rsplit(".", 1)[-1]


def _call(node: ast.Call, names: dict):
    function = _eval(node.func, names)
    if isinstance(function, type) or not callable(function):
        raise CalcError(
            f"{{calc}} can only call functions (of the course's package, or math), not {ast.unparse(node.func)}"
        )
    if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
        raise CalcError("{calc} calls cannot unpack arguments with * or **")
    args = [_eval(arg, names) for arg in node.args]
    kwargs = {str(k.arg): _eval(k.value, names) for k in node.keywords}  # no ** (refused above): every arg is named
    try:
        return function(*args, **kwargs)
    except BaseException as err:  # noqa: BLE001 - a kernel refusing its input (or exiting) is the author's to fix
        raise CalcError(
            f"{{calc}} '{ast.unparse(node)}' failed: {type(err).__name__}: {err}",
            "check the arguments against the function's docstring",
        ) from None


def _binop(node: ast.BinOp, names: dict):
    op = BINARY.get(type(node.op))
    if op is None:
        raise CalcError(f"{{calc}} expressions cannot use the operator {type(node.op).__name__}")
    left, right = _eval(node.left, names), _eval(node.right, names)
    if isinstance(left, (str, list, tuple)) or isinstance(right, (str, list, tuple)):
        raise CalcError(f"{{calc}} arithmetic works on numbers, not on {ast.unparse(node)}")
    if op is operator.pow and isinstance(right, int) and abs(right) > MAX_INT_EXPONENT:
        raise CalcError(f"{{calc}} exponent {right} is too large")
    _check_int_size(op, left, right, node)
    try:
        return op(left, right)
    except (ArithmeticError, TypeError, ValueError, MemoryError) as err:
        raise CalcError(f"{{calc}} '{ast.unparse(node)}' failed: {type(err).__name__}: {err}") from None


def _check_int_size(op, left, right, node: ast.BinOp) -> None:
    """Refuse a product or power of integers whose result would exceed MAX_INT_BITS, before computing it.

    Each exponent is bounded, but powers of powers grow without bound ((2**10000)**10000 …).
    """
    if not (isinstance(left, int) and isinstance(right, int)) or isinstance(left, bool) or isinstance(right, bool):
        return
    if op is operator.pow and right > 0:
        bits = max(left.bit_length() - 1, 0) * right  # |left| ≥ 2^(bits of left − 1)
    elif op is operator.mul:
        bits = left.bit_length() + right.bit_length() - 1
    else:
        return
    if bits > MAX_INT_BITS:
        raise CalcError(
            f"{{calc}} '{ast.unparse(node)[:60]}' would be an integer of more than {MAX_INT_BITS:,} bits",
            "prose needs far fewer digits: use floats (2.0 ** n) or a smaller expression",
        )


def _unaryop(node: ast.UnaryOp, names: dict):
    op = UNARY.get(type(node.op))
    if op is None:
        raise CalcError(f"{{calc}} expressions cannot use the operator {type(node.op).__name__}")
    operand = _eval(node.operand, names)
    try:
        return op(operand)
    except (ArithmeticError, TypeError, ValueError) as err:
        raise CalcError(f"{{calc}} '{ast.unparse(node)[:60]}' failed: {type(err).__name__}: {err}") from None


def _subscript(node: ast.Subscript, names: dict):
    owner, key = _eval(node.value, names), _eval(node.slice, names)
    try:
        return owner[key]
    except Exception as err:  # noqa: BLE001 - KeyError, IndexError, TypeError, or a value's own refusal
        keys = list(owner) if isinstance(owner, dict) else []
        raise CalcError(
            f"{{calc}} '{ast.unparse(node)}' failed: {type(err).__name__}: {err}",
            choices_hint(key, keys, "keys") if keys else "",
        ) from None


def _sequence(node, names: dict):
    return [_eval(item, names) for item in node.elts]


HANDLERS: dict[type, Callable[[Any, dict], Any]] = {
    ast.Constant: _constant,
    ast.Name: _name,
    ast.Attribute: _attribute,
    ast.Call: _call,
    ast.BinOp: _binop,
    ast.UnaryOp: _unaryop,
    ast.Subscript: _subscript,
    ast.Tuple: lambda node, names: tuple(_sequence(node, names)),
    ast.List: _sequence,
}
