"""`coursegen init [DIR]`: a new course that builds and passes `check --strict` straight away.

The starter lives in coursegen/skeletons/course/: course.yaml, one lesson, one review, one widget
backed by a module of the course's own Python package, a .gitignore and a GitHub Pages workflow
that installs this very version of coursegen. Nothing existing is ever overwritten.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

from coursegen import __version__
from coursegen.errors import ContentError, Problem
from coursegen.stages.config import CONFIG_NAME

STARTER = Path(__file__).with_name("skeletons") / "course"
RENAMED = {"gitignore": ".gitignore", "pages.yml": ".github/workflows/pages.yml"}  # dot files: kept out of package data
FILLED_IN = ("course.yaml", "lessons/01-welcome.md", "pages.yml")  # string.Template: $title, $version


def starter_files() -> dict[str, Path]:
    """Return {path in the new course: starter file}."""
    files = sorted(p for p in STARTER.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return {RENAMED.get(rel, rel): file for file in files for rel in [file.relative_to(STARTER).as_posix()]}


def title_from(folder: Path) -> str:
    """Return a course title made from a folder name: 'my-course' → 'My course'."""
    words = folder.name.replace("_", " ").replace("-", " ").split()
    return " ".join(words).capitalize() if words else "My course"


def init_course(folder: Path, title: str = "") -> list[str]:
    """Write a new course into `folder`; return the paths written. Raise ContentError if one exists."""
    title = title.strip() or title_from(folder.resolve())
    files = starter_files()
    if (folder / CONFIG_NAME).exists():
        raise ContentError(
            [
                Problem(
                    str(folder / CONFIG_NAME),
                    1,
                    0,
                    "a course already exists here",
                    "run init in an empty folder, or give a new folder: coursegen init my-course",
                )
            ]
        )
    taken = [path for path in files if (folder / path).exists()]
    if taken:
        raise ContentError(
            [
                Problem(
                    str(folder / taken[0]),
                    1,
                    0,
                    f"init would overwrite {len(taken)} existing file(s): " + ", ".join(taken),
                    "run init in an empty folder",
                )
            ]
        )
    values = {"title": title, "title_yaml": json.dumps(title, ensure_ascii=False), "version": __version__}
    for path, source in files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.relative_to(STARTER).as_posix() in FILLED_IN:
            target.write_text(string.Template(source.read_text(encoding="utf-8")).substitute(values), encoding="utf-8")
        else:
            target.write_bytes(source.read_bytes())
    return list(files)
