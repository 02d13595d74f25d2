"""Load stage: find and read every lesson and review source."""
from __future__ import annotations

import re
from pathlib import Path

from .config import read_text
from .errors import Problems
from .model import Source

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
    for folder, kind in SOURCE_DIRS.items():
        for file in sorted((root / folder).glob("*.md")):
            shown = file.relative_to(root).as_posix()
            if not file.is_file():
                problems.error(shown, 1, f"'{shown}' is a folder, not a Markdown file",
                               "rename the folder so its name does not end in .md")
                continue
            text = read(file, shown, problems)
            if text is not None:  # a byte-order mark is no part of the text (editors on Windows add one)
                text = text.removeprefix("\ufeff").replace("\r\n", "\n")
                sources.append(Source(shown, text, kind, slug_of(file)))
    return sources
