"""Load stage: find and read every lesson and review source (and course.yaml), through the build's memo.

Texts are kept in the memo with their file's stamp and read again only when the stamp changes,
or, when the watcher named every change (`Changes.known`), only when it named the file; the
course is listed again only when a source folder itself changed. Sources that were not read
again are the same objects as in the last build, so later stages tell what changed by identity.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from coursegen.errors import Problems
from coursegen.memo import Changes, Memo
from coursegen.model import Source
from coursegen.paths import COURSE_INPUTS, check_changed_files, check_course_files
from coursegen.stages.config import CONFIG_NAME, load_config, read_text

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
        problems.error(
            shown, 1, f"'{shown}' is a folder, not a Markdown file", "rename the folder so its name does not end in .md"
        )
        return None
    text = read(file, shown, problems)
    if text is None:
        return None
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")  # a byte-order mark is no part of the text
    return Source(shown, text, source_kind(shown) or "", slug_of(file))  # a source's path names its kind


CALC_USE = re.compile(r"\{calc\}`")
WIDGET_USE = re.compile(r"^\s*(`{3,}|~{3,})\s*widget\b", re.M)
EXERCISE_USE = re.compile(r"^\s*:{4,}\s*exercise\b", re.M)  # its reference runs in the course's Python


def author_code_uses(text: str) -> tuple[bool, bool]:
    """Return whether a source has a `{calc}` role, and whether it has a widget fence or an exercise:
    parsing either runs the course's Python (substring tests first: the regexes cost more)."""
    return (
        "{calc}" in text and bool(CALC_USE.search(text)),
        ("widget" in text and bool(WIDGET_USE.search(text)))
        or ("exercise" in text and bool(EXERCISE_USE.search(text))),
    )


def check_files(root: Path, problems: Problems, changes: Changes, names=COURSE_INPUTS) -> None:
    """`paths.check_course_files`, or for the changed paths alone when the watcher named every change."""
    if changes.known:
        check_changed_files(root, changes.unseen, problems, names)
    else:
        check_course_files(root, problems, names)


def kept_reader(memo: Memo, changes: Changes):
    """Return a `read(file, shown, problems)` that answers like `config.read_text`, keeping each text in
    the memo ("text": file → (stamp, text)) and reading it again only when its file changed on disk
    (or, when the watcher names every change, when it named this file)."""

    def read(file: Path, shown: str, problems: Problems) -> str | None:
        kept = memo.peek("text", file)
        if kept is not None and changes.known:
            return kept[1]
        try:
            stat = file.stat()
        except OSError:  # gone since it was listed: read_text reports it
            return read_text(file, shown, problems)
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        text = read_text(file, shown, problems)
        if text is not None:  # unreadable text is read (and reported) again on every build
            memo.put("text", file, (stamp, text))
        return text

    return read


def load_course_config(root: Path, problems: Problems, read, memo: Memo):
    """Return `config.load_config`'s answer, validated again only when course.yaml's text changed.

    Records course.yaml's text ("config text"), which the parse key holds."""
    file = root / CONFIG_NAME
    text = read(file, CONFIG_NAME, Problems()) if file.is_file() else None
    memo.records["config text"] = text if file.is_file() else ""
    kept = memo.records.get("config")
    if kept and text is not None and kept[0] is text:  # same file read: same object
        return kept[1]
    before = len(problems.items)
    config = load_config(root, problems, read=read)
    memo.records["config"] = (text, config) if config is not None and len(problems.items) == before else ()
    return config


def load_course_sources(root: Path, problems: Problems, read, memo: Memo, changes: Changes) -> list[Source]:
    """Return `load_sources`' answer, listing and reading again only what the watcher named.

    Records, for the later stages: "sources" (path → Source, sorted by path), "slug by path" (the
    same dict object while the set of sources stays), "unparsed" (paths read since a parse last
    looked at them), and per source its `author_code_uses` ("source uses"). Any problem while
    reading makes the next build look at everything again (and report the problem again)."""
    before, old = len(problems.items), memo.records.get("sources", {})
    unseen = changes.unseen if changes.known else None
    if unseen is None or any(path in SOURCE_DIRS for path in unseen):  # a folder itself came or went
        listed = {s.path: s for s in load_sources(root, problems, read=read)}
        unseen = None  # every source is a new object
    else:
        listed = dict(old)
        for path in sorted(p for p in unseen if source_kind(p)):
            listed.pop(path, None)
            if os.path.lexists(root / path):
                source = load_source(root, path, problems, read)
                if source is not None:
                    listed[path] = source
        if listed.keys() != old.keys():
            listed = dict(sorted(listed.items()))
    fresh = {
        path for path in (listed if unseen is None else unseen) if path in listed and old.get(path) is not listed[path]
    }
    memo.records["unparsed"] = memo.records.get("unparsed", set()) | fresh  # kept until a parse looked at them
    for path in old.keys() - listed.keys():
        memo.pop("source uses", path)
    for path in fresh:
        memo.put("source uses", path, author_code_uses(listed[path].text))
    if listed.keys() != old.keys() or not memo.records.get("slug by path"):
        memo.records["slug by path"] = {path: source.slug for path, source in listed.items()}
    memo.records["sources"] = listed
    changes.looked(len(problems.items) == before)
    return list(listed.values())


def uses_author_code(memo: Memo) -> bool:
    """Return True when a source of the last load has a `{calc}` role, a widget fence or an exercise."""
    return any(calc or widget for calc, widget in memo.table("source uses").values())


def slug_by_path(memo: Memo) -> dict[str, str]:
    """Return {source path: slug} of the last load (the same object while its keys stay)."""
    return memo.records["slug by path"]
