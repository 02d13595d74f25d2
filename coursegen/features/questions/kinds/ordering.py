"""`:::: order`: steps or code lines, written in their right order, that the page shows shuffled.

The lines are the block's first list (one step per item) or its first code fence (one line each; their
indentation counts, as in a Parsons problem). The shuffle is fixed by the question's id, so every build
gives the same page. Without JavaScript the learner reads the shuffled lines and, in the `<details>`, the
right order; review/order.js makes the lines movable by pointer, touch and keyboard and checks them.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from types import MappingProxyType

from markdown_it.common.utils import escapeHtml

from coursegen.features.questions.blocks import answer_opening, children_at, closing, html
from coursegen.theme.messages import say, texts

ATTRS: Mapping[str, type] = MappingProxyType({})  # no attributes of its own (read-only: no module state)
LISTS = ("bullet_list_open", "ordered_list_open")
AFTER_PROMPT = (*LISTS, "fence")  # the prompt is what comes before the lines
MAX_LEVEL = 6
TAB = 4


def shuffled(count: int, seed: str) -> list[int]:
    """Return a fixed permutation of range(count) drawn from `seed`, never the identity when count > 1."""
    digest = lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest()
    order = sorted(range(count), key=lambda i: (digest(i), i))
    if order == list(range(count)):
        order = order[1:] + order[:1]  # a shuffle that happens to be right would give the answer away
    return order


def _lines_at(tokens, start: int, end: int) -> int:
    """Return the index of the block's list or fence of lines, or -1."""
    level = tokens[start].level + 1
    return next((i for i, t in children_at(tokens, start + 1, end, level) if t.type in AFTER_PROMPT), -1)


def code_lines(content: str) -> list[tuple[str, int]]:
    """Return a fence's non-blank lines with their indentation levels (the smallest indentation is one level)."""
    lines = [line.expandtabs(TAB).rstrip() for line in content.splitlines() if line.strip()]
    widths = [len(line) - len(line.lstrip()) for line in lines]
    unit = min((w for w in widths if w), default=TAB)
    return [(line.strip(), width // unit) for line, width in zip(lines, widths, strict=True)]


def check_order(tokens, start: int, end: int, report) -> bool:
    """Report a block with no lines or one line to order, misplaced parts and deep lines; return whether usable."""
    level = tokens[start].level + 1
    at = _lines_at(tokens, start, end)
    good = True
    for i, token in children_at(tokens, start + 1, end, level):
        if token.type.startswith("container_") and token.nesting == 1:
            if token.type != "container_explanation_open":
                name = token.type[len("container_") : -len("_open")]
                report(f"':::: order' takes '::: explanation', not '::: {name}'", "the right order is the list itself")
                good = False
            elif i < at:
                report("the '::: explanation' part must come after the lines to order")
                good = False
    if at < 0:
        report(
            "':::: order' question has no lines to order",
            "list the steps in their right order ('1. …'), or put code lines in a fence",
        )
        return False
    items = _items(tokens, at)
    if len(items) < 2:
        report(
            f"':::: order' question has {len(items)} line to order; it needs at least two",
            "add the lines that come before or after it",
        )
        return False
    deep = [text for text, depth in items if depth > MAX_LEVEL]
    if deep:
        report(f"line '{deep[0]}' is indented {MAX_LEVEL + 1} or more levels deep; at most {MAX_LEVEL} are shown")
        good = False
    nested = [text for text, depth in items if depth < 0]
    if nested:
        report(f"step '{nested[0]}' holds more than one paragraph or a list", "write each step as one line")
        good = False
    return good


def _items(tokens, at: int) -> list[tuple[str, int]]:
    """Return (text, level) per line: a fence's lines, or a list's items (level -1 marks an item of several blocks)."""
    if tokens[at].type == "fence":
        return code_lines(tokens[at].content)
    items = []
    for i, token in children_at(tokens, at + 1, closing(tokens, at), tokens[at].level + 1):
        if token.type == "list_item_open":
            blocks = [t for _, t in children_at(tokens, i + 1, closing(tokens, i), token.level + 1)]
            inline = next((t for t in tokens[i + 1 :] if t.type == "inline"), None)
            text = inline.content.split("\n")[0] if inline is not None else ""
            items.append((text, 0 if len(blocks) == 2 and blocks[0].type == "paragraph_open" else -1))
    return items


def reshape_order(tokens, start: int, end: int, question, env: dict) -> None:
    """Put the shuffled lines after the prompt and the right order (the author's list or fence) in the answer."""
    messages = texts(env)
    at = _lines_at(tokens, start, end)
    code = tokens[at].type == "fence"
    lines = _shuffled_items(tokens, at, code)
    order = shuffled(len(lines), question.id)
    kind = "code" if code else "steps"
    label = escapeHtml(say(messages, "order.lines_label"))
    shown = [html(f'<ul class="order-items order-{kind}" data-order-items aria-label="{label}">\n')]
    for index in order:
        shown += lines[index]
    shown.append(html("</ul>\n" + answer_opening(say(messages, "order.answers"))))
    if not code:  # the right order is a numbered list, whatever list the author wrote
        close = closing(tokens, at)
        for token in (tokens[at], tokens[close]):
            token.type = token.type.replace("bullet_list", "ordered_list")
            token.tag = "ol"
        tokens[at].attrSet("class", "order-key")
    tokens[at:at] = [html("</div>\n"), *shown]
    tokens.insert(closing(tokens, start), html("</div>\n</details>\n"))


def _shuffled_items(tokens, at: int, code: bool) -> list[list]:
    """Return, per line in the right order, the tokens of its `<li>` in the shuffled list."""
    if code:
        return [
            [
                html(
                    f'<li class="order-item" data-line="{n}" data-indent="{level}">'
                    f"<code>{escapeHtml(text)}</code></li>\n"
                )
            ]
            for n, (text, level) in enumerate(code_lines(tokens[at].content))
        ]
    items: list[list] = []
    for i, token in children_at(tokens, at + 1, closing(tokens, at), tokens[at].level + 1):
        if token.type == "list_item_open":
            inline = copy.deepcopy(next(t for t in tokens[i + 1 :] if t.type == "inline"))
            items.append([html(f'<li class="order-item" data-line="{len(items)}">'), inline, html("</li>\n")])
    return items
