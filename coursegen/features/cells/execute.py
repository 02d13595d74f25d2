"""Running a page's code cells in the author-code worker, as a notebook kernel would, and keeping what they show.

Each cell is one call (`run_cell`), so the time limit is per cell and a cell that never ends is
found by the number of answers that came back. The cells of one page share a namespace, kept in
the worker for the build and the page and started afresh by the page's first cell. The code is
compiled with the Markdown file's path and line numbers (the cell's lines shifted to where they
stand in the page), so every traceback, and the watchdog's report of a cell out of time, names
the page's own line.

What a cell shows is a list of `(kind, text)` outputs in the order they came: "stdout" and
"stderr" (printed text, cut after MAX_STREAM characters with a count of what was cut), "text"
(a value's repr), "html" (a value's `_repr_html_`), "svg" (a matplotlib figure) and "error" (the
traceback of a cell tagged raises-exception). Anything that would read differently in the next
build (a memory address, a set of strings) is refused with CellError.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import math
import traceback
from pathlib import Path

from coursegen.features.cells.figures import Figures
from coursegen.features.questions.exercises import ADDRESS
from coursegen.features.widgets.baking import course_kernels

MAX_STREAM = 20_000  # characters of printed text kept per cell: a page is for reading
MAX_MARKUP = 2_000_000  # characters of HTML and SVG one cell may show
FIGURES = 12  # significant digits of a float value shown (as exercises bake theirs): no round-off on a page
ADDRESS_HINT = (
    "end the line with ; to hide the value, show the values themselves, or give the class a __repr__ without its "
    "address"
)


class CellError(Exception):
    """An author mistake in a cell: the message, the page's line it is about, a hint."""

    def __init__(self, message: str, line: int, hint: str = ""):
        super().__init__(message)
        self.message, self.line, self.hint = message, line, hint

    def __reduce__(self):  # the worker sends it back to the build whole
        return type(self), (self.message, self.line, self.hint)


class Outputs:
    """What one cell shows, in order: printed text merged while it continues, and the rest as it comes."""

    def __init__(self):
        self.items: list[list] = []  # [kind, text, characters cut]
        self.printed = 0
        self.markup = 0

    def stream(self, kind: str, text: str) -> None:
        room = max(MAX_STREAM - self.printed, 0)
        kept, cut = text[:room], max(len(text) - room, 0)
        self.printed += len(kept)
        if self.items and self.items[-1][0] == kind:
            self.items[-1][1] += kept
            self.items[-1][2] += cut
        elif kept or cut:
            self.items.append([kind, kept, cut])

    def add(self, kind: str, text: str) -> None:
        if kind in ("html", "svg"):
            self.markup += len(text)
        self.items.append([kind, text, 0])

    def result(self) -> tuple:
        return tuple((kind, text, cut) for kind, text, cut in self.items)


class Stream(io.TextIOBase):
    """sys.stdout or sys.stderr of a running cell."""

    def __init__(self, outputs: Outputs, kind: str):
        super().__init__()
        self.outputs, self.kind = outputs, kind

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.outputs.stream(self.kind, str(text))
        return len(text)


# The worker's namespaces, one per (build, page): per process by nature, like the widgets' entries.
_PAGES: dict[tuple, dict] = {}


def run_cell(
    root: Path, package: str, page: str, index: int, code: str, first_line: int, tags: tuple, build: str
) -> tuple:
    """Return what a cell shows (see the module's docstring), or raise CellError at its line in the page."""
    key = (build, page)
    if index == 0 or key not in _PAGES:
        _PAGES.clear()  # one page's namespace at a time: the last page's objects go
        _PAGES[key] = {"__name__": "__main__", "__builtins__": builtins}
    namespace = _PAGES[key]
    outputs = Outputs()
    figures = Figures(outputs, key, first_line, code, fresh=index == 0)
    namespace.update(display=lambda *values: _display(values, outputs, figures, first_line), input=_no_input)
    filename = str(root / page)
    with course_kernels(root, package, build), _captured(outputs), figures.drawing():
        try:
            _execute(code, first_line, filename, namespace, outputs, figures)
        except CellError:
            raise
        except BaseException as err:  # noqa: BLE001 - the author's (even SystemExit): the cell's own error
            if "raises-exception" not in tags or isinstance(err, (SystemExit, KeyboardInterrupt, _Refused)):
                raise _cell_error(err, filename, first_line, first_line + code.count("\n")) from None
            outputs.add("error", _traceback_text(err, filename, page))
        figures.collect()
    _check_addresses(outputs, first_line)
    if outputs.markup > MAX_MARKUP:
        raise CellError(
            f"code cell shows {outputs.markup:,} characters of HTML and figures, more than the {MAX_MARKUP:,} a page "
            "may hold",
            first_line,
            "plot fewer points, or show a summary of the data",
        )
    return outputs.result()


def _check_addresses(outputs: Outputs, line: int) -> None:
    """Refuse output holding a memory address (`<Thing object at 0x7f…>`): another text in every build."""
    for kind, text, _ in outputs.items:
        address = ADDRESS.search(text) if kind != "svg" else None
        if address:
            raise CellError(
                f"code cell shows text holding a memory address ({address.group(0)[4:-1]}), which changes on every "
                "build",
                line,
                ADDRESS_HINT,
            )


