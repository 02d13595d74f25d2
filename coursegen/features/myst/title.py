"""A Jupyter Book page's own title: MyST takes a page's title from its first `# Heading`, coursegen from the front
matter's `title:`, which the page's header shows as its h1. A source written for both (front matter and the same
`# Heading` first) would show the title twice, so that leading h1 is dropped when it repeats the title."""

from __future__ import annotations

from coursegen.yamlio import YamlError, load_yaml


def title_rule(state) -> None:
    """Core rule (after block): drop a leading `# Title` that is the front matter's title, word for word."""
    tokens = state.tokens
    if len(tokens) < 4 or tokens[0].type != "front_matter":
        return
    opening, inline = tokens[1], tokens[2]
    if opening.type != "heading_open" or opening.tag != "h1" or inline.type != "inline":
        return
    title = _title(tokens[0].content)
    if title is not None and " ".join(inline.content.split()) == " ".join(title.split()):
        del tokens[1:4]


def _title(front_matter: str) -> str | None:
    """Return the front matter's title, or None when it has none or cannot be read (the parse stage says why)."""
    try:
        data = load_yaml(front_matter)
    except YamlError:
        return None
    title = data.get("title") if isinstance(data, dict) else None
    return str(title) if isinstance(title, str | int | float) else None
