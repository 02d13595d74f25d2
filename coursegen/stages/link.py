"""Link stage: put pages in course order, check cross-references, compute navigation once.

`link_pages` links the whole course, or, in `serve` when only some pages were parsed again and
nothing else moved, replaces their units in the last build's course (`relinked`).
"""

from __future__ import annotations

import posixpath

from coursegen.errors import Problems, did_you_mean
from coursegen.incremental import LinkKept, LinkRecord
from coursegen.model import Course, Page, Unit
from coursegen.stages.config import CONFIG_NAME, SLUG, CourseConfig, slug_from
from coursegen.stages.parse import element_ids


def link_pages(
    config: CourseConfig, pages: list[Page], problems: Problems, drafts: bool, kept: LinkKept
) -> tuple[Course, LinkRecord | None]:
    """Return `link_course`'s answer and the new LinkRecord (None after a problem), re-linking only
    the re-parsed pages when it can.

    It can when the last link (None when the watcher did not name every change) was of the same
    configuration, sources and drafts switch, and each re-parsed page keeps its place (published or
    not) and its links stay good: then the course is the last one with those units replaced, and
    only their links, and links to them when their anchors changed, are checked again."""
    last, slug_by_path = kept.last, kept.slug_by_path
    if last is not None and last.config is config and last.drafts == drafts and last.slug_by_path is slug_by_path:
        found = relinked(last.course, kept.reparsed, last.linkers, drafts)
        if found is not None:
            return found[0], LinkRecord(config, drafts, slug_by_path, *found)
    before = len(problems.items)
    course = link_course(config, pages, problems, drafts)
    if len(problems.items) != before:
        return course, None
    return course, LinkRecord(config, drafts, slug_by_path, course, linkers(course.written))


def link_course(config: CourseConfig, pages: list[Page], problems: Problems, drafts: bool = False) -> Course:
    """Return the Course in `units:` order, reporting units without sources and stray sources."""
    by_slug: dict[str, Page] = {}
    for page in pages:
        if page.slug in by_slug:
            other = by_slug[page.slug].source.path
            if posixpath.splitext(other)[0] == posixpath.splitext(page.source.path)[0]:  # 03-newton .md and .ipynb
                problems.error(
                    page.source.path,
                    1,
                    f"unit '{page.slug}' has two source files: {other} and {page.source.path}",
                    "keep one of them: a unit is one Markdown file or one notebook",
                )
                continue
            problems.error(
                page.source.path,
                1,
                f"slug '{page.slug}' is also used by {other}",
                "rename one of the files; a unit's slug is its file name without the number",
            )
        else:
            by_slug[page.slug] = page
    units = tuple(make_unit(number, entry, by_slug, problems, drafts) for number, entry in enumerate(config.units, 1))
    listed = {u.slug for u in config.units}
    for page in pages:
        if page.slug not in listed and not page.meta.get("draft"):
            problems.error(
                page.source.path,
                1,
                f"'{page.slug}' is not listed in {CONFIG_NAME}",
                _listing_hint(page),
            )
    course = Course(config=config, units=units)
    check_links(course, problems)
    return course


def _listing_hint(page: Page) -> str:
    """Return the hint for a source no unit lists: list it, or (a slug course.yaml cannot take) rename it."""
    if SLUG.match(page.slug):
        return f"add '- slug: {page.slug}' under units:, or mark the file 'draft: true'"
    return _rename_hint(page)


def _rename_hint(page: Page) -> str:
    """Return the hint to rename a source whose slug is no course.yaml slug (see config.slug_from)."""
    folder, _, name = page.source.path.rpartition("/")
    renamed = name[: len(name) - len(name.lstrip("0123456789-_"))] + slug_from(page.slug) + ".md"
    return (
        f"rename it to {folder}/{renamed}: a slug is lowercase letters, digits and single hyphens, "
        "so course.yaml cannot list this one"
    )


