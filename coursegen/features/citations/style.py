"""How a citation and a reference read: author-year ("Raschka, n.d.") or numbered ("[1]").

Every word comes from the message catalogue (`citations.*` keys), so a course in another language
says "Referencias", "s. f." and "y". A field a work lacks is left out; only a missing year is said,
in author-year style, where the label needs one.
"""

from __future__ import annotations

from markdown_it.common.utils import escapeHtml

from coursegen.features.citations.bibliography import Work
from coursegen.theme.messages import say


def names(work: Work, messages: dict[str, str]) -> str:
    """Return the authors' names as a citation gives them ("A", "A and B", "A et al."), else the title."""
    people = work.authors
    if not people:
        return work.title or work.key
    if len(people) == 1:
        return people[0]
    if len(people) == 2:
        return say(messages, "citations.two_authors", first=people[0], second=people[1])
    return say(messages, "citations.et_al", first=people[0])


def year(work: Work, messages: dict[str, str]) -> str:
    """Return the work's year, or the catalogue's word for none ("n.d.")."""
    return work.year or say(messages, "citations.no_date")


def link_text(work: Work, number: int, style: str, messages: dict[str, str], textual: bool) -> str:
    """Return what the link to one cited work says: "Raschka, n.d.", "Raschka (n.d.)", "1" or "Raschka [1]"."""
    if style == "numbered":
        return f"{names(work, messages)} [{number}]" if textual else str(number)
    if textual:
        return f"{names(work, messages)} ({year(work, messages)})"
    return f"{names(work, messages)}, {year(work, messages)}"


def group(links: list[str], style: str, textual: bool) -> str:
    """Return the links of one role together: "(A, n.d.; B, 2024)", "[1, 2]", or textual ones side by side."""
    if textual:
        return "; ".join(links) if style == "author-year" else ", ".join(links)
    return f"({'; '.join(links)})" if style == "author-year" else f"[{', '.join(links)}]"


def reference_html(work: Work, style: str, messages: dict[str, str], linked: bool = True) -> str:
    """Return one entry of a References list: authors, year, title, venue (volume, issue, pages), version, note,
    URL, each if given
    (the URL a link unless `linked` is false: a preview holds no link, as it is hidden from screen readers)."""
    parts = []
    authors = _listed(work.full_authors, messages)
    title = f"<cite>{escapeHtml(work.title)}</cite>" if work.title else ""
    if style == "author-year":  # a work without authors goes by its title, as its citations name it
        lead = escapeHtml(authors) if authors else title or escapeHtml(work.key)
        parts.append(f"{lead} ({escapeHtml(year(work, messages))})")
        title = title if authors else ""
    elif authors:
        parts.append(escapeHtml(authors))
    if title:
        parts.append(title)
    where = ", ".join(part for part in (work.venue, _locator(work)) if part)
    if where:
        parts.append(escapeHtml(where))
    if work.version:
        parts.append(escapeHtml(say(messages, "citations.version", version=work.version)))
    if work.year and style == "numbered":
        parts.append(escapeHtml(work.year))
    if work.note:
        parts.append(escapeHtml(work.note))
    text = ". ".join(part.rstrip(".") for part in parts) + "."
    if work.url:
        url = escapeHtml(work.url)
        text += f' <a href="{url}">{url}</a>' if linked and work.url.startswith(("https://", "http://")) else f" {url}"
    return text


def _locator(work: Work) -> str:
    """Return where in its venue a work stands, as journals write it: "37(4), 531–551", "37", "531–551"."""
    volume = f"{work.volume}({work.number})" if work.volume and work.number else work.volume
    return ", ".join(part for part in (volume, work.pages) if part)


def _listed(people: tuple[str, ...], messages: dict[str, str]) -> str:
    """Return every author's full name: "A", "A and B", "A, B and C"."""
    if len(people) < 2:
        return "".join(people)
    return say(messages, "citations.two_authors", first=", ".join(people[:-1]), second=people[-1])


def sort_key(work: Work, messages: dict[str, str]) -> tuple:
    """Return where a work goes in an author-year list: by names, year, title, then key (always distinct)."""
    return (names(work, messages).casefold(), work.year or "", work.title.casefold(), work.key)
