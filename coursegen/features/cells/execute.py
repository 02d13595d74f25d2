"""Running a page's code cells in the author-code worker, as a notebook kernel would, and keeping what they show.

Each cell is one call (`run_cell`), so the time limit is per cell; a cell that never ends is
found by the page's line the watchdog reports. The cells of one page share a namespace, kept in
the worker for the build and the page and started afresh by the page's first cell. The code is
compiled with the Markdown file's path and line numbers (the cell's lines shifted to where they
stand in the page), so every traceback, and the watchdog's report of a cell out of time, names
the page's own line.

What a cell shows is a list of `(kind, text, characters cut)` outputs in the order they came, made
by live.py (the same code the page's live runs use): "stdout" and
"stderr" (printed text, cut after MAX_STREAM characters with a count of what was cut), "text"
(a value's repr), "html" (a value's `_repr_html_`), "svg" (a matplotlib figure) and "error" (the
traceback of a cell tagged raises-exception). Anything that would read differently in the next
build (a memory address, a set of strings) is refused with CellError.
"""

from __future__ import annotations

import builtins
import traceback
from pathlib import Path

from coursegen.course_code import ADDRESS
from coursegen.extras import missing_module_hint
from coursegen.features.cells.boundary import OutsideCourse, inside_course
from coursegen.features.cells.figures import Figures, TooManyFigures
from coursegen.features.cells.live import Outputs, captured, execute, shown_print, shown_value
from coursegen.features.widgets.baking import course_kernels

MAX_MARKUP = 2_000_000  # characters of HTML and SVG one cell may show
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
    figures = Figures(outputs, key, index + 1, code, fresh=index == 0)

    def show(value, line: int) -> None:
        _check_ordered(value, line)
        shown_value(value, outputs, figures)

    namespace.update(display=lambda *values: _display(values, show, first_line), input=_no_input, print=shown_print)
    filename = str(root / page)
    folder = (root / page).parent  # a cell runs in its page's folder, as a notebook does
    with course_kernels(root, package, build), captured(outputs), figures.drawing(), inside_course(root, folder):
        try:
            execute(code, first_line, filename, namespace, show)
            figures.collect()
        except CellError:
            raise
        except TooManyFigures as err:
            raise CellError(str(err), first_line, "close each figure you do not show with plt.close(fig)") from None
        except BaseException as err:  # noqa: BLE001 - the author's (even SystemExit): the cell's own error
            if "raises-exception" not in tags or isinstance(
                err, (SystemExit, KeyboardInterrupt, _Refused, OutsideCourse)
            ):
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


def _display(values: tuple, show, line: int) -> None:
    """`display(…)`: show each value now, as the cell's last value would be."""
    for value in values:
        show(value, line)


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
    if isinstance(err, OutsideCourse):
        return CellError(
            f"code cell opens {err}{inner}",
            line,
            "open the course's own files, by a path relative to the page's folder (where its cells run)",
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
        missing_module_hint(err)
        or "fix the code, or tag the cell `:tags: [raises-exception]` to show the error as its output",
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
