"""Load stage: find and read every lesson and review source.

`load_sources` lists and reads them all; coursegen.incremental's `load_course_sources` calls it
and `load_source` to read again only what changed since the last build (through a reader that
keeps each text: `kept_reader`), so sources not read again are the same objects as last time.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from coursegen.errors import Problems
from coursegen.model import Source
from coursegen.paths import COURSE_INPUTS, check_changed_files, check_course_files
from coursegen.stages.config import read_text
from coursegen.stages.notebook import NOTEBOOK_SUFFIX, read_notebook

if TYPE_CHECKING:  # incremental builds on this module
    from coursegen.incremental import Changes

SOURCE_DIRS = {"lessons": "lesson", "reviews": "review"}
SOURCE_SUFFIXES = (".md", NOTEBOOK_SUFFIX)  # Markdown, and Jupyter notebooks read into Markdown (stages.notebook)
NUMBER_PREFIX = re.compile(r"^\d+[-_]")


def slug_of(file: Path) -> str:
    """Return the unit slug of a source file: its name without number prefix or suffix."""
    return NUMBER_PREFIX.sub("", file.stem)


def load_sources(root: Path, problems: Problems, read=read_text, convert=read_notebook) -> list[Source]:
    """Return every readable `.md` and `.ipynb` source under lessons/ and reviews/, sorted by path.

    `read` is `config.read_text` or one that behaves the same, e.g. a caching reader; `convert` is
    `notebook.read_notebook` or one that answers the same (incremental.kept_notebooks).
    """
    sources = []
    for folder in SOURCE_DIRS:
        if (root / folder).exists() and not (root / folder).is_dir():
            problems.error(
                folder, 1, f"'{folder}' is a file, not a folder", f"make {folder}/ a folder of .md and .ipynb files"
            )
        for file in sorted(f for f in (root / folder).glob("*") if f.suffix in SOURCE_SUFFIXES):
            source = load_source(root, file.relative_to(root).as_posix(), problems, read, convert)
            if source is not None:
                sources.append(source)
    return sources


def source_kind(shown: str) -> str | None:
    """Return "lesson" or "review" for a course-relative path that names a source, else None."""
    folder, _, name = shown.partition("/")
    return SOURCE_DIRS.get(folder) if name.endswith(SOURCE_SUFFIXES) and "/" not in name else None


def load_source(root: Path, shown: str, problems: Problems, read=read_text, convert=read_notebook) -> Source | None:
    """Return the Source at course-relative `shown` (a source path, see source_kind), or None with a
    problem when it cannot be read."""
    file = root / shown
    if not file.is_file():
        noun, suffix = (
            ("a notebook", NOTEBOOK_SUFFIX) if shown.endswith(NOTEBOOK_SUFFIX) else ("a Markdown file", ".md")
        )
        problems.error(
            shown, 1, f"'{shown}' is a folder, not {noun}", f"rename the folder so its name does not end in {suffix}"
        )
        return None
    text = read(file, shown, problems)
    if text is None:
        return None
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")  # a byte-order mark is no part of the text
    kind = source_kind(shown) or ""  # a source's path names its kind
    if file.suffix == NOTEBOOK_SUFFIX:
        read_in = convert(shown, text, problems)
        return Source(shown, read_in[0], kind, slug_of(file), read_in[1]) if read_in else None
    return Source(shown, text, kind, slug_of(file))


CALC_USE = re.compile(r"\{calc\}`")
CELL_USE = re.compile(r"^\s*(`{3,}|~{3,})\s*\{code-cell\}", re.M)  # runs the course's Python, and imports its package
WIDGET_USE = re.compile(r"^\s*(`{3,}|~{3,})\s*widget\b", re.M)
EXERCISE_USE = re.compile(r"^\s*:{4,}\s*exercise\b", re.M)  # its reference runs in the course's Python


def author_code_uses(text: str) -> tuple[bool, bool]:
    """Return whether a source has a `{calc}` role, and whether it has a widget fence, an exercise or a code cell:
    parsing either runs the course's Python (substring tests first: the regexes cost more). A code cell
    counts with both: it imports the course's package, and its page carries the live worker's URL."""
    cells = "{code-cell}" in text and bool(CELL_USE.search(text))
    return (
        cells or ("{calc}" in text and bool(CALC_USE.search(text))),
        cells
        or ("widget" in text and bool(WIDGET_USE.search(text)))
        or ("exercise" in text and bool(EXERCISE_USE.search(text))),
    )


def check_files(root: Path, problems: Problems, changes: Changes, names=COURSE_INPUTS) -> None:
    """`paths.check_course_files`, or for the changed paths alone when the watcher named every change."""
    if changes.known:
        check_changed_files(root, changes.unseen, problems, names)
    else:
        check_course_files(root, problems, names)
