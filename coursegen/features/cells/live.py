"""What a code cell shows, worked out the same way at build time (execute.py) and live in the page's Pyodide.

Standard library only (and matplotlib when a cell draws): the page receives this file after
figures.py, as one source, and its worker calls `run(cells=…, index=…)`, a widget-style entry,
to run a learner's edit: the page's cells before it first, in one fresh namespace, then the
edited cell, whose outputs come back as the build bakes them ([kind, text, characters cut]).
"""

import ast
import contextlib
import io
import math
import traceback

try:  # at build time; in the page, figures.py's source comes first in the same namespace
    from coursegen.features.cells.figures import Figures, TooManyFigures
except ImportError:  # pragma: no cover - the page's worker
    pass

MAX_STREAM = 20_000  # characters of printed text kept per cell: a page is for reading
FIGURES = 12  # significant digits of a float value shown (as exercises bake theirs): no round-off on a page


class Outputs:
    """What one cell shows, in order: printed text merged while it continues, and the rest as it comes."""

    def __init__(self):
        self.items = []  # [kind, text, characters cut]
        self.printed = 0
        self.markup = 0

    def stream(self, kind, text):
        room = max(MAX_STREAM - self.printed, 0)
        kept, cut = text[:room], max(len(text) - room, 0)
        self.printed += len(kept)
        if self.items and self.items[-1][0] == kind:
            self.items[-1][1] += kept
            self.items[-1][2] += cut
        elif kept or cut:
            self.items.append([kind, kept, cut])

    def add(self, kind, text):
        if kind in ("html", "svg"):
            self.markup += len(text)
        self.items.append([kind, text, 0])

    def result(self):
        return tuple((kind, text, cut) for kind, text, cut in self.items)


class Stream(io.TextIOBase):
    """sys.stdout or sys.stderr of a running cell."""

    def __init__(self, outputs, kind):
        super().__init__()
        self.outputs, self.kind = outputs, kind

    def writable(self):
        return True

    def write(self, text):
        self.outputs.stream(self.kind, str(text))
        return len(text)


@contextlib.contextmanager
def captured(outputs):
    """Send what the cell prints to `outputs`."""
    with contextlib.redirect_stdout(Stream(outputs, "stdout")), contextlib.redirect_stderr(Stream(outputs, "stderr")):
        yield


def execute(code, first_line, filename, namespace, show):
    """Run a cell's statements; give the last one's value to `show(value, line)` unless it is no expression or its
    line ends with `;` (as notebooks do)."""
    tree = ast.parse(code, filename)
    ast.increment_lineno(tree, first_line - 1)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    shown = last is not None and not ends_with_semicolon(code, last, first_line)
    body = ast.Module(body=tree.body[:-1] if shown else tree.body, type_ignores=[])
    exec(compile(body, filename, "exec"), namespace)
    if shown and last is not None:
        value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
        if value is not None:
            show(value, last.lineno)


def ends_with_semicolon(code, last, first_line):
    """Return True when the text after the last expression starts with `;`."""
    lines = code.splitlines()
    row = (last.end_lineno or last.lineno) - first_line
    rest = "\n".join([lines[row][last.end_col_offset or 0 :], *lines[row + 1 :]])
    return rest.lstrip().startswith(";")


def shown_value(value, outputs, figures):
    """Add a value's figure, HTML (`_repr_html_`) or repr to the outputs; False when there was nothing to add."""
    if figures.is_figure(value):
        figures.add(value)
    elif not figures.drawn_by(value):  # `plt.plot(…)` as the last line: the figure shows it
        html = getattr(value, "_repr_html_", None)
        text = html() if callable(html) and not isinstance(value, type) else None
        if isinstance(text, str):
            outputs.add("html", text)
        else:
            outputs.add("text", shown_repr(value))


def shown_repr(value):
    """Return a value's repr, floats to FIGURES significant digits (0.1 + 0.2 shows 0.3), in lists, tuples and
    dicts too."""
    if isinstance(value, float) or (type(value).__module__ == "numpy" and hasattr(value, "dtype") and value.ndim == 0):
        number = value.item() if hasattr(value, "item") else value
        if isinstance(number, float) and math.isfinite(number):
            return repr(float(f"{number:.{FIGURES}g}"))
        return repr(value)
    if type(value) is dict and len(value) <= 1000:
        return "{" + ", ".join(f"{shown_repr(key)}: {shown_repr(item)}" for key, item in value.items()) + "}"
    if type(value) in (list, tuple) and len(value) <= 1000:
        inner = ", ".join(shown_repr(item) for item in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value)


def shown_print(*values, sep=" ", end="\n", file=None, flush=False):
    """`print` in a cell: a float, or a list, tuple or dict of them, is printed as a cell's value is shown
    (0.1 + 0.2 prints 0.3), so no printed number carries round-off; anything else prints as print does."""
    print(
        *(shown_repr(value) if _rounded(value) else value for value in values), sep=sep, end=end, file=file, flush=flush
    )


def _rounded(value) -> bool:
    """Return whether `print` shows `value` through shown_repr (its str is its repr, with floats inside)."""
    if isinstance(value, float) or (type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0):
        return not isinstance(value, str)
    return type(value) in (list, tuple, dict)


def _shower(outputs, figures):
    """Return show(value, line) for one cell's outputs and figures."""
    return lambda value, line: shown_value(value, outputs, figures)


def _display(values, show):
    """`display(…)`: show each value now, as the cell's last value would be."""
    for value in values:
        show(value, 0)


def run(cells, index, page="page"):
    """Run cells[0..index] in a fresh namespace and return {"outputs": […]} of the last one, or {"error": …}
    (the page's live entry)."""
    namespace: dict = {"__name__": "__main__"}
    outputs = None
    for number, (code, tags) in enumerate(cells[: index + 1]):
        if "skip-execution" in tags and number < index:
            continue
        outputs = Outputs()
        figures = Figures(outputs, ("live", page), number + 1, code, fresh=number == 0)
        show = _shower(outputs, figures)
        namespace["display"] = lambda *values, show=show: _display(values, show)
        namespace["print"] = shown_print
        with captured(outputs), figures.drawing():
            try:
                execute(code, 1, f"<cell {number + 1}>", namespace, show)
            except TooManyFigures as err:
                return {"error": str(err)}
            except BaseException as err:  # noqa: BLE001 - the learner's code, even SystemExit: shown, never raised
                text = "".join(traceback.format_exception_only(type(err), err)).strip()
                if number < index:
                    return {"error": f"cell {number + 1} above raised {text}"}
                if "raises-exception" not in tags:
                    return {"outputs": [list(item) for item in outputs.result()], "error": text}
                outputs.add("error", text)
            figures.collect()
    return {"outputs": [list(item) for item in (outputs.result() if outputs else ())]}
