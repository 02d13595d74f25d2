"""A page's searchable text: its body HTML cut at each heading and question, and its word counts.

A page analyser (parse.make_markdown): it runs while the page is parsed, in the parse workers of a
large build, and is kept with the parsed page, so a rebuild reads the text of changed pages only.
The sections go to the page's fragment as JSON made here (one string, cheap to hand back from a
worker); the counts make the page's postings (index.py).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from typing import NamedTuple

from selectolax.lexbor import LexborHTMLParser

# What stays out of the index: a search result must not give away a review's answer or a choice's
# explanation; a widget's Python source and its live-run panel are the same words on every widget;
# diagrams are drawings; footnote markers and buttons are no prose.
EXCLUDED = ", ".join(
    (
        "[data-answer]",
        "[class*=explanation]",
        "[data-widget-code]",
        "[data-widget-live]",
        "pre.diagram",
        ".cite-preview",  # a citation's reference, listed again under References
        "sup",
        "button",
        "template",
        "script",
        "style",
    )
)
# Where a section starts: a heading with an id, or a question.
STARTS = "h1[id], h2[id], h3[id], h4[id], h5[id], h6[id], section[data-question][id]"
# Letters and digits: search-index.js cuts a query with the same classes (\p{L} and \p{N}).
WORD = re.compile(r"[^\W_]+")
# For the common case, ASCII: every ASCII byte that is no letter or digit becomes a space, so that
# bytes.split() cuts the words out in C (counting a 2,000-lesson course through a regular
# expression takes half as long again); a run holding other bytes is cut again by WORD.
ASCII_WORDS = bytes(c if chr(c).isalnum() and c < 128 else 32 for c in range(128)) + bytes(range(128, 256))
TITLE_WEIGHT = 3  # a word in a heading counts as three in the text


class PageText(NamedTuple):
    sections: str  # JSON: [[anchor, title, text], …]; the first is the text before any heading, ["", "", text]
    counts: dict[str, int]  # term → count on the page (a word in a heading or question label counts TITLE_WEIGHT)


def terms(text: str) -> list[str]:
    """Return the index terms of `text`: lower-case runs of letters and digits, folded (index.py
    drops the ones longer than LONGEST)."""
    return WORD.findall(folded(text.lower()))


def folded(text: str) -> str:
    """Return `text` in compatibility decomposition without its non-spacing marks: "método" typed
    or stored either way (NFC or NFD), and "metodo", all become "metodo"; "ﬁ" becomes "fi".
    search-index.js folds a query the same way."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) != "Mn").lower()


def term_counts(text: str) -> Counter:
    """Return Counter(terms(text)), counted faster."""
    counts = Counter(text.lower().encode().translate(ASCII_WORDS).split())
    found = Counter({run.decode(): count for run, count in counts.items() if run.isascii()})
    for run, count in counts.items():
        if not run.isascii():  # a word with letters beyond ASCII, or words joined by a dash or a symbol ("a–b")
            for term in WORD.findall(folded(run.decode())):
                found[term] += count
    return found


def page_text(html: str, _source=None) -> PageText:
    """Return a page body's sections and word counts. A section starts at each heading with an id
    and at each question (headed by its kind label); text after a question belongs to the heading
    above it again. Sections other than the first with no words are left out."""
    sections = page_sections(html)
    counts = term_counts(" ".join(text for _, _, text in sections))
    for term in terms(" ".join(title for _, title, _ in sections)):
        counts[term] += TITLE_WEIGHT
    return PageText(json.dumps(sections, ensure_ascii=False, separators=(",", ":")), dict(counts))


def page_sections(html: str) -> list[tuple[str, str, str]]:
    """Return (anchor, title, text) for each section of a page body (see page_text).

    Each heading and question is marked in place by a text the parser never leaves in a page's text
    (NUL, which it replaces), so the whole body's text comes out in one call, and is cut at the marks."""
    body = LexborHTMLParser(html).body
    if body is None:
        return [("", "", "")]
    for node in body.css(EXCLUDED):
        node.decompose()
    for node in body.css("math"):  # its symbols one by one, as a reader sees them, not run together
        node.replace_with(f" {node.text(separator=' ')} ")
    starts: list[tuple[str, str, bool]] = []  # (anchor, title, is a question), by their marks' numbers
    for node in body.css(STARTS):  # in document order
        anchor = node.id
        if not anchor:
            continue
        node.insert_before(f" \0{len(starts)}\0 ")
        if node.tag == "section":
            kind = node.css_first(".question-kind")
            starts.append((anchor, squeezed(kind.text()) if kind is not None else "", True))
            if kind is not None:
                kind.decompose()
            node.insert_after(" \0end\0 ")
        else:
            starts.append((anchor, squeezed(node.text()), False))
            node.decompose()
    pieces = body.text().split("\0")  # text, mark, text, mark, …
    first: list = ["", "", [pieces[0]]]  # [anchor, title, text pieces]
    parts, heading = [first], first  # heading: the section that text outside questions goes to
    for mark, text in zip(pieces[1::2], pieces[2::2]):
        if mark == "end":  # after a question, the text is its heading's again
            heading[2].append(text)
            continue
        anchor, title, question = starts[int(mark)]
        parts.append([anchor, title, [text]])
        if not question:
            heading = parts[-1]
    sections = [(anchor, title, squeezed(" ".join(texts))) for anchor, title, texts in parts]
    return sections[:1] + [section for section in sections[1:] if section[1] or section[2]]


def squeezed(text: str) -> str:
    return " ".join(text.split())
