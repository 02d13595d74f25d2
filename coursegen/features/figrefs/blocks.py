"""MyST's figure and table directives, turned into markdown-it tokens before inline parsing.

A ```` ```{figure} path ```` fence becomes a <figure>: an image (a Markdown image token, so the
parse stage checks and copies its file as any image's) and a <figcaption> made of the fence's
content, parsed as Markdown (its first paragraph is the caption, the rest a legend). A
```` ```{table} Caption ```` fence wraps one Markdown table and gives it a <caption>; a
```` ```{list-table} Caption ```` fence makes a table of a list of rows, each a list of cells.
Each records a `Label` for numbering (extension.py); nothing here knows a number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from markdown_it.token import Token

from coursegen.errors import choices_hint
from coursegen.stages.directive_options import Directive, read_directive

FIGURE, TABLE, LIST_TABLE = "figure", "table", "list-table"
DIRECTIVES = {FIGURE: ("name", "alt", "width"), TABLE: ("name",), LIST_TABLE: ("name", "header-rows")}
WIDTH = re.compile(r"^(\d{1,4})(px|%)?$")
VALID_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
LABEL_HINT = "a label is letters, digits, '-', '_', ':' or '.', e.g. fig-basins"


@dataclass
class Label:
    """A label found in the page: what it names, where, and the tokens that will show its number."""

    label: str
    kind: str  # "figure", "table" or "section"
    line: int
    opener: Token  # figure_open, table_open or heading_open: carries the id
    caption: Token | None = None  # the inline token whose text is the title
    number: str = ""
    extra: dict = field(default_factory=dict)


def directive_name(token: Token) -> str | None:
    """Return the figure or table directive a fence token opens, or None."""
    head = token.info.strip().split(maxsplit=1)[:1]
    name = head[0][1:-1] if head and head[0].startswith("{") and head[0].endswith("}") else ""
    return name if name in DIRECTIVES else None


def expand(state, token: Token, name: str, labels: list[Label]) -> list[Token]:
    """Return the tokens that replace a directive fence (reporting its problems), adding its label."""
    line = token.map[0] + 1 if token.map else 1
    directive = read_directive(token.info, token.content, line)
    report = _reporter(state.env)
    for where, message, hint in directive.problems:
        report(where, message, hint)
    for key, option in directive.options.items():
        if key not in DIRECTIVES[name]:
            options = [f":{known}:" for known in DIRECTIVES[name]]
            report(
                option.line,
                f"unknown option ':{key}:' of a {{{name}}} fence",
                choices_hint(f":{key}:", options, "options"),
            )
    body = _parse_body(state, directive)
    if name == FIGURE:
        return _figure(state, directive, body, labels, report)
    return _table(directive, body, labels, report, name == LIST_TABLE)


def _reporter(env: dict):
    def report(line: int, message: str, hint: str = "") -> None:
        env["problems"].error(env["path"], line, message, hint)

    return report


def _parse_body(state, directive: Directive) -> list[Token]:
    """Return the directive's content parsed as Markdown blocks, mapped to the page's lines."""
    found: list[Token] = []
    if directive.body.strip():
        state.md.block.parse(directive.body, state.md, state.env, found)
    for item in found:
        if item.map:
            item.map = [item.map[0] + directive.body_line - 1, item.map[1] + directive.body_line - 1]
    return found


def _label(directive: Directive, kind: str, opener: Token, labels: list[Label], report) -> Label | None:
    """Record the directive's `:name:` as a label (None when it has none or a malformed one)."""
    option = directive.options.get("name")
    if option is None or not option.value:
        return None
    if not VALID_LABEL.match(option.value):
        report(option.line, f"{kind} label '{option.value}' is not a valid name", LABEL_HINT)
        return None
    label = Label(option.value, kind, option.line, opener)
    labels.append(label)
    return label


def _block(kind: str, tag: str, nesting: Literal[-1, 0, 1], line: int) -> Token:
    token = Token(f"figrefs_{kind}", tag, nesting)
    token.block, token.map = True, [line - 1, line]
    return token


def _figure(state, directive: Directive, body: list[Token], labels: list[Label], report) -> list[Token]:
    """Return the tokens of a figure: <figure>, the image, <figcaption> with the content."""
    opener = _block("figure_open", "figure", 1, directive.line)
    label = _label(directive, FIGURE, opener, labels, report)
    if not directive.argument:
        report(
            directive.line,
            "a {figure} fence names no image",
            "write the image's path after it: ```{figure} images/plot.svg",
        )
    if "alt" not in directive.options:
        state.env["problems"].warning(
            state.env["path"],
            directive.line,
            "figure without :alt: text",
            "describe the image for those who cannot see it: :alt: …",
        )
    image = Token("inline", "", 0)
    alt = directive.options["alt"].value if "alt" in directive.options else ""
    image.content = "![" + re.sub(r"([\\\[\]])", r"\\\1", alt) + "](<" + directive.argument + ">)"
    image.map, image.children = [directive.line - 1, directive.line], []
    opener.meta["width"] = _width(directive, report)
    opener.meta["image"] = image
    tokens = [opener, image] if directive.argument else [opener]
    caption = _first_paragraph(body)
    if caption is not None:
        if label is not None:
            label.caption = body[caption + 1]
        body[caption].hidden = body[caption + 2].hidden = True
    elif label is not None:
        report(
            directive.line,
            f"figure '{label.label}' has no caption to number",
            "write the caption as the fence's content",
        )
    opener.meta["label"] = label
    if body:
        tokens += [_block("caption_open", "figcaption", 1, directive.body_line), *body]
        tokens[-len(body) - 1].meta["label"] = label
        tokens.append(_block("caption_close", "figcaption", -1, directive.body_line))
    return [*tokens, _block("figure_close", "figure", -1, directive.line)]


