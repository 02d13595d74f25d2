"""`new lesson "Title"` / `new review "Title"`: the next numbered source from a skeleton, listed in course.yaml.

course.yaml is edited with ruamel.yaml's round-trip mode, so its comments, quoting and order
survive. A unit already listed under the new slug (say an `upcoming` one) is turned into a
written unit in place; otherwise the unit is appended. The skeletons live in
coursegen/skeletons/ and build cleanly as they are.
"""

from __future__ import annotations

import io
import json
import re
import string
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML

from coursegen.errors import ContentError, Problem, Problems
from coursegen.paths import check_course_files
from coursegen.stages.config import CONFIG_NAME, SLUG, load_config
from coursegen.stages.load import NUMBER_PREFIX, SOURCE_DIRS, SOURCE_SUFFIXES, slug_of
from coursegen.stages.notebook import NOTEBOOK_SUFFIX

SKELETONS = Path(__file__).with_name("skeletons")
FOLDERS = {kind: folder for folder, kind in SOURCE_DIRS.items()}  # "lesson" → "lessons"


@dataclass(frozen=True)
class NewUnit:
    """What `new` made: the source file (relative to the root) and the unit's number."""

    path: str
    number: int


def slugify(title: str) -> str:
    """Return a unit slug for a title: ASCII lowercase words joined by single hyphens."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")


def round_trip() -> YAML:
    """Return a ruamel.yaml loader/dumper that keeps comments, quotes and the usual indentation."""
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def fail(path: str, line: int, message: str, hint: str = ""):
    """Raise ContentError with one problem."""
    raise ContentError([Problem(path, line, 0, message, hint)])


def new_unit(root: Path, kind: str, title: str, slug: str = "", part: str = "", notebook: bool = False) -> NewUnit:
    """Create the source for a new unit (a Jupyter notebook when `notebook`) and list it in course.yaml; raise
    ContentError if it cannot."""
    problems = Problems()
    check_course_files(root, problems)  # it writes course.yaml and lessons/: never through a link to elsewhere
    problems.raise_if_errors()
    config = load_config(root, problems, require_units=False)  # a new course lists no units yet
    problems.raise_if_errors()
    slug = slug or slugify(title)
    if not title.strip():
        fail(CONFIG_NAME, 1, "the new unit needs a title", 'e.g. new lesson "First steps"')
    if not SLUG.match(slug):
        fail(CONFIG_NAME, 1, f"cannot make a slug from {title!r}", "give one with --slug, e.g. --slug first-steps")
    existing = _source_of(root, slug)
    if existing:
        fail(existing, 1, f"unit '{slug}' already has a source file", "choose another title or --slug")
    yaml = round_trip()
    data = yaml.load((root / CONFIG_NAME).read_text(encoding="utf-8"))
    if data.get("units") is None:
        data["units"] = []
    number = _list_unit(data["units"], slug, part)
    suffix = NOTEBOOK_SUFFIX if notebook else ".md"
    path = f"{FOLDERS[kind]}/{number:0{_number_width(root)}d}-{slug}{suffix}"
    text = render_skeleton(kind, title, slug, config, number)
    if notebook:
        text = as_notebook(text)
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text, encoding="utf-8")
    out = io.StringIO()
    yaml.dump(data, out)
    (root / CONFIG_NAME).write_text(out.getvalue(), encoding="utf-8")
    return NewUnit(path, number)


def _list_unit(units, slug: str, part: str) -> int:
    """Make `slug` a written unit in `units` (in place, or appended); return its number."""
    for number, entry in enumerate(units, 1):
        if entry == slug or (hasattr(entry, "get") and entry.get("slug") == slug):
            if hasattr(entry, "get"):
                for key in ("upcoming", "title", "kind"):
                    entry.pop(key, None)
                if part:
                    entry["part"] = part
            return number
    units.append({"slug": slug, **({"part": part} if part else {})})
    return len(units)


def _source_of(root: Path, slug: str) -> str:
    """Return the existing source file (relative path) with this slug, or ''."""
    for folder in SOURCE_DIRS:
        for file in sorted((root / folder).glob("*")):
            if file.suffix in SOURCE_SUFFIXES and slug_of(file) == slug:
                return file.relative_to(root).as_posix()
    return ""


def _number_width(root: Path) -> int:
    """Return how many digits the existing sources' number prefixes use (2 when there are none)."""
    widths = [
        len(m.group(0)) - 1
        for folder in SOURCE_DIRS
        for file in (root / folder).glob("*")
        if file.suffix in SOURCE_SUFFIXES and (m := NUMBER_PREFIX.match(file.name))
    ]
    return max(widths, default=2)


def render_skeleton(kind: str, title: str, slug: str, config, number: int) -> str:
    """Return the skeleton source for a new unit, filled in (the same in every course)."""
    values = {
        "title": title,
        "title_yaml": json.dumps(title, ensure_ascii=False),
        "slug": slug,
        "package": config.python.package,
    }
    if kind == "review":
        lesson = _previous_lesson(config.units, before=number)
        if lesson is None:
            fail(
                CONFIG_NAME,
                1,
                "a review needs a lesson before it to draw its questions from",
                "add a lesson first, or list the review after one",
            )
        values.update(lesson=lesson[0], lesson_title=lesson[1], lesson_title_yaml=json.dumps(lesson[1]))
    return string.Template((SKELETONS / f"{kind}.md").read_text(encoding="utf-8")).substitute(values)


def _previous_lesson(units, before: int):
    """Return (number, label) of the last written unit listed before position `before`, or None."""
    written = [(n, u.slug) for n, u in enumerate(units, 1) if n < before and not u.upcoming]
    return (written[-1][0], f"unit {written[-1][0]} ({written[-1][1]})") if written else None


NOTEBOOK_CODE = (  # the one code cell a new notebook lesson starts with, after its first section
    "# A code cell: its code is shown in the page.\nsteps = [1 / 2**n for n in range(5)]\nsum(steps)"
)


def as_notebook(text: str) -> str:
    """Return a skeleton's Markdown as a Jupyter notebook: its front matter in a raw first cell (jupytext's
    convention), each section a markdown cell, and a code cell after the first section."""
    import nbformat  # here: only `new --notebook` needs it
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

    _, matter, body = text.split("---\n", 2)
    sections = [part.strip("\n") for part in re.split(r"\n(?=## )", body)]
    cells = [new_raw_cell("---\n" + matter + "---"), new_markdown_cell(sections[0])]
    if len(sections) > 1:
        cells += [new_markdown_cell(sections[1]), new_code_cell(NOTEBOOK_CODE), *map(new_markdown_cell, sections[2:])]
    for number, cell in enumerate(cells, 1):
        cell["id"] = f"cell-{number}"  # nbformat draws random ids: fixed ones keep two runs' files equal
    notebook = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
    )
    return nbformat.writes(notebook) + "\n"
