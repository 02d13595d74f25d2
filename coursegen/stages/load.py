"""Load stage: find and read every lesson and review source."""
from __future__ import annotations

import re
from pathlib import Path

from coursegen.stages.config import read_text
from coursegen.errors import Problems
from coursegen.model import Source

SOURCE_DIRS = {"lessons": "lesson", "reviews": "review"}
NUMBER_PREFIX = re.compile(r"^\d+[-_]")


def slug_of(file: Path) -> str:
    """Return the unit slug of a source file: its name without number prefix or suffix."""
    return NUMBER_PREFIX.sub("", file.stem)


def load_sources(root: Path, problems: Problems, read=read_text) -> list[Source]:
    """Return every readable `.md` source under lessons/ and reviews/, sorted by path.

    `read` is `config.read_text` or one that behaves the same, e.g. a caching reader.
    """
    sources = []
    for folder in SOURCE_DIRS:
        for file in sorted((root / folder).glob("*.md")):
            source = load_source(root, file.relative_to(root).as_posix(), problems, read)
            if source is not None:
                sources.append(source)
    return sources


def source_kind(shown: str) -> str | None:
    """Return "lesson" or "review" for a course-relative path that names a source, else None."""
    folder, _, name = shown.partition("/")
    return SOURCE_DIRS.get(folder) if name.endswith(".md") and "/" not in name else None


def load_source(root: Path, shown: str, problems: Problems, read=read_text) -> Source | None:
    """Return the Source at course-relative `shown` (a source path, see source_kind), or None with a
    problem when it cannot be read."""
    file = root / shown
    if not file.is_file():
        problems.error(shown, 1, f"'{shown}' is a folder, not a Markdown file",
                       "rename the folder so its name does not end in .md")
        return None
    text = read(file, shown, problems)
    if text is None:
        return None
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")  # a byte-order mark is no part of the text
    return Source(shown, text, source_kind(shown), slug_of(file))
