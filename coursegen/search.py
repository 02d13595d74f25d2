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
    """A stretch of one page between two headings (or one question), with its text."""

    anchor: str
    title: str
    kind: str
    words: list[str] = field(default_factory=list)
    label: str = ""  # a question's kind label ("Free recall · lesson 2")

    @property
    def text(self) -> str:
        return " ".join("".join(self.words).replace("\u21a9\ufe0e", "").split())


# The pages are our own well-formed output (attribute values escaped), so a regular expression
# walks them several times faster than html.parser: tags, comments and raw script/style bodies.
TAG = re.compile(r"<!--.*?-->|<(/?)([a-zA-Z][\w:-]*)((?:\s[^>]*)?)/?>", re.S)
ATTR = re.compile(r'([^\s=/]+)(?:\s*=\s*(?:"([^"]*)"|\'([^\']*)\'|([^\s>]+)))?')
RAW_TEXT = {"script", "style"}


def tag_attrs(text: str) -> list[tuple[str, str]]:
    """Return a start tag's attributes as (name, unescaped value) pairs."""
    return [(m.group(1).lower(), htmllib.unescape(next((g for g in m.groups()[1:] if g is not None), "")))
            for m in ATTR.finditer(text)]


def _text(raw: str) -> str:
    return htmllib.unescape(raw) if "&" in raw else raw


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
        while (match := TAG.search(page, position)) is not None:
            if match.start() > position:
                self.handle_data(_text(page[position:match.start()]))
            position = match.end()
            closing, tag = match.group(1), (match.group(2) or "").lower()
            if not tag:
                continue  # a comment
            if closing:
                self.handle_endtag(tag)
                continue
            self.handle_starttag(tag, tag_attrs(match.group(3) or ""))
            if tag in RAW_TEXT:  # skip to the end tag: a script's text is not markup
                end = page.find(f"</{tag}", position)  # our pages write tags in lowercase
                position = len(page) if end < 0 else end
        if position < len(page):
            self.handle_data(_text(page[position:]))

    def handle_starttag(self, tag, attrs):
        self.current.words.append("" if tag in INLINE else " ")  # block edges and <br> are spaces
        if tag in VOID:
            return
        attrs = dict(attrs)
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

    def handle_endtag(self, tag):
        self.current.words.append("" if tag in INLINE else " ")
        if tag in VOID or not self.open:
            return
        if tag in HEADINGS:
            self.in_heading = False
        resume, skips, label = self.open.pop()
        self.skip_depth -= skips
        self.label_depth -= label
        if resume is not None:  # a question ended: the text after it belongs to the section around it
            self.current = resume

    def handle_data(self, data):
        if self.skip_depth:
            return
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


@functools.lru_cache(maxsize=1024)  # serve rebuilds: an unchanged page keeps its (read-only) sections
def page_sections(html: str, page_title: str, kind: str) -> list[Section]:
    """Return the sections of one rendered page body, in document order, empty ones dropped."""
    splitter = SectionSplitter(page_title, kind)
    splitter.feed(html)
    for section in splitter.sections:
        section.title = " ".join(section.title.split())
        section.label = " ".join(section.label.split())
        if section.kind == "question":
            section.title = excerpt(section.text)
    return [s for s in splitter.sections if s.text or s.anchor]


def excerpt(text: str, limit: int = 80) -> str:
    """Return `text` cut at a word boundary to at most `limit` characters, with an ellipsis if cut."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + "…"


def course_documents(course) -> list[dict]:
    """Return one search document per section and question of every published unit."""
    documents = []
    for unit in course.written:
        for document in unit_documents(unit.page.html, unit.title, unit.kind, unit.label, unit.url):
            documents.append({"id": len(documents), **document})
    return documents


@functools.lru_cache(maxsize=1024)  # serve rebuilds: only the edited unit is cut up again
def unit_documents(html: str, title: str, kind: str, label: str, url: str) -> tuple[dict, ...]:
    """Return one unit's documents (without their course-wide ids); callers must not change them."""
    where = f"{label} · {title}"
    return tuple({"url": url + (f"#{section.anchor}" if section.anchor else ""),
                  "title": section.title or title,
                  "where": " · ".join(filter(None, [section.label, where])),
                  "kind": section.kind, "text": section.text}
                 for section in page_sections(html, title, kind))


def search_index(course) -> bytes:
    """Return the JSON corpus search.js hands to MiniSearch: its options and the documents."""
    corpus = {"fields": FIELDS, "storeFields": STORED, "documents": course_documents(course)}
    return json.dumps(corpus, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


def install(md) -> None:
    """Search adds no Markdown syntax (the pipeline calls install on every extension)."""


def add_files(course, root, assets, problems) -> None:
    """Add the search corpus at a fixed path, reachable as asset('search-index.json').

    Not content-hashed on purpose: its URL then stays out of every page's bytes, so editing one
    lesson in `serve` rewrites that lesson and the corpus, not all pages. search.js revalidates it.
    """
    assets.files[INDEX_NAME] = search_index(course)
    assets.urls[INDEX_NAME] = INDEX_NAME
