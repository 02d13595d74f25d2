"""References to another page's numbered things, filled in once every page is known.

Pages are parsed apart, so a page that names another's figure ("Figure 3.2") or equation ("(3.2)")
cannot know its number while it is parsed. Its parse rule writes a placeholder link instead
(`placeholder`), records a `Link` to that page (so the link stage checks it is published and knows
who links to whom), and the target page records its `Target`s in `page.derived["targets"]`. The
render stage fills each placeholder from the linked course (`fill_references`); the render key of a
page holds the targets of the pages it links to (incremental.linked_facts), so a renumbered figure
renders again the pages that name it.
"""

from __future__ import annotations

import html
import re

from markdown_it.common.utils import escapeHtml

from coursegen.model import Course, Target

PLACEHOLDER = re.compile(
    r'<a class="xref" href="([^"]*)" data-xref="([^"#]*)#([^"]*)" data-xref-form="(\w+)" '
    r'data-xref-text="([^"]*)">[^<]*</a>'
)
CLASSES = {"numref": "numref", "ref": "ref", "eq": "eqref"}  # a form → the class of its link


def reference_text(target: Target, form: str, custom: str = "") -> str:
    """Return what a reference of `form` ("numref", "ref", "eq") to `target` shows; `custom` is the
    author's text, where MyST's `%s` (or `{number}`) is the number and `{name}` the title."""
    if form == "eq":
        return f"({target.number})"
    if form == "numref":
        if not custom:
            return target.name
        return custom.replace("%s", target.number).replace("{number}", target.number).replace("{name}", target.title)
    return custom or target.title


def reference_link(href: str, form: str, text: str) -> str:
    """Return the HTML of a resolved reference."""
    return f'<a class="{CLASSES[form]}" href="{escapeHtml(href)}">{escapeHtml(text)}</a>'


def placeholder(slug: str, anchor: str, form: str, custom: str, shown: str) -> str:
    """Return the link a parse rule writes for a reference to `slug`'s `anchor`, filled after linking;
    `shown` is its text until then (and what search indexes)."""
    return (
        f'<a class="xref" href="{escapeHtml(slug)}.html#{escapeHtml(anchor)}" data-xref="{escapeHtml(slug)}#'
        f'{escapeHtml(anchor)}" data-xref-form="{form}" data-xref-text="{escapeHtml(custom)}">{escapeHtml(shown)}</a>'
    )


def target_of(course: Course, slug: str, anchor: str) -> Target | None:
    """Return the Target with element id `anchor` on the page of unit `slug`, or None."""
    unit = course.unit(slug)
    if unit is None or unit.page is None:
        return None
    return unit.page.derived.get("targets", {}).get(anchor)


def fill_references(page_html: str, course: Course) -> str:
    """Return `page_html` with every placeholder replaced by its link, text from the linked course
    (a target that is gone keeps the placeholder's text: the link stage reported it)."""
    if 'data-xref="' not in page_html:
        return page_html

    def fill(match: re.Match) -> str:
        href, slug, anchor, form, custom = (html.unescape(part) for part in match.groups())
        target = target_of(course, slug, anchor)
        if target is None or form not in CLASSES:
            return match.group(0)
        return reference_link(href, form, reference_text(target, form, custom))

    return PLACEHOLDER.sub(fill, page_html)
