"""A Jupyter Book page's own title: MyST takes a page's title from its first `# Heading`, coursegen from the front
matter's `title:`, which the page's header shows as its h1.

- A page with no front matter, or front matter without a `title:`, that starts with `# Heading` (as a Jupyter Book
  page or a notebook straight from Jupyter does) takes its title from that heading, which then leaves the body: the
  header shows it. The parse stage reads it from `env["heading_title"]` (stages/parse.py, `_front_matter`).
- A source written for both (a title in the front matter and the same `# Heading` first) would show the title
  twice, so that leading h1 is dropped when it repeats the title. One of other words stays, as the author wrote it.
"""

from __future__ import annotations

import re

from coursegen.yamlio import YamlError, load_yaml

LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
MARKS = re.compile(r"(?<!\\)[*`$]|(?<![\w\\])_+|_+(?!\w)")  # an underscore inside a word is a letter

NO_TITLE = object()  # the front matter holds no title (not unreadable: then the parse stage says why)


def title_rule(state) -> None:
    """Core rule (after block): take or drop a leading `# Title` (see the module's docstring)."""
    tokens = state.tokens
    start = 1 if tokens and tokens[0].type == "front_matter" else 0
    if len(tokens) < start + 3:
        return
    opening, inline = tokens[start], tokens[start + 1]
    if opening.type != "heading_open" or opening.tag != "h1" or inline.type != "inline":
        return
    title = _title(tokens[0].content) if start else NO_TITLE
    if title is NO_TITLE:
        state.env["heading_title"] = _plain(inline.content)
        del tokens[start : start + 3]
    elif title is not None and " ".join(inline.content.split()) == " ".join(str(title).split()):
        del tokens[start : start + 3]


def _plain(markdown: str) -> str:
    """Return a heading's text without its Markdown marks (`*word*`, `` `code` ``, `[text](url)` → their text),
    as a front-matter title is written. (The inline rules have not run yet, and the course's own ones record
    links and citations: a title is not parsed twice for that.)"""
    text = LINK.sub(r"\1", markdown)
    text = MARKS.sub("", text)
    return " ".join(text.replace("\\", "").split())


def _title(front_matter: str):
    """Return the front matter's title, NO_TITLE when it has none, None when it cannot be read (the parse stage
    says why) or is not text."""
    try:
        data = load_yaml(front_matter)
    except YamlError:
        return None
    if data is None or (isinstance(data, dict) and "title" not in data):
        return NO_TITLE
    title = data.get("title") if isinstance(data, dict) else None
    return str(title) if isinstance(title, str | int | float) else None
