"""`coursegen init [DIR]`: a new course that builds and passes `check --strict` straight away.

The starter lives in coursegen/skeletons/course/: course.yaml, one lesson, one review, one widget
backed by a module of the course's own Python package, a .gitignore, a requirements.txt that pins
this very version of coursegen and the versions of what it needs installed with it (numpy, which
the course's Python imports, among them), and a GitHub Pages workflow that installs from it.

Nothing existing is ever overwritten, nothing is written outside DIR (not even through a symbolic
link inside it), and every check is made before the first file is written; should a write still
fail (a full disk), what init had made is removed again, so no half-made course is left.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import string
import unicodedata
import uuid
from importlib import metadata
from pathlib import Path

from coursegen import __version__
from coursegen.errors import ContentError, Problem
from coursegen.paths import inside_course
from coursegen.stages.config import CONFIG_NAME, PyodideConfig

STARTER = Path(__file__).with_name("skeletons") / "course"
RENAMED = {"gitignore": ".gitignore", "pages.yml": ".github/workflows/pages.yml"}  # dot files: kept out of package data
FILLED_IN = ("course.yaml", "lessons/01-welcome.md", "pages.yml", "requirements.txt")  # string.Template: $title, …
NOT_TEXT = ("Cc", "Cs")  # control characters; lone surrogates (bytes of a command line that were not UTF-8)
EMPTY_FOLDER_HINT = "run init in an empty folder, or give a new folder: coursegen init my-course"
# Characters that start inline Markdown (emphasis, code, links, HTML, entities, math, roles, tables):
# a title pasted into a lesson's prose gets each of them backslash-escaped, so it reads as typed.
MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>&!~$|{}])")


NO_PINS = "# (coursegen was not installed when init ran, so nothing more could be pinned here)"
REQUIREMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def installed_pins(distribution: str = "coursegen") -> list[str]:
    """Return `name==version` for every package `distribution` needs, and what those need in turn, as
    installed here (extras left out; a requirement not installed here is not needed here)."""
    found: dict[str, str] = {}
    waiting = [distribution]
    while waiting:
        for requirement in _requires(waiting.pop()):
            name = REQUIREMENT_NAME.match(requirement)
            if name is None or "extra ==" in requirement.partition(";")[2]:
                continue
            try:
                dist = metadata.distribution(name.group(0))
            except metadata.PackageNotFoundError:
                continue
            if dist.metadata["Name"] not in found:
                found[dist.metadata["Name"]] = dist.version
                waiting.append(dist.metadata["Name"])
    return [f"{name}=={version}" for name, version in sorted(found.items(), key=lambda item: item[0].lower())]


def _requires(distribution: str) -> list[str]:
    try:
        return metadata.requires(distribution) or []
    except metadata.PackageNotFoundError:
        return []


def starter_files() -> dict[str, Path]:
    """Return {path in the new course: starter file}."""
    files = sorted(p for p in STARTER.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return {RENAMED.get(rel, rel): file for file in files for rel in [file.relative_to(STARTER).as_posix()]}


def title_from(folder: Path) -> str:
    """Return a course title made from a folder name: 'my-course' → 'My course' (what is not text left out)."""
    name = "".join(c for c in folder.name if unicodedata.category(c) not in NOT_TEXT)
    words = name.replace("_", " ").replace("-", " ").split()
    return " ".join(words).capitalize() if words else "My course"


def one_line_title(title: str, folder: Path) -> str:
    """Return the title on one line (runs of spaces, tabs and newlines become one space), or raise
    ContentError for a character that no page or YAML file can show."""
    title = " ".join(title.split())
    odd = next((c for c in title if unicodedata.category(c) in NOT_TEXT), "")
    if odd:
        what = "the control character" if unicodedata.category(odd) == "Cc" else "a byte that is not UTF-8, read as"
        fail(
            str(folder),
            f"the title holds {what} U+{ord(odd):04X}",
            'give a title of printable text, e.g. --title "Tides for beginners"',
        )
    return title


def markdown_text(text: str) -> str:
    """Return `text` escaped for Markdown prose: shown as written, never read as markup or HTML."""
    return MARKDOWN_SPECIAL.sub(r"\\\1", text)


def fail(path: str, message: str, hint: str = "") -> None:
    """Raise ContentError with one problem about a path (no line: a folder, a link, or a file as a whole)."""
    raise ContentError([Problem(path, 0, 0, message, hint)])


def check_target(folder: Path, files: dict[str, Path]) -> None:
    """Raise ContentError unless every file can be written inside `folder` without replacing anything."""
    if folder.exists() and not folder.is_dir():
        fail(str(folder), f"'{folder}' is a file; init makes a course in a folder", EMPTY_FOLDER_HINT)
    if (folder / CONFIG_NAME).exists():
        fail(str(folder / CONFIG_NAME), "a course already exists here", EMPTY_FOLDER_HINT)
    for path in files:
        parts = path.split("/")
        for depth in range(1, len(parts) + 1):
            shown = "/".join(parts[:depth])
            place = folder / shown
            if os.path.islink(place) and inside_course(folder, shown) is None:
                fail(
                    str(place),
                    f"'{shown}' is a symbolic link to {os.path.realpath(place)}, outside the new course",
                    "init writes only inside its folder: remove the link, or run init in an empty folder",
                )
            if depth < len(parts) and os.path.lexists(place) and not place.is_dir():
                fail(
                    str(place),
                    f"'{shown}' is a file, but init makes a folder of that name",
                    "rename or remove the file, or give a new folder: coursegen init my-course",
                )
    taken = [path for path in files if os.path.lexists(folder / path)]
    if taken:
        fail(
            str(folder / taken[0]),
            f"init would overwrite {len(taken)} existing file(s): " + ", ".join(taken),
            "run init in an empty folder",
        )


def init_course(folder: Path, title: str = "") -> list[str]:
    """Write a new course into `folder`; return the paths written. Raise ContentError if one exists, if a
    file it writes is in the way or would land outside `folder`, or if the disk refuses a write."""
    title = one_line_title(title, folder) or title_from(folder.resolve())
    files = starter_files()
    check_target(folder, files)
    values = {
        "title": markdown_text(title),
        "title_yaml": json.dumps(title, ensure_ascii=False),
        "course_id": str(uuid.uuid4()),  # learners' progress is stored under it (docs/reviews.md)
        "version": __version__,
        "pins": "\n".join(installed_pins()) or NO_PINS,
        "pyodide_version": PyodideConfig().version,
    }
    made: list[Path] = []  # files and folders init created, in order: removed again if a write fails
    try:
        for path, source in files.items():
            target = folder / path
            for parent in reversed([target.parent, *target.parent.parents]):
                if not parent.exists():
                    parent.mkdir()
                    made.append(parent)
            if source.relative_to(STARTER).as_posix() in FILLED_IN:
                data = string.Template(source.read_text(encoding="utf-8")).substitute(values).encode("utf-8")
            else:
                data = source.read_bytes()
            with open(target, "xb") as out:  # "x": never replaces a file, even one made since the checks
                made.append(target)
                out.write(data)
    except OSError as err:
        for place in reversed(made):
            with contextlib.suppress(OSError):
                place.rmdir() if place.is_dir() else place.unlink()
        fail(
            str(err.filename or folder),
            f"cannot write the new course: {err.strerror or err}",
            "nothing was left behind; run init again once that is put right (a file in the way, permissions, space)",
        )
    return list(files)
