"""Reading a ```` ```{code-cell} python ```` fence as MyST-NB writes it: language, options, code, IPython habits.

Options come first in the fence, as `:tags: [hide-input]` lines or a `---` YAML block (jupytext
writes either); the code follows. `%matplotlib inline` and `%config …` lines are notebook habits
with nothing to do here: they become blank lines (so line numbers stay). Any other magic or
`!shell` line is a problem at its line, naming what to write instead. Only a cell that is not
valid Python is searched for magics, so `%` at the start of a line inside a string is left alone.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from coursegen.errors import choices_hint
from coursegen.schema import Schema, check
from coursegen.stages.parse import split_info
from coursegen.yamlio import LineDict, YamlError, load_yaml

FENCE = "{code-cell}"
LANGUAGES = ("python", "python3", "ipython3", "ipython")
TAGS = (
    "hide-input",
    "hide-output",
    "hide-cell",
    "remove-input",
    "remove-output",
    "remove-cell",
    "raises-exception",
    "skip-execution",
)
OPTIONS = Schema("the code cell's options", {"tags": list}, noun="option", located=False)
OPTION_LINE = re.compile(r"^:([\w-]+):(.*)$")
NO_OPS = ("%matplotlib", "%config")
MAGIC_HINTS = {
    "pip": "list the package in the course's requirements; a cell cannot install packages while the course is built",
    "conda": "list the package in the course's requirements; a cell cannot install packages while the course is built",
    "time": "time code outside the course: a timing differs in every build, so a page cannot bake one",
    "timeit": "time code outside the course: a timing differs in every build, so a page cannot bake one",
    "run": "put the code in the course's Python package and import it",
    "load_ext": "remove it: the build imports the course's package afresh whenever it changes",
    "autoreload": "remove it: the build imports the course's package afresh whenever it changes",
    "env": "set os.environ['NAME'] = … in Python",
    "capture": "tag the cell remove-output to run it without showing what it prints",
    "html": "write the HTML in the page's Markdown, or show an object with a _repr_html_ method",
    "markdown": "write it in the page's Markdown",
}
OTHER_HINT = "write plain Python; of IPython's magics only %matplotlib inline and %config are accepted (and ignored)"


@dataclass(frozen=True)
class CodeCell:
    """One code cell: its code as written (shown) and as run, where its code starts in the page, its tags."""

    code: str
    run: str
    line: int  # the page's line of the code's first line
    tags: tuple[str, ...]

    def tagged(self, tag: str) -> bool:
        return tag in self.tags


def is_cell(token) -> bool:
    """Return True for a ```` ```{code-cell} ```` fence."""
    return token.type == "fence" and split_info(token.info)[0] == FENCE


def read_cell(token, env: dict) -> CodeCell | None:
    """Return the fence's cell, or None after reporting its problems at their lines."""
    problems, path = env["problems"], env["path"]
    fence_line = token.map[0] + 1 if token.map else 1
    before = _error_count(problems)
    language = split_info(token.info)[1].split()
    if language and language[0] not in LANGUAGES:
        problems.error(
            path,
            fence_line,
            f"code cell language '{language[0]}' cannot run: the build runs Python cells only",
            "write ```{code-cell} python (python3 and ipython3, jupytext's names, work too)",
        )
        return None
    lines = token.content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    options, skip = _options(lines, fence_line + 1, env)
    if options is None:
        return None
    code_lines = lines[skip:]
    first = fence_line + 1 + skip
    code = "\n".join(code_lines) + "\n"
    run = _runnable(code_lines, first, env)
    if run is None or (before is not None and (_error_count(problems) or 0) > before):
        return None
    return CodeCell(code, run, first, tuple(options.get("tags", ())))


def _error_count(problems) -> int | None:
    """Return how many errors (not warnings: a cell with an unknown tag still runs) `problems` holds."""
    items = getattr(problems, "items", None)
    return None if items is None else sum(1 for item in items if item.severity == "error")


def _options(lines: list[str], first: int, env: dict) -> tuple[dict | None, int]:
    """Return (the checked options, how many lines they take) from the fence's first lines."""
    problems, path = env["problems"], env["path"]
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is None:
            problems.error(
                path, first, "the code cell's options block opened by '---' is never closed", "end it with ---"
            )
            return None, 0
        text, skip, at = "\n".join(lines[1:end]), end + 1, first + 1
    else:
        skip = 0
        while skip < len(lines) and OPTION_LINE.match(lines[skip]):
            skip += 1
        text = "\n".join(f"{m.group(1)}: {m.group(2).strip()}" for m in map(OPTION_LINE.match, lines[:skip]) if m)
        at = first
    if not text.strip():
        return {}, skip
    try:
        data = load_yaml(text, first_line=at)
    except YamlError as err:
        problems.error(path, err.line, err.message.replace("malformed YAML", "malformed code cell options"))
        return None, skip
    good = check(data, OPTIONS, path, problems, at)
    if not isinstance(data, dict) or len(good) < len(data):
        return None, skip
    return _checked_tags(good, at, env), skip


def _checked_tags(options: LineDict, at: int, env: dict) -> dict | None:
    """Return the cell's tags that coursegen acts on. Notebooks carry tags for other tools too (papermill's
    `parameters`, thebe's, a course's own), which Jupyter Book ignores: a warning, an error under --strict."""
    tags = options.get("tags", [])
    line = options.line_of("tags") if "tags" in options else at
    for tag in tags:
        if tag not in TAGS:
            env["problems"].warning(
                env["path"],
                line,
                f"code cell tag '{tag}' means nothing to coursegen and is ignored",
                choices_hint(str(tag), TAGS, "tags"),
            )
    return {"tags": tuple(tag for tag in tags if tag in TAGS)}


def _runnable(lines: list[str], first: int, env: dict) -> str | None:
    """Return the code to run (no-op magics blanked), or None after reporting magics and syntax errors."""
    code = "\n".join(lines) + "\n"
    try:
        ast.parse(code)
        return code
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        pass
    problems, path, ok = env["problems"], env["path"], True
    kept = []
    for row, text in enumerate(lines):
        word = text.strip()
        if word.startswith(NO_OPS):
            kept.append("")
            continue
        kept.append(text)
        if word.startswith(("%", "!")):
            problems.error(path, first + row, *_magic_problem(word))
            ok = False
    if not ok:
        return None
    code = "\n".join(kept) + "\n"
    try:
        ast.parse(code)
    except SyntaxError as err:
        problems.error(path, first + (err.lineno or 1) - 1, f"code cell is not valid Python: {err.msg}")
        return None
    except (ValueError, MemoryError, RecursionError):
        problems.error(path, first, "code cell cannot be read by Python's parser (nested too deeply, or a NUL byte)")
        return None
    return code


def _magic_problem(line: str) -> tuple[str, str]:
    """Return (message, hint) for a magic or shell line that cannot run at build time."""
    if line.startswith("!"):
        command = line[1:].split()[0] if line[1:].split() else ""
        if command == "pip":
            return f"code cell runs the shell command '{line[:40]}'", MAGIC_HINTS["pip"]
        return (
            f"code cell runs the shell command '{line[:40]}', which cannot run when the course is built",
            "do it in Python (pathlib, or the course's package), or before the build",
        )
    name = re.match(r"%%?(\w*)", line)
    word = name.group(1) if name else ""
    return (
        f"code cell uses the IPython magic '{line.split()[0]}', which the build does not run",
        MAGIC_HINTS.get(word, OTHER_HINT),
    )