def make_unit(number: int, entry, by_slug: dict[str, Page], problems: Problems, drafts: bool) -> Unit:
    page = None if entry.upcoming else by_slug.get(entry.slug)
    if not entry.upcoming and page is None:
        near = did_you_mean(entry.slug, by_slug)
        twin = next((p for slug, p in by_slug.items() if not SLUG.match(slug) and slug_from(slug) == entry.slug), None)
        if twin is not None:  # a file name course.yaml cannot list (capitals, accents, decomposed letters)
            near = _rename_hint(twin)
        problems.error(
            CONFIG_NAME,
            entry.line,
            f"unit '{entry.slug}' has no source file in lessons/ or reviews/",
            near or f"create lessons/{number:02d}-{entry.slug}.md (or .ipynb), or mark the unit 'upcoming: true'",
        )
    if page is not None:
        stated = page.meta.get("number")
        if stated is not None and stated != number:
            problems.error(
                page.source.path,
                2,
                f"front matter says number {stated}, but {CONFIG_NAME} places '{page.slug}' at {number}",
                "remove 'number:' or fix it",
            )
        if page.meta.get("draft") and not drafts:
            page = None  # a draft shows as upcoming unless --drafts
    source_page = by_slug.get(entry.slug)
    kind = source_page.source.kind if source_page else entry.kind
    title = source_page.title if source_page else entry.title
    summary = source_page.meta.get("summary", "") if source_page else ""
    return Unit(
        number=number,
        slug=entry.slug,
        kind=kind,
        title=title or entry.title,
        summary=summary,
        part=entry.part,
        page=page,
        topics=entry.topics,
    )


class _LazyIds(dict):
    """{slug: page_ids(page)}, found on first use: a check of a few pages needs a few pages' ids."""

    def __init__(self, pages: dict):
        super().__init__()
        self.pages = pages

    def __missing__(self, slug: str) -> frozenset[str]:
        self[slug] = found = page_ids(self.pages[slug])
        return found


def page_ids(page: Page) -> frozenset[str]:
    """Return every element id on a page: found while parsing, or here for a page made without the parser."""
    return page.derived["ids"] if "ids" in page.derived else element_ids(page.html)


def check_links(course: Course, problems: Problems, units=None) -> None:
    """Report links to units that are not published and to anchors that do not exist, from every
    written unit or from `units` alone."""
    pages = {u.slug: u.page for u in course.written}
    ids = {slug: page_ids(page) for slug, page in pages.items()} if units is None else _LazyIds(pages)
    for unit in course.written if units is None else units:
        for link in unit.page.links:
            where = unit.page.source.path
            if link.slug not in pages:
                problems.error(where, link.line, f"link to '{link.slug}', which is not published (upcoming or draft)")
            elif link.anchor and link.anchor not in ids[link.slug]:
                problems.error(
                    where,
                    link.line,
                    f"link to '#{link.anchor}' in '{link.slug}', which has no such anchor",
                    did_you_mean(link.anchor, ids[link.slug]) or "anchors are heading texts in lowercase with hyphens",
                )


def relinked(
    course: Course, pages: list[Page], found_linkers: dict[str, frozenset[str]], drafts: bool
) -> tuple[Course, dict[str, frozenset[str]]] | None:
    """Return `course` with the units of `pages` (re-parsed, same sources) made again, and its linkers
    (see linkers: `found_linkers` with the new pages' links), or None when that could change more
    than those units: a page published or withdrawn, a problem to report."""
    units = list(course.units)
    for page in pages:
        old = course.unit(page.slug)
        if old is None or old.page is None:
            return None
        problems = Problems()
        unit = make_unit(old.number, course.config.units[old.number - 1], {page.slug: page}, problems, drafts)
        if problems.items or unit.page is None:
            return None
        units[old.number - 1] = unit
    new = Course(config=course.config, units=tuple(units))
    reached = {page.slug for page in pages}
    for page in pages:
        if page_ids(page) != page_ids(course.unit(page.slug).page):  # the anchors others link to may be gone
            reached |= found_linkers.get(page.slug, set())
    problems = Problems()
    check_links(new, problems, [new.unit(slug) for slug in sorted(reached)])
    if problems.items:
        return None
    found = dict(found_linkers)
    for page in pages:
        update_linkers(
            found,
            page.slug,
            {link.slug for link in course.unit(page.slug).page.links},
            {link.slug for link in page.links},
        )
    return new, found


def linkers(units) -> dict[str, frozenset[str]]:
    """Return {slug: slugs of the units whose pages link to it} (a review's revisit links count)."""
    found: dict[str, set] = {}
    for unit in units:
        for link in unit.page.links:
            found.setdefault(link.slug, set()).add(unit.slug)
    return {slug: frozenset(slugs) for slug, slugs in found.items()}


def update_linkers(found: dict[str, frozenset[str]], slug: str, old_targets: set, new_targets: set) -> None:
    """Record in `found` (from linkers) that the page `slug` now links to `new_targets`, not `old_targets`."""
    for target in old_targets - new_targets:
        found[target] = found.get(target, frozenset()) - {slug}
    for target in new_targets - old_targets:
        found[target] = found.get(target, frozenset()) | {slug}
