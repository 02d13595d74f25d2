"""Site search: at build time, cut every published page into sections and write them as a JSON corpus.

The browser loads this corpus (and the vendored MiniSearch) only when the learner opens search, so
pages that are never searched pay nothing. One document per heading section, plus one per question,
so a result links straight to the place that answers it.
"""
from __future__ import annotations

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
    words: list[str] = field(default_factory=list)
    label: str = ""  # a question's kind label ("Free recall · lesson 2")


@dataclass(frozen=True)
class FoundSection:
    """A finished section: what one search document is made of."""

    anchor: str
    title: str
    kind: str
    label: str
    text: str


# The pages are our own well-formed output (attribute values escaped), so a regular expression
# walks them several times faster than html.parser: tags, comments and raw script/style bodies.
TAG = re.compile(r"<!--.*?-->|<(/?)([a-zA-Z][\w:-]*)((?:\s[^>]*)?)/?>", re.S)
ATTR = re.compile(r'([^\s=/]+)(?:\s*=\s*(?:"([^"]*)"|\'([^\']*)\'|([^\s>]+)))?')
RAW_TEXT = {"script", "style"}
PLAIN_ELEMENT, SKIPPED_ELEMENT = (None, False, False), (None, True, False)  # (section to resume, skips?, label?)
ATTRS_READ = re.compile(r"data-|diagram|explanation|question-kind")  # what is_skipped and the splitter look for


def tag_attrs(text: str) -> list[tuple[str, str]]:
    """Return a start tag's attributes as (name, unescaped value) pairs."""
    return [(m.group(1).lower(), htmllib.unescape(next((g for g in m.groups()[1:] if g is not None), "")))
            for m in ATTR.finditer(text)]


class SectionSplitter:
    """Collect a page's text, starting a new section at each anchored heading or question."""

    def __init__(self, page_title: str, kind: str):
        self.kind = kind
        self.current = Section("", page_title, kind)
        self.sections = [self.current]
        self.open: list[tuple[Section | None, bool, bool]] = []  # per element: section to resume, skips? label?
        self.skip_depth = 0
        self.label_depth = 0
        self.in_heading = False

    def feed(self, page: str) -> None:
        """Walk the page's tags and text in order."""
        position = 0
        for match in TAG.finditer(page):
            start = match.start()
            if start < position:
                continue  # inside a script or style body
            if start > position:
                self.handle_data(page[position:start])
            position = match.end()
            closing, tag, raw_attrs = match.groups()
            if tag is None:
                continue  # a comment
            tag = tag.lower()
            if closing:
                self.handle_endtag(tag)
            else:
                self.handle_starttag(tag, raw_attrs)
                if tag in RAW_TEXT:  # skip to the end tag: a script's text is not markup
                    end = page.find(f"</{tag}", position)  # our pages write tags in lowercase
                    position = len(page) if end < 0 else end
        if position < len(page):
            self.handle_data(page[position:])

    def handle_starttag(self, tag: str, raw_attrs: str) -> None:
        self.current.words.append("" if tag in INLINE else " ")  # block edges and <br> are spaces
        if tag in VOID:
            return
        # Most tags (p, li, Pygments' spans) carry nothing we read: their attributes stay unparsed.
        if not raw_attrs or not (tag in HEADINGS or ATTRS_READ.search(raw_attrs)):
            self.open.append(SKIPPED_ELEMENT if tag in SKIPPED else PLAIN_ELEMENT)
            self.skip_depth += tag in SKIPPED
            return
        attrs = dict(tag_attrs(raw_attrs))
        resume = None
        if tag in HEADINGS and attrs.get("id"):
            self.current, self.in_heading = Section(attrs["id"], "", self.kind), True
            self.sections.append(self.current)
        elif "data-question" in attrs and attrs.get("id"):
            resume, self.current = self.current, Section(attrs["id"], "", "question")
            self.sections.append(self.current)
        skips, label = is_skipped(tag, attrs), "question-kind" in (attrs.get("class") or "").split()
        self.skip_depth += skips
        self.label_depth += label
        self.open.append((resume, skips, label))

    def handle_endtag(self, tag: str) -> None:
        self.current.words.append("" if tag in INLINE else " ")
        if tag in VOID or not self.open:
            return
        if tag in HEADINGS:
            self.in_heading = False
        element = self.open.pop()
        if element is PLAIN_ELEMENT:
            return
        resume, skips, label = element
        self.skip_depth -= skips
        self.label_depth -= label
        if resume is not None:  # a question ended: the text after it belongs to the section around it
            self.current = resume

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        if "&" in data:
            data = htmllib.unescape(data)
        if self.in_heading:
            self.current.title += data
        elif self.label_depth:
            self.current.label += data
        else:
            self.current.words.append(data)


def is_skipped(tag: str, attrs: dict) -> bool:
    """Return whether an element's text stays out of the index (scripts, diagrams, answers)."""
    classes = (attrs.get("class") or "").split()
    return (tag in SKIPPED or (tag == "pre" and "diagram" in classes) or not SKIPPED_ATTRS.isdisjoint(attrs)
            or any("explanation" in c for c in classes))


def page_sections(html: str, page_title: str, kind: str) -> list[FoundSection]:
    """Return the sections of one rendered page body, in document order, empty ones dropped."""
    splitter = SectionSplitter(page_title, kind)
    splitter.feed(html)
    found = []
    for section in splitter.sections:
        text = " ".join("".join(section.words).replace("\u21a9\ufe0e", "").split())  # footnotes' back-arrows
        if text or section.anchor:
            title = excerpt(text) if section.kind == "question" else " ".join(section.title.split())
            found.append(FoundSection(section.anchor, title, section.kind, " ".join(section.label.split()), text))
    return found


def excerpt(text: str, limit: int = 80) -> str:
    """Return `text` cut at a word boundary to at most `limit` characters, with an ellipsis if cut."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + "…"


def course_documents(course) -> list[dict]:
    """Return one search document per section and question of every published unit."""
    documents = []
    for unit in course.written:
        for document in unit_documents(_sections(unit), unit.url, unit.title, unit.label):
            documents.append({"id": len(documents), **document})
    return documents


def _sections(unit) -> tuple[FoundSection, ...]:
    return unit.page.derived.get("search") or _analyse(unit.page.html, unit.page.source)


def unit_documents(sections: tuple[FoundSection, ...], url: str, title: str, label: str) -> list[dict]:
    """Return one unit's documents, without their course-wide ids."""
    where = f"{label} · {title}"
    return [{"url": url + (f"#{section.anchor}" if section.anchor else ""), "title": section.title or title,
             "where": " · ".join(filter(None, [section.label, where])), "kind": section.kind, "text": section.text}
            for section in sections]


def _analyse(html: str, source) -> tuple[FoundSection, ...]:
    """Cut one parsed page into sections (run while parsing, so in the parse workers; see install)."""
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
            cached = (sections, labels, [_json(d) for d in unit_documents(sections, *labels)])
        _ENCODED[unit.slug] = cached
    encoded = [text for unit in course.written for text in _ENCODED[unit.slug][2]]
    # Sorted keys put "id" first in every document: '{"id":7,' then the rest of its encoding.
    documents = ",".join(f'{{"id":{number},{text[1:]}' for number, text in enumerate(encoded))
    return f'{{"documents":[{documents}],"fields":{_json(FIELDS)},"storeFields":{_json(STORED)}}}'.encode()


# slug → (its sections, (url, title, label), its documents' JSON) from the last build: the sections
# of an unchanged page are the very same object (the build cache keeps its Page), so `is` tells.
_ENCODED: dict[str, tuple] = {}


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


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
