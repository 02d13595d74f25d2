"""The load stage's second reader: a Jupyter notebook (`lessons/NN-slug.ipynb`) as the text of a lesson.

A notebook becomes the same text a Markdown lesson is, so nothing after the load stage knows which
kind of file a page came from (MyST-NB does the same): front matter (from a first raw cell holding
`---` YAML, jupytext's convention, or from the notebook metadata's `coursegen:` mapping), each
markdown cell as Markdown, each code cell as a ```` ```{code-cell} python ```` fence carrying its
`tags`. Stored outputs and execution counts are ignored (the build makes its own); other raw cells
are skipped with a warning. `CellLines` maps every line of that text back to its cell, so a problem
found later at line 40 of the text is reported as `cell 7, line 2`.

The file is read with the standard library's `json` (for the line of a syntax error), checked for
nbformat 4 and for size before `nbformat` validates it: a notebook of 10,000 cells or 50 MB of stored
output is refused at once, in bounded time, rather than validated and converted.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass

from coursegen.errors import Problems

NOTEBOOK_SUFFIX = ".ipynb"
MAX_CELLS = 1000  # a lesson longer than this is several lessons
MAX_OUTPUT_CHARS = 10_000_000  # stored output one cell may hold (ignored, but read and kept while serving)
SIMPLE_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
ATTACHMENT = re.compile(r"\]\(\s*<?attachment:([^)\s>]*)")
ATTACHMENT_USE = re.compile(r"!?\[([^\]]*)\]\(\s*<?attachment:[^)]*\)")
METADATA = "notebook metadata 'coursegen'"
CLEAR_HINT = "clear the outputs (Jupyter: Edit → Clear Outputs of All Cells) and save: the build makes its own"


@dataclass(frozen=True)
class CellLines:
    """Where each line of a notebook's text comes from: runs of lines, each from one cell.

    `starts[i]` is the first text line (1-based) of run i; `cells[i]` its cell (1-based; 0 for the
    notebook metadata); `firsts[i]` the line inside the cell its first line is (0: lines that stand
    for the cell as a whole, such as the fence around a code cell)."""

    starts: tuple[int, ...]
    cells: tuple[int, ...]
    firsts: tuple[int, ...]

    def place(self, line: int) -> str:
        """Return where text line `line` is in the notebook, e.g. 'cell 7, line 2'."""
        run = max(bisect.bisect_right(self.starts, line) - 1, 0)
        cell, first = self.cells[run], self.firsts[run]
        if cell == 0:
            return METADATA
        return f"cell {cell}, line {first + line - self.starts[run]}" if first else f"cell {cell}"


class _Text:
    """The lesson text being written, with the cell and cell line of each of its lines."""

    def __init__(self):
        self.lines: list[str] = []
        self.places: list[tuple[int, int]] = []

    def add(self, lines, cell: int, first: int = 0) -> None:
        for offset, line in enumerate(lines):
            self.lines.append(line)
            self.places.append((cell, first + offset if first else 0))

    def cell_lines(self) -> CellLines:
        """Return the places of the lines so far, as runs."""
        starts: list[int] = []
        cells: list[int] = []
        firsts: list[int] = []
        for number, (cell, inside) in enumerate(self.places, 1):
            if (
                cells
                and cells[-1] == cell
                and (
                    (inside == 0 and firsts[-1] == 0)
                    or (inside and firsts[-1] and inside - firsts[-1] == number - starts[-1])
                )
            ):
                continue  # the run goes on
            starts.append(number)
            cells.append(cell)
            firsts.append(inside)
        return CellLines(tuple(starts), tuple(cells), tuple(firsts))


def read_notebook(shown: str, raw: str, problems: Problems) -> tuple[str, CellLines] | None:
    """Return a notebook's lesson text and its CellLines, or None after reporting why it cannot be one."""
    data = _notebook_data(shown, raw, problems)
    if data is None:
        return None
    text = _Text()
    cells = data["cells"]
    language = _language(data)
    if language not in ("", "python") and any(c["cell_type"] == "code" and _source(c).strip() for c in cells):
        problems.error(
            shown,
            1,
            f"this notebook's kernel runs {language}, and a lesson's code cells run in Python",
            "make it a Python notebook (Kernel → Change Kernel), or turn its code cells into markdown",
            where="notebook metadata 'kernelspec'",
        )
        return None
    front = _front_matter(shown, data, problems)
    if front is not None:
        text.add(["---", *front, "---", ""], 0)
    first = 0
    if cells and cells[0]["cell_type"] == "raw" and _source(cells[0]).startswith("---"):
        if front is not None:
            problems.error(
                shown, 1, "front matter is given twice: in cell 1 and in the notebook metadata", where="cell 1"
            )
        text.add(_source(cells[0]).split("\n"), 1, 1)
        text.add([""], 1)
        first = 1
    for number, cell in enumerate(cells[first:], first + 1):
        _add_cell(shown, number, cell, text, problems)
    return "\n".join(text.lines).rstrip("\n") + "\n", text.cell_lines()


def _language(data: dict) -> str:
    """Return the language the notebook's kernel runs, lowercase ("" when the metadata does not say)."""
    metadata = data.get("metadata") or {}
    named = (metadata.get("kernelspec") or {}).get("language") or (metadata.get("language_info") or {}).get("name")
    return str(named or "").lower()