class _Refused(Exception):
    """What a cell may not do at build time (read input)."""


def _no_input(*args, **kwargs):
    raise _Refused("input(), which cannot be answered when the course is built")


@contextlib.contextmanager
def _captured(outputs: Outputs):
    with contextlib.redirect_stdout(Stream(outputs, "stdout")), contextlib.redirect_stderr(Stream(outputs, "stderr")):
        yield


def _execute(code: str, first_line: int, filename: str, namespace: dict, outputs: Outputs, figures) -> None:
    """Run the cell's statements; show the last one's value unless it is no expression or ends with `;`."""
    tree = ast.parse(code, filename)
    ast.increment_lineno(tree, first_line - 1)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    shown = last is not None and not _ends_with_semicolon(code, last, first_line)
    body = ast.Module(body=tree.body[:-1] if shown else tree.body, type_ignores=[])
    exec(compile(body, filename, "exec"), namespace)
    if shown:
        assert last is not None
        value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
        if value is not None:
            _show(value, outputs, figures, last.lineno)


def _ends_with_semicolon(code: str, last: ast.Expr, first_line: int) -> bool:
    """Return True when the text after the last expression starts with `;` (notebooks hide its value then)."""
    lines = code.splitlines()
    row = (last.end_lineno or last.lineno) - first_line
    rest = "\n".join([lines[row][last.end_col_offset or 0 :], *lines[row + 1 :]])
    return rest.lstrip().startswith(";")


def _display(values: tuple, outputs: Outputs, figures, line: int) -> None:
    """`display(…)`: show each value now, as the cell's last expression would be shown."""
    for value in values:
        _show(value, outputs, figures, line)


def _show(value, outputs: Outputs, figures, line: int) -> None:
    """Add a value's HTML (`_repr_html_`), figure or repr to the outputs, refusing what changes between builds."""
    if figures.is_figure(value):
        figures.add(value)
        return
    if figures.drawn_by(value):  # `plt.plot(…)` as the last line: the figure shows it, not the lines' reprs
        return
    _check_ordered(value, line)
    html = getattr(value, "_repr_html_", None)
    text = html() if callable(html) and not isinstance(value, type) else None
    if isinstance(text, str):
        outputs.add("html", text)
    else:
        outputs.add("text", shown_repr(value))


def shown_repr(value) -> str:
    """Return a value's repr, floats to FIGURES significant digits (0.1 + 0.2 shows 0.3), in lists and tuples too."""
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


def _check_ordered(value, line: int, depth: int = 0) -> None:
    """Refuse a set of strings (or bytes, or objects): its order follows the hash seed, so each build shows another."""
    if isinstance(value, (set, frozenset)) and any(not isinstance(item, (int, float, bool)) for item in value):
        raise CellError(
            f"code cell shows a {type(value).__name__} of text or objects, whose order changes from build to build",
            line,
            "show sorted(…) instead",
        )
    if depth < 3 and type(value) in (list, tuple, dict):
        for item in value.values() if isinstance(value, dict) else value:
            _check_ordered(item, line, depth + 1)


def _cell_error(err: BaseException, filename: str, first_line: int, last_line: int) -> CellError:
    """Return the build's error for a cell that raised: its last traceback line, at the cell's line it came from
    (and the page's line it was raised at, when that is in an earlier cell's function)."""
    lines = _page_lines(err, filename)
    line = next((n for n in reversed(lines) if first_line <= n <= last_line), first_line)
    inner = f" (at line {lines[-1]})" if lines and lines[-1] != line else ""
    if isinstance(err, SystemExit):
        return CellError(
            "code cell calls sys.exit(), which would end the course's Python",
            line,
            "end the cell's code another way (an if, or raise an exception and tag the cell raises-exception)",
        )
    if isinstance(err, _Refused):
        return CellError(f"code cell calls {err}", line, "set the value in the code instead")
    if isinstance(err, MemoryError):
        return CellError(
            f"code cell ran out of memory (MemoryError){inner}",
            line,
            "each call of the course's Python may use `limits: {memory_mb: …}` of course.yaml (default 4096)",
        )
    last = traceback.format_exception_only(type(err), err)[-1].strip()
    return CellError(
        f"code cell raised {last}{inner}",
        line,
        "fix the code, or tag the cell `:tags: [raises-exception]` to show the error as its output",
    )


def _page_lines(err: BaseException, filename: str) -> list[int]:
    """Return the page's lines the exception passed through, outermost first."""
    if isinstance(err, SyntaxError) and err.filename == filename:
        return [err.lineno or 0]
    return [frame.lineno or 0 for frame in traceback.extract_tb(err.__traceback__) if frame.filename == filename]


def _traceback_text(err: BaseException, filename: str, page: str) -> str:
    """Return the traceback shown under a cell tagged raises-exception: the page's frames only, the page's path
    relative (the same on any machine)."""
    lines = ["Traceback (most recent call last):\n"]
    for frame in traceback.extract_tb(err.__traceback__):
        if frame.filename == filename:
            lines.append(f'  File "{page}", line {frame.lineno}, in {frame.name}\n')
            if frame.line:
                lines.append(f"    {frame.line.strip()}\n")
    lines.extend(traceback.format_exception_only(type(err), err))
    return "".join(lines)
