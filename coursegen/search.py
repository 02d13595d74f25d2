"""Site search: at build time, cut every published page into sections and write them as a JSON corpus.

The browser loads this corpus (and the vendored MiniSearch) only when the learner opens search, so
pages that are never searched pay nothing. One document per heading section, plus one per question,
so a result links straight to the place that answers it.
"""
from __future__ import annotations

import functools
import html as htmllib
import json
import re
from dataclasses import dataclass, field

INDEX_NAME = "search-index.json"
FIELDS = ["title", "text"]
STORED = ["url", "title", "where", "kind", "text"]  # search.js cuts the snippet around the match
HEADINGS = {"h2", "h3", "h4"}
SKIPPED = {"script", "style", "sup", "button", "template"}  # no prose for a reader to find
# Answers and explanations stay out too: a search result must not give away a review's answer.
# So do a widget's Python source and its live-run panel, the same words on every widget.
SKIPPED_ATTRS = {"data-answer", "data-widget-code", "data-widget-live"}
INLINE = {"a", "abbr", "b", "code", "em", "i", "kbd", "mark", "s", "small", "span", "strong", "sub", "sup"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Section:
    """A stretch of one page between two headings (or one question), its text still in pieces."""

    anchor: str
    title: str
    kind: str
    words: list[str] = field(default_factory=list)  # its markup, in pieces: made text once, when finished
    label: str = ""  # a question's kind label ("Free recall · lesson 2")


@dataclass(frozen=True)
class FoundSection:
    """A finished section: what one search document is made of."""

    anchor: str
    title: str
    kind: str
    label: str
    text: str
    # '"kind":…,"text":…' exactly as the corpus writes them: the bulk of its bytes, encoded while
    # parsing (on both cores of a large build) rather than when the corpus is put together.
    encoded: str


# The pages are our own well-formed output (attribute values escaped), so regular expressions can
# read them. Only a few elements matter to search: anchored headings, questions and their labels,
# and what stays out of the index. Those are found one by one; the text between them is stripped
# of its tags in bulk, which is several times faster than visiting every tag.
SIGNIFICANT = re.compile(r"<(h[234]|script|style|sup|button|template)\b([^>]*)>"
                         r"|<([a-zA-Z][\w:-]*)(\s[^>]*(?:data-|diagram|explanation|question-kind)[^>]*)>")
COMMENT = re.compile(r"<!--.*?-->", re.S)
INLINE_TAG = re.compile(r"</?(?:%s)\b[^>]*>" % "|".join(sorted(INLINE)))
ANY_TAG = re.compile(r"<[a-zA-Z/][^>]*>")  # text's own '<' is escaped as &lt; by then
ATTR = re.compile(r'([^\s=/]+)(?:\s*=\s*(?:"([^"]*)"|\'([^\']*)\'|([^\s>]+)))?')
RAW_TEXT = {"script", "style"}


def tag_attrs(text: str) -> list[tuple[str, str]]:
    """Return a start tag's attributes as (name, unescaped value) pairs."""
    return [(name.lower(), htmllib.unescape(double or single or bare or ""))  # whichever quoting was used
            for name, double, single, bare in ATTR.findall(text)]


def is_skipped(tag: str, attrs: dict) -> bool:
    """Return whether an element's text stays out of the index (scripts, diagrams, answers)."""
    classes = (attrs.get("class") or "").split()
    return (tag in SKIPPED or (tag == "pre" and "diagram" in classes) or not SKIPPED_ATTRS.isdisjoint(attrs)
            or any("explanation" in c for c in classes))


def plain_text(fragment: str) -> str:
    """Return a stretch of markup as text: inline tags vanish, other tags become spaces."""
    text = ANY_TAG.sub(" ", INLINE_TAG.sub("", fragment))
    return htmllib.unescape(text) if "&" in text else text


@functools.lru_cache(maxsize=64)
def _tag_pattern(tag: str) -> re.Pattern:
    return re.compile(rf"<(/?){tag}(?=[\s>/])[^>]*>")


def element_end(html: str, tag: str, position: int) -> tuple[int, int]:
    """Return where the element opened just before `position` closes: (its end tag's start, end)."""
    if tag in RAW_TEXT:  # a script's text is not markup: its end is the first end tag
        start = html.find(f"</{tag}", position)
    else:
        depth, start = 1, -1
        for match in _tag_pattern(tag).finditer(html, position):
            depth += -1 if match.group(1) else 1
            if depth == 0:
                start = match.start()
                break
    if start < 0:
        return len(html), len(html)
    end = html.find(">", start)
    return start, (len(html) if end < 0 else end + 1)


def visible_text(fragment: str) -> str:
    """Return a fragment's text without the elements that stay out of the index."""
    pieces, position = [], 0
    while (match := SIGNIFICANT.search(fragment, position)) is not None:
        tag, attrs = _read_tag(match)
        pieces.append(plain_text(fragment[position:match.start()]))
        position = element_end(fragment, tag, match.end())[1] if _skips(tag, attrs) else match.end()
    pieces.append(plain_text(fragment[position:]))
    return "".join(pieces)


def _read_tag(match: re.Match) -> tuple[str, dict]:
    tag, raw = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
    return tag.lower(), (dict(tag_attrs(raw)) if raw.strip() else {})


def _skips(tag: str, attrs: dict) -> bool:
    return tag not in VOID and is_skipped(tag, attrs)


def page_sections(html: str, page_title: str, kind: str) -> list[FoundSection]:
    """Return the sections of one rendered page body, in document order, empty ones dropped.

    A page starts in an untitled section; each anchored h2–h4 starts a new one, and each question
    is a section of its own, after which the text belongs to the section around it again.
    """
    if "<!--" in html:
        html = COMMENT.sub(" ", html)
    current = Section("", page_title, kind)
    sections, open_questions = [current], []  # (where the question ends, the section around it)
    position = 0
    while True:
        match = SIGNIFICANT.search(html, position)
        start = match.start() if match else len(html)
        while open_questions and open_questions[-1][0] <= start:
            end, around = open_questions.pop()
            current.words.append(html[position:end])
            position, current = max(position, end), around
        if match is None:
            break
        current.words.append(html[position:start])
        tag, attrs = _read_tag(match)
        position = match.end()
        if tag in VOID:
            current.words.append(" ")
        elif _skips(tag, attrs):
            position = element_end(html, tag, position)[1]
            current.words.append("" if tag in INLINE else " ")
        elif tag in HEADINGS and attrs.get("id"):
            close, position = element_end(html, tag, position)
            current = Section(attrs["id"], visible_text(html[match.end():close]), kind)
            sections.append(current)
        elif "data-question" in attrs and attrs.get("id"):
            open_questions.append((element_end(html, tag, position)[1], current))
            current = Section(attrs["id"], "", "question")
            sections.append(current)
        elif "question-kind" in (attrs.get("class") or "").split():
            close, position = element_end(html, tag, position)
            current.label += visible_text(html[match.end():close])
        else:  # a data- attribute search has no use for
            current.words.append("" if tag in INLINE else " ")
    current.words.append(html[position:])
    return [found for found in map(_finished, sections) if found.text or found.anchor]


def _finished(section: Section) -> FoundSection:
    # The pieces are cut at tags, so tags and entities come out whole; stripping the section's markup
    # in one pass costs far less than once per piece.
    text = " ".join(plain_text("".join(section.words)).replace("\u21a9\ufe0e", "").split())  # footnotes' back-arrows
    title = excerpt(text) if section.kind == "question" else " ".join(section.title.split())
    return FoundSection(section.anchor, title, section.kind, " ".join(section.label.split()), text,
                        f'"kind":{_string(section.kind)},"text":{_string(text)}')


def excerpt(text: str, limit: int = 80) -> str:
    """Return `text` cut at a word boundary to at most `limit` characters, with an ellipsis if cut."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + "…"


def _sections(unit) -> tuple[FoundSection, ...]:
    derived = unit.page.derived  # filled while parsing; a Page made without the parser's analysers is cut here
    return derived["search"] if "search" in derived else _analyse(unit.page.html, unit.page.source)


def unit_documents(sections: tuple[FoundSection, ...], url: str, title: str, label: str) -> list[str]:
    """Return one unit's documents encoded, each without its '{"id":N,' opening (keys in sorted order)."""
    where = f"{label} · {title}"
    return [f'{section.encoded},"title":{_string(section.title or title)},'
            f'"url":{_string(url + (f"#{section.anchor}" if section.anchor else ""))},'
            f'"where":{_string(" · ".join(filter(None, [section.label, where])))}}}'
            for section in sections]


def _analyse(html: str, source) -> tuple[FoundSection, ...]:
    """Cut one parsed page into sections (run while parsing, so on both cores of a large build; see install)."""
    return tuple(page_sections(html, "", source.kind))


def search_index(course) -> bytes:
    """Return the JSON corpus search.js hands to MiniSearch: its options and the documents.

    The same bytes as `json.dumps` of {"documents", "fields", "storeFields"} with sorted keys, put
    together from each unit's documents encoded once: in `serve`, an edit re-encodes one unit.
    """
    global _ENCODED
    known, _ENCODED = _ENCODED, {}
    for unit in course.written:
        sections, labels = _sections(unit), (unit.url, unit.title, unit.label)
        cached = known.get(unit.slug)
        if cached is None or cached[0] is not sections or cached[1] != labels:
            cached = (sections, labels, unit_documents(sections, *labels))
        _ENCODED[unit.slug] = cached
    encoded = [text for unit in course.written for text in _ENCODED[unit.slug][2]]
    documents = ",".join(f'{ID_FIRST}{number},{text}' for number, text in enumerate(encoded))
    return f'{{"documents":[{documents}],"fields":{_json(FIELDS)},"storeFields":{_json(STORED)}}}'.encode()


ID_FIRST = '{"id":'  # sorted keys put "id" first in every document


# slug → (its sections, (url, title, label), its documents' JSON) from the last build: the sections
# of an unchanged page are the very same object (the build cache keeps its Page), so `is` tells.
_ENCODED: dict[str, tuple] = {}


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


_string = json.JSONEncoder(ensure_ascii=False).encode  # one string, as _json writes it (its fast path)


def install(md) -> None:
    """Search adds no Markdown syntax; it cuts each page into sections as soon as it is parsed."""
    md.page_analysers["search"] = _analyse


def add_files(course, root, assets, problems) -> None:
    """Add the search corpus at a fixed path, reachable as asset('search-index.json').

    Not content-hashed on purpose: its URL then stays out of every page's bytes, so editing one
    lesson in `serve` rewrites that lesson and the corpus, not all pages. search.js revalidates it.
    """
    assets.files[INDEX_NAME] = search_index(course)
    assets.urls[INDEX_NAME] = INDEX_NAME
