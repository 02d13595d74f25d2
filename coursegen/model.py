"""The plain data passed between stages. Every stage returns new values; nothing is mutated later."""

from __future__ import annotations

import functools
import itertools
import operator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from coursegen.errors import Problems

if TYPE_CHECKING:  # the config module imports this one
    from collections.abc import Callable

    from coursegen.memo import Memo
    from coursegen.stages.config import CourseConfig
    from coursegen.stages.notebook import CellLines


@dataclass(frozen=True)
class Source:
    """One unit's source file as read from disk (`path` is relative to the course root)."""

    path: str
    text: str
    kind: str  # "lesson" or "review"
    slug: str
    cells: CellLines | None = None  # a notebook's: where each line of `text` is in it (stages.notebook)


@dataclass(frozen=True)
class Heading:
    """A section heading: its level, anchor id, plain text and source line."""

    level: int
    id: str
    text: str
    line: int


@dataclass(frozen=True)
class Link:
    """An internal link found while parsing, checked once every page is known."""

    slug: str
    anchor: str
    line: int


@dataclass(frozen=True)
class Target:
    """Something a reference can name: a numbered figure, table or equation, or a labelled section.

    Parse rules record a page's targets (`env["derived"]["targets"]`: element id → Target), so that
    references from other pages are resolved after linking (stages/references.py)."""

    kind: str  # "figure", "table", "equation" or "section"
    number: str  # "3.2"; "" for a section
    name: str  # what {numref} shows by default, in the course's language: "Figure 3.2"
    title: str  # what {ref} shows: the caption's or the heading's plain text
    label: str  # the author's label
    line: int


@dataclass(frozen=True)
class Page:
    """A parsed source: front matter, rendered body HTML and what the link stage needs."""

    source: Source
    meta: dict
    html: str
    headings: tuple[Heading, ...] = ()
    links: tuple[Link, ...] = ()
    assets: tuple[tuple[str, str], ...] = ()  # (site path, source path) of images and other media
    widgets: tuple[str, ...] = ()  # names of the widgets the page embeds
    questions: tuple = ()  # question records (see coursegen.features.questions.extension)
    derived: dict = field(default_factory=dict)  # extension name → what it computed from this page alone

    @property
    def slug(self) -> str:
        return self.source.slug

    @property
    def title(self) -> str:
        return self.meta.get("title", "")


@dataclass(frozen=True)
class Unit:
    """A unit in course order: written (with a page) or upcoming (title only, no link)."""

    number: int
    slug: str
    kind: str
    title: str
    summary: str = ""
    part: str = ""
    page: Page | None = None
    topics: tuple[str, ...] = ()  # from course.yaml, for the progress map

    @functools.cached_property  # asked for by every stage after linking: made once per unit
    def url(self) -> str | None:
        return f"{self.slug}.html" if self.page else None

    # Its label ("Lesson 3") is in the course's language: theme/messages.unit_label.


@dataclass(frozen=True)
class UnitRun:
    """Consecutive upcoming units of one part without titles: one line on the course map and progress maps."""

    units: tuple[Unit, ...]

    @property
    def part(self) -> str:
        return self.units[0].part

    @property
    def numbers(self) -> list[int]:
        return [u.number for u in self.units]

    # Its label and the maps' line for it, in the course's language: theme/messages.unit_label, run_text.


def untitled_upcoming(unit: Unit) -> bool:
    """True for a unit the maps fold into a UnitRun: not published and given no title."""
    return unit.page is None and not unit.title


@dataclass(frozen=True)
class Course:
    """The linked course: configuration plus every unit in order."""

    config: CourseConfig
    units: tuple[Unit, ...] = field(default_factory=tuple)

    @functools.cached_property  # computed once: every page asks for its neighbours
    def written(self) -> tuple[Unit, ...]:
        return tuple(u for u in self.units if u.page)

    @functools.cached_property
    def outline(self) -> tuple[Unit | UnitRun, ...]:
        """The units as the maps list them: each run of untitled upcoming units of one part becomes a UnitRun."""
        entries: list = []
        for unit in self.units:
            last = entries[-1] if entries else None
            if untitled_upcoming(unit) and isinstance(last, UnitRun) and last.part == unit.part:
                entries[-1] = UnitRun(last.units + (unit,))
            else:
                entries.append(UnitRun((unit,)) if untitled_upcoming(unit) else unit)
        return tuple(entries)

    @functools.cached_property
    def _positions(self) -> dict[str, int]:
        """Each written unit's index in `written`: found once, not by a search per page."""
        return {u.slug: i for i, u in enumerate(self.written)}

    @functools.cached_property
    def _by_slug(self) -> dict[str, Unit]:
        return {u.slug: u for u in self.units}

    def unit(self, slug: str) -> Unit | None:
        """Return the unit with this slug, or None."""
        return self._by_slug.get(slug)

    def neighbours(self, slug: str) -> tuple[Unit | None, Unit | None]:
        """Return the previous and next written units around `slug`."""
        written = self.written
        index = self._positions[slug]
        return (written[index - 1] if index else None, written[index + 1] if index + 1 < len(written) else None)


def replaced_units(before: tuple, after: tuple) -> list[int] | None:
    """Return the positions where `after` holds another Unit object than `before`, or None when their
    lengths differ. In `serve` the link stage keeps every unit an edit did not touch as it was, so
    per-unit work kept from the last build needs redoing at these positions only."""
    if len(before) != len(after):
        return None
    return list(itertools.compress(itertools.count(), map(operator.is_not, before, after)))


def _replaced_units_kept(memo: Memo | None, before: tuple, after: tuple) -> list[int] | None:
    """Return replaced_units(before, after), kept in `memo` for the same two tuples: each rebuild asks ~9 times."""
    last = memo.peek("replaced units", None) if memo is not None else None
    if last is not None and last[0] is before and last[1] is after:  # held here, so neither id can be reused
        return last[2]
    found = replaced_units(before, after)
    if memo is not None:
        memo.put("replaced units", None, (before, after, found))
    return found


NONE_KEPT: tuple = ((), None, ())  # per_unit's entry before its first call: no units, nothing given, no values


def per_unit(memo: Memo | None, kind: str, written: tuple, make: Callable, given=None) -> list:
    """Return `[make(unit) for unit in written]`, kept in `memo` under `kind` with `given` (what `make`
    reads beside the unit, compared by equality): a rebuild that kept most units calls `make` again
    only for the units replaced since the last call (replaced_units)."""
    last_written, last_given, last_values = memo.peek(kind, None, NONE_KEPT) if memo is not None else NONE_KEPT
    changed = _replaced_units_kept(memo, last_written, written) if last_given == given else None
    if changed is None:
        values = [make(unit) for unit in written]
    else:
        values = list(last_values)
        for position in changed:
            values[position] = make(written[position])
    if memo is not None:
        memo.put(kind, None, (written, given, tuple(values)))
    return values


def per_unit_problems(memo: Memo | None, kind: str, written: tuple, find: Callable, problems: Problems, given=None):
    """Add to `problems` what `find(unit, found)` reports of each unit of `written` into `found`, a
    Problems of its own: per_unit keeps each unit's under `kind` (with `given`), so a rebuild looks
    again only at the units replaced since the last call."""

    def found_in(unit) -> tuple:
        found = Problems()
        find(unit, found)
        return tuple(found.items)

    problems.items.extend(itertools.chain.from_iterable(per_unit(memo, kind, written, found_in, given)))
