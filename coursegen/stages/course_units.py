"""The list of every unit beside each page (partials/course_units.html), rendered once per build.

Every unit page lists every unit, so rendering that list in each page costs a build time that grows
with the square of its length: at 2,000 lessons, four million list items, the larger part of a full
build. The theme's own partial differs from page to page in one attribute only, `aria-current` on the
page's own item, so it is rendered once without a current unit and that one attribute is put in per
page. While pages are rendered for the render cache, the list is not even put into the page's text:
the page holds a marker there (render.UNITS and the unit's slug, as it holds one per asset URL), and
the list goes in when the page is filled (`filled`), as bytes. At 2,000 lessons the list was 93% of
a page's 325 KB: carried through Jinja, encoding, splitting and the pool's pipe, it cost a full
build some 2 s. (Its items have since lost their indent and classes: such a page is now 162 KB.)
A course's own version of the partial (any text other than the theme's) is rendered in each page
as before, since it may read anything of the page. tests/stages/test_course_units.py compares
the two ways byte for byte.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import jinja2
from markupsafe import Markup

from coursegen.memo import Memo
from coursegen.theme import files as theme

PARTIAL = "partials/course_units.html"
UNITS = "\x00units "  # marker names of the list, by slug: no asset is named so (see render.Filling)
ITEM = re.compile(rb'<li><a href="[^"]*"')  # a unit's item up to where aria-current goes
CURRENT = b' aria-current="page"'
PER_PAGE = ("unit", "page", "body", "toc", "prev", "next", "canonical")  # what _page adds for one unit


class CourseUnits:
    """`course_units(unit)` for the templates: the list with `unit` marked as the current page."""

    def __init__(self, env: jinja2.Environment, root: Path):
        self.env = env
        self.once = _theme_partial(root)  # else the course's own partial: rendered per page
        self.unmarked: str | None = None
        self._bytes: tuple[bytes, dict[bytes, list[int]], str] | None = None  # see _list_bytes

    def prepare(self, common: dict, memo: Memo, shared: str) -> None:
        """Render the list once for this build, before any page (kept in `memo` while `shared`, the digest
        of what every page shares, stays: serve renders it again only when the outline or templates
        change), so that pages kept from earlier builds can be filled with it too."""
        if not self.once:
            return

        def render() -> tuple:
            template = self.env.get_template(PARTIAL)
            self.unmarked, self._bytes = template.render({k: v for k, v in common.items() if k not in PER_PAGE}), None
            return (self.unmarked, self._list_bytes())

        self.unmarked, self._bytes = memo.get("unit list", shared, render)

    def __repr__(self) -> str:  # part of every page's render key (render.plan_render): the same every build
        return "<course units>"

    @jinja2.pass_context
    def __call__(self, context: jinja2.runtime.Context, unit) -> Markup:
        template = self.env.get_template(PARTIAL)
        values = context.get_all()
        if not self.once:
            return Markup(template.render(values))
        if self.unmarked is None:
            self.unmarked = template.render({k: v for k, v in values.items() if k not in PER_PAGE})
        mark = getattr(values.get("asset"), "mark", None)  # render._Marking: a page rendered for filling
        if mark is not None and self._place(unit.url) is not None:
            return Markup(mark(UNITS + unit.slug))
        marked = _marked(self.unmarked, unit)
        return Markup(template.render(values) if marked is None else marked)

    def _list_bytes(self) -> tuple[bytes, dict[bytes, list[int]], str]:
        """Return the unmarked list as bytes, where each unit's `aria-current` would go (by its item's
        opening markup, every place it occurs) and a digest of the list (what the page's fill depends on)."""
        if self._bytes is None:
            assert self.unmarked is not None  # a page asked for it first
            data = self.unmarked.encode()
            places: dict[bytes, list[int]] = {}
            for found in ITEM.finditer(data):
                places.setdefault(found.group(0), []).append(found.end())
            self._bytes = (data, places, hashlib.sha256(data).hexdigest()[:16])
        return self._bytes

    def _place(self, url: str) -> int | None:
        """Return where in the list's bytes the aria-current of the unit at `url` goes, or None unless
        exactly one place."""
        places = self._list_bytes()[1].get(_item(url).encode(), [])
        return places[0] if len(places) == 1 else None

    def token(self) -> str:
        """Return what the filled list depends on besides the page's own slug: the list's digest."""
        return "units " + self._list_bytes()[2]

    def filled(self, url: str) -> list:
        """Return the list with the unit at `url` marked as the current page, as pieces to join (its
        page was marked only where `_place` found one)."""
        at = self._place(url)
        assert at is not None
        view = memoryview(self._list_bytes()[0])
        return [view[:at], CURRENT, view[at:]]


def _theme_partial(root: Path) -> bool:
    """Return whether the partial in use holds the theme's own text (a course may carry a copy of it)."""
    used, own = theme.find(root, PARTIAL), theme.packaged_theme() / PARTIAL
    try:
        return used is not None and own.is_file() and used.read_bytes() == own.read_bytes()
    except OSError:
        return False


def _item(url: str) -> str:
    """Return the item of the unit at `url` in the partial's markup, up to where its aria-current goes."""
    return f'<li><a href="{Markup.escape(url)}"'


def _marked(unmarked: str, unit) -> str | None:
    """Return the list with `unit`'s item marked as the current page (the partial's own markup), or None
    when its item is not found exactly once."""
    item = _item(unit.url)
    if unmarked.count(item) != 1:
        return None
    return unmarked.replace(item, item + CURRENT.decode())
