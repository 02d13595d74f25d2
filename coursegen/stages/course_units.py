"""The list of every unit beside each page (partials/course_units.html), rendered once per build.

Every unit page lists every unit, so rendering that list in each page costs a build time that grows
with the square of its length: at 2,000 lessons, four million list items, the larger part of a full
build. The theme's own partial differs from page to page in one attribute only, `aria-current` on the
page's own item, so it is rendered once without a current unit and that one attribute is put in per
page. In `serve` the list itself is kept from one build to the next while what every page shares
stays the same (the render plan's digest: the outline, the configuration, the templates), so an
edit to one lesson does not render it again. A course's own version of the partial (any text other
than the theme's) is rendered in each page as before, since it may read anything of the page.
tests/stages/test_course_units.py compares the two ways byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import jinja2
from markupsafe import Markup

from coursegen.memo import Memo
from coursegen.theme import files as theme

PARTIAL = "partials/course_units.html"
PER_PAGE = ("unit", "page", "body", "toc", "prev", "next", "canonical")  # what _page adds for one unit


class CourseUnits:
    """`course_units(unit)` for the templates: the list with `unit` marked as the current page."""

    def __init__(self, env: jinja2.Environment, root: Path, memo: Memo | None = None):
        self.env = env
        self.once = _theme_partial(root)  # else the course's own partial: rendered per page
        self.unmarked: str | None = None
        self.memo = memo
        self.shared: str | None = None  # set by the render stage: the digest of what every page shares

    def keep(self, shared: str) -> None:
        """Keep the list in the memo under `shared` (render.plan_render's digest), which every value
        the theme's partial reads (the units' fields, the configuration, the templates) is part of."""
        self.shared = shared

    def __repr__(self) -> str:  # part of every page's render key (render.plan_render): the same every build
        return "<course units>"

    @jinja2.pass_context
    def __call__(self, context: jinja2.runtime.Context, unit) -> Markup:
        template = self.env.get_template(PARTIAL)
        values = context.get_all()
        if not self.once:
            return Markup(template.render(values))
        if self.unmarked is None:

            def unmarked() -> str:
                return template.render({k: v for k, v in values.items() if k not in PER_PAGE})

            kept = self.memo is not None and self.shared is not None
            self.unmarked = self.memo.get("course units", self.shared, unmarked) if kept else unmarked()  # type: ignore[union-attr]
        marked = _marked(self.unmarked, unit)
        return Markup(template.render(values) if marked is None else marked)


def _theme_partial(root: Path) -> bool:
    """Return whether the partial in use holds the theme's own text (a course may carry a copy of it)."""
    used, own = theme.find(root, PARTIAL), theme.packaged_theme() / PARTIAL
    try:
        return used is not None and own.is_file() and used.read_bytes() == own.read_bytes()
    except OSError:
        return False


def _marked(unmarked: str, unit) -> str | None:
    """Return the list with `unit`'s item marked as the current page (the partial's own markup), or None
    when its item is not found exactly once."""
    item = f'data-unit="{Markup.escape(unit.slug)}"><a href="{Markup.escape(unit.url)}"'
    if unmarked.count(item) != 1:
        return None
    return unmarked.replace(item, f'{item} aria-current="page"')
