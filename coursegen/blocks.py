"""Small built-in blocks: callouts (`::: note`, `::: caveat`, `::: key`) and ASCII diagrams.

A diagram is a fenced `text` block; its exact spacing is kept and it scrolls sideways on
narrow screens. Give it `{caption: …, alt: …}` to make it an accessible figure.
"""
from __future__ import annotations

from markdown_it.common.utils import escapeHtml

from .markdown import parse_attrs, register_block, register_fence, split_info

CALLOUTS = {"note": "Note", "caveat": "Caveat", "key": "Key idea", "aside": "Aside"}
DIAGRAM_ATTRS = {"caption": str, "alt": str}


def install(md) -> None:
    """Register the callout blocks and the `text` diagram fence."""
    for name in CALLOUTS:
        register_block(md, name, _render_callout)
    register_fence(md, "text", render_diagram)


def _render_callout(self, tokens, idx, options, env):
    token = tokens[idx]
    if token.nesting == -1:
        return "</aside>\n"
    name, title = split_info(token.info)
    heading = escapeHtml(title or CALLOUTS[name])
    return (f'<aside class="callout callout-{name}" aria-label="{heading}">\n'
            f'<p class="callout-title">{heading}</p>\n')


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