def _first_paragraph(body: list[Token]) -> int | None:
    return 0 if len(body) >= 3 and body[0].type == "paragraph_open" else None


def _width(directive: Directive, report) -> tuple[str, str] | None:
    """Return (number, unit) of `:width:`: pixels (`320` or `320px`) or a percentage in steps of 5."""
    option = directive.options.get("width")
    if option is None:
        return None
    found = WIDTH.match(option.value.strip())
    if found and found.group(2) == "%" and (int(found.group(1)) % 5 or not 5 <= int(found.group(1)) <= 100):
        found = None
    if found is None:
        report(
            option.line,
            f"figure width '{option.value}' is not a size the figure can take",
            "write pixels (320px) or a percentage in steps of 5 (60%)",
        )
        return None
    return found.group(1), found.group(2) or "px"


def _table(directive: Directive, body: list[Token], labels: list[Label], report, from_list: bool) -> list[Token]:
    """Return a table's tokens with a <caption> (the fence's argument) after its opening tag."""
    kind = "{list-table}" if from_list else "{table}"
    if from_list:
        body = _list_table(directive, body, report)
    elif [t.type for t in body if t.level == 0 and t.nesting >= 0 and t.block] != ["table_open"]:
        report(
            directive.line,
            f"a {kind} fence holds one Markdown table and nothing else",
            "put the table's rows between the fence's lines",
        )
        body = []
    if not body:
        return []
    opener = body[0]
    label = _label(directive, TABLE, opener, labels, report)
    caption = Token("inline", "", 0)
    caption.content, caption.map, caption.children = directive.argument, [directive.line - 1, directive.line], []
    if label is not None:
        label.caption = caption
        if not directive.argument:
            report(directive.line, f"table '{label.label}' has no caption to number", f"write the caption after {kind}")
    if not directive.argument:
        return body
    open_caption = _block("caption_open", "caption", 1, directive.line)
    open_caption.meta["label"] = label
    return [opener, open_caption, caption, _block("caption_close", "caption", -1, directive.line), *body[1:]]


def _list_table(directive: Directive, body: list[Token], report) -> list[Token]:
    """Return table tokens for a list of rows, each a list of cells; `:header-rows:` rows are headers."""
    option = directive.options.get("header-rows")
    headers = 0
    if option is not None:
        if not option.value.isdigit():
            report(option.line, f":header-rows: '{option.value}' is not a number of rows", "write :header-rows: 1")
        else:
            headers = int(option.value)
    rows = _rows(body)
    if rows is None:
        report(
            directive.line,
            "a {list-table} holds one list of rows, each a list of cells",
            "write '* - a' then '  - b' for a row of two cells",
        )
        return []
    widths = {len(cells) for _, cells in rows}
    if len(widths) > 1:
        most = max(widths, key=lambda width: sum(1 for _, cells in rows if len(cells) == width))
        for row_line, cells in rows:
            if len(cells) != most:
                report(
                    row_line,
                    f"this row of the {{list-table}} has {len(cells)} cells; the others have {most}",
                    "give every row the same number of cells",
                )
        return []
    out = [_block("table_open", "table", 1, directive.line)]
    for part, tag, chosen in (("thead", "th", rows[:headers]), ("tbody", "td", rows[headers:])):
        if chosen:
            out.append(_block(f"{part}_open", part, 1, chosen[0][0]))
        for row_line, cells in chosen:
            out.append(_block("tr_open", "tr", 1, row_line))
            for cell in cells:
                out += [_block("cell_open", tag, 1, row_line), *cell, _block("cell_close", tag, -1, row_line)]
            out.append(_block("tr_close", "tr", -1, row_line))
        if chosen:
            out.append(_block(f"{part}_close", part, -1, chosen[-1][0]))
    return [*out, _block("table_close", "table", -1, directive.line)]


def _rows(body: list[Token]) -> list[tuple[int, list[list[Token]]]] | None:
    """Return (line, cells) per row of a list of lists, each cell its tokens, or None for another shape."""
    if not body or body[0].type != "bullet_list_open" or body[-1].type != "bullet_list_close":
        return None
    if any(t.level == 0 for t in body[1:-1]):
        return None  # more than one list
    rows, items = [], _items(body[1:-1], 1)
    for item in items:
        if not item or item[0].type != "bullet_list_open" or item[-1].type != "bullet_list_close":
            return None
        if any(t.level == 2 for t in item[1:-1]):  # a second list, or text beside the cells
            return None
        cells = _items(item[1:-1], 3)
        line = (item[0].map[0] + 1) if item[0].map else 1
        rows.append(
            (
                line,
                [
                    [t for t in cell if t.type not in ("paragraph_open", "paragraph_close") or not t.hidden]
                    for cell in cells
                ],
            )
        )
    return rows


def _items(tokens: list[Token], level: int) -> list[list[Token]]:
    """Return the contents (between open and close) of the list items at `level`."""
    items: list[list[Token]] = []
    for token in tokens:
        if token.type == "list_item_open" and token.level == level:
            items.append([])
        elif token.type == "list_item_close" and token.level == level:
            continue
        elif items:
            items[-1].append(token)
    return items