def _notebook_data(shown: str, raw: str, problems: Problems) -> dict | None:
    """Return the notebook's JSON when it is a valid nbformat 4 notebook of a size the build reads."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        problems.error(
            shown,
            err.lineno,
            f"not a Jupyter notebook: invalid JSON: {err.msg} (column {err.colno})",
            "a .ipynb file is the JSON Jupyter saves; open it in Jupyter, or fix it at this line",
        )
        return None
    version = data.get("nbformat") if isinstance(data, dict) else None
    if version != 4:
        found = "it has no 'nbformat' field" if version is None else f"it is nbformat {version!r}"
        problems.error(
            shown,
            1,
            f"not a notebook coursegen reads: {found}, and lessons are nbformat 4",
            f"convert it: jupyter nbconvert --to notebook --nbformat 4 --inplace {shown}",
        )
        return None
    cells = data.get("cells")
    if isinstance(cells, list) and len(cells) > MAX_CELLS:
        problems.error(
            shown,
            1,
            f"this notebook has {len(cells):,} cells; a lesson holds at most {MAX_CELLS:,}",
            "split it into several lessons",
            where=f"cell {MAX_CELLS + 1}",
        )
        return None
    if isinstance(cells, list) and not _outputs_fit(shown, cells, problems):
        return None
    return data if _valid(shown, data, problems) else None


def _outputs_fit(shown: str, cells: list, problems: Problems) -> bool:
    """Report each cell storing more output than MAX_OUTPUT_CHARS; return whether none does."""
    fit = True
    for number, cell in enumerate(cells, 1):
        size = _chars(cell.get("outputs", [])) if isinstance(cell, dict) else 0
        if size > MAX_OUTPUT_CHARS:
            problems.error(
                shown,
                1,
                f"this cell stores {size / 1e6:.1f} million characters of output; "
                f"a lesson's cells may store at most {MAX_OUTPUT_CHARS / 1e6:.0f} million",
                CLEAR_HINT,
                where=f"cell {number}",
            )
            fit = False
    return fit


def _chars(value) -> int:
    """Return how many characters the strings in a JSON value hold (linear, no copy)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(map(_chars, value))
    if isinstance(value, dict):
        return sum(map(_chars, value.values()))
    return 0


def _valid(shown: str, data: dict, problems: Problems) -> bool:
    """Validate the notebook against nbformat's schema, outputs aside (the build ignores them)."""
    import nbformat  # here: a course without notebooks never imports it

    cells = data.get("cells")
    bare = dict(data, cells=[_without_outputs(c) for c in cells]) if isinstance(cells, list) else data
    try:
        nbformat.validate(nbformat.from_dict(bare))
    except nbformat.ValidationError as err:
        path = list(err.absolute_path) if hasattr(err, "absolute_path") else []
        where = f"cell {path[1] + 1}" if len(path) > 1 and path[0] == "cells" and isinstance(path[1], int) else ""
        field = ".".join(str(p) for p in path[2:] if not isinstance(p, int)) if where else ".".join(map(str, path))
        problems.error(
            shown,
            1,
            f"not a valid nbformat 4 notebook: {err.message}" + (f" (at '{field}')" if field else ""),
            "open and save it in Jupyter, which repairs most of these",
            where=where,
        )
        return False
    return True


def _without_outputs(cell):
    return dict(cell, outputs=[]) if isinstance(cell, dict) and "outputs" in cell else cell


def _source(cell: dict) -> str:
    """Return a cell's source as one string (nbformat allows a list of lines too)."""
    source = cell.get("source", "")
    return ("".join(source) if isinstance(source, list) else source).replace("\r\n", "\n")  # saved on Windows


def _front_matter(shown: str, data: dict, problems: Problems) -> list[str] | None:
    """Return the YAML lines of the metadata's `coursegen:` mapping, or None when it has none."""
    given = data.get("metadata", {}).get("coursegen")
    if given is None:
        return None
    if not isinstance(given, dict):
        problems.error(
            shown,
            1,
            f"'coursegen' must be a mapping of front-matter keys, found {type(given).__name__}",
            'e.g. "coursegen": {"title": "Newton\'s method"}',
            where=METADATA,
        )
        return []
    # JSON is YAML: each key and value written as JSON reads back as the value the notebook holds.
    return [
        f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}"
        for key, value in given.items()
    ]


def _add_cell(shown: str, number: int, cell: dict, text: _Text, problems: Problems) -> None:
    """Add one cell to the text: markdown as it is, code as a code-cell fence; warn about a raw cell."""
    source = _source(cell)
    kind = cell["cell_type"]
    if kind == "raw":
        problems.warning(
            shown,
            len(text.lines) + 1,
            "raw cell skipped: a lesson shows markdown and code cells",
            "make it a markdown cell to show it, or delete it (a first raw cell may hold the front matter)",
            where=f"cell {number}",
        )
        return
    if not source.strip():
        return
    lines = source.rstrip("\n").split("\n")
    if kind == "markdown":
        for offset, line in enumerate(lines):
            for found in ATTACHMENT.finditer(line):
                problems.error(
                    shown,
                    len(text.lines) + offset + 1,
                    f"cell attachment '{found.group(1)}' is not published",
                    f"save the image as a file beside {shown} and link it by name, e.g. ![plot]({found.group(1)})",
                )
        lines = [ATTACHMENT_USE.sub(r"\1", line) for line in lines]  # its alt text: no follow-on "not found"
        text.add(lines, number, 1)
    else:
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", source)), default=0))
        tags = [str(tag) for tag in cell.get("metadata", {}).get("tags", [])]
        options = [f":tags: [{', '.join(t if SIMPLE_TAG.match(t) else json.dumps(t) for t in tags)}]"] if tags else []
        text.add([f"{fence}{{code-cell}} python", *options], number)
        text.add(lines, number, 1)
        text.add([fence], number)
    text.add([""], number)
