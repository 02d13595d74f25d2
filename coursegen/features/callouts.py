"""Small built-in blocks: callouts (`::: note`, `::: caveat`, `::: key`, and those course.yaml adds) and ASCII diagrams.

A diagram is a fenced `text` block; its exact spacing is kept and it scrolls sideways on
narrow screens. Give it `{caption: …, alt: …}` to make it an accessible figure.
"""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it.common.utils import escapeHtml

from coursegen.extensions import Extension
from coursegen.stages.parse import parse_attrs, register_block, register_fence, split_info
from coursegen.theme.messages import say, texts

# Built-in callout → the catalogue's key of its default title ("Note", "Key idea", … in the course's language).
CALLOUTS = {"note": "callout.note", "caveat": "callout.caveat", "key": "callout.key", "aside": "callout.aside"}
DIAGRAM_ATTRS = {"caption": str, "alt": str}


def install(md) -> None:
    """Register the callout blocks and the `text` diagram fence."""
    for name, key in CALLOUTS.items():
        register_block(md, name, _callout(key=key))
    register_fence(md, "text", render_diagram)


@dataclass(frozen=True)
class ExtraCallouts(Extension):
    """course.yaml's `callouts:` as an extension: one more `::: name` block per (name, default title)."""

    callouts: tuple[tuple[str, str], ...]
    name = "extra_callouts"

    def install(self, md) -> None:
        for name, title in self.callouts:
            if name not in md.block_names:  # a built-in name keeps its own block
                register_block(md, name, _callout(title))


def _callout(default_title: str = "", key: str = ""):
    """Return the renderer of one callout kind: an <aside> titled by the text after its name (as the author
    wrote it), or by default: `default_title` (course.yaml's callouts:), else the catalogue's text for `key`."""

    def render(self, tokens, idx, options, env):
        token = tokens[idx]
        if token.nesting == -1:
            return "</aside>\n"
        name, title = split_info(token.info)
        return callout_open(name, title or default_title or say(texts(env), key))

    return render


def callout_open(kind: str, title: str, classes: str = "") -> str:
    """Return the opening of a callout of `kind` titled `title` (plain text): MyST's admonitions share it."""
    heading = escapeHtml(title)
    more = f" {escapeHtml(classes)}" if classes else ""
    return (
        f'<aside class="callout callout-{kind}{more}" aria-label="{heading}">\n<p class="callout-title">{heading}</p>\n'
    )


def render_diagram(token, env) -> str:
    """Return a diagram as a scrollable <pre>, wrapped in a captioned figure when it has one."""
    _, rest = split_info(token.info)
    line = token.map[0] + 1 if token.map else 1
    attrs = parse_attrs(rest, env, line, DIAGRAM_ATTRS)
    body = escapeHtml(token.content.rstrip("\n"))
    alt = attrs.get("alt", "")
    label = f' role="img" aria-label="{escapeHtml(alt)}"' if alt else ""
    pre = f'<pre class="diagram" tabindex="0"{label}>{body}</pre>'
    if not attrs.get("caption"):
        return pre + "\n"
    caption = escapeHtml(attrs["caption"])
    return f'<figure class="diagram-figure">\n{pre}\n<figcaption>{caption}</figcaption>\n</figure>\n'
