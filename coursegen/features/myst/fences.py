"""The block rule for MyST directives: ```` ```{name} argument ```` and `:::{name} argument` fences.

Directives whose body is Markdown (admonitions, tabs, include) become open and close tokens with the
body tokenized in place, so nesting works and every line keeps its number in the page. A colon fence
of any other directive becomes a plain fence token, as a backtick one is, for the features that
render fences and for the unknown-directive warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from coursegen.features.myst.admonitions import KINDS

OPENING = re.compile(r"^(`{3,}|~{3,}|:{3,})[ \t]*\{([A-Za-z][A-Za-z0-9_:.-]*)\}[ \t]*(.*?)[ \t]*$")
OPTION = re.compile(r"^:([A-Za-z][A-Za-z0-9_-]*):(?:[ \t]+(.*?))?[ \t]*$")
CONTAINERS = {**{name: "admonition" for name in KINDS}, "tab-set": "tab_set", "tab-item": "tab_item"}
INCLUDE = "include"
FENCE_CHARS = ("`", "~", ":")


@dataclass
class Directive:
    """One directive as its block rule read it (kept in its open token's `meta`)."""

    name: str
    argument: str
    line: int  # 1-based line of its opening fence
    options: dict[str, tuple[str, int]] = field(default_factory=dict)  # key → (value, line)


def install(md) -> None:
    """Add the directive rule before the fence rule (a colon fence would otherwise be a paragraph)."""
    md.block.ruler.before(
        "fence", "myst_directives", directive_rule, {"alt": ["paragraph", "reference", "blockquote", "list"]}
    )


def directive_rule(state, start: int, end: int, silent: bool) -> bool:
    """Block rule: read a directive fence (see the module's docstring)."""
    begin = state.bMarks[start] + state.tShift[start]
    if state.src[begin : begin + 1] not in FENCE_CHARS or state.sCount[start] - state.blkIndent >= 4:
        return False  # tried at the start of most blocks: the cheapest test first
    found = OPENING.match(state.src[begin : state.eMarks[start]])
    if not found:
        return False
    marker, name, argument = found.groups()
    if marker[0] == "`" and "`" in argument:  # CommonMark: no backtick in a backtick fence's info
        return False
    if marker[0] != ":" and name not in CONTAINERS and name != INCLUDE:
        return False  # the fence rule takes it: math, code cells, figures, unknown ones (warned later)
    if silent:
        return True
    close, closed = _closing_line(state, start, end, marker)
    if not closed:
        state.env["problems"].error(
            state.env["path"],
            start + 1,
            f"directive '{{{name}}}' is never closed",
            f"end it with a line of {marker}",
        )
    directive = Directive(name, argument, start + 1)
    body = _read_options(state, start + 1, close, directive)
    if name in CONTAINERS:
        _push_container(state, CONTAINERS[name], directive, body, close, marker)
    else:
        token = state.push("myst_include" if name == INCLUDE else "fence", "code", 0)
        token.info = f"{{{name}}} {argument}".rstrip()
        token.markup = marker
        token.content = state.getLines(start + 1, close, state.sCount[start], True)
        token.map = [start, close + 1 if closed else close]
        token.meta["directive"] = directive
    state.line = close + 1 if closed else close
    return True


def _closing_line(state, start: int, end: int, marker: str) -> tuple[int, bool]:
    """Return the line that closes the fence opened at `start` (or where its container ends) and whether one does."""
    line = start + 1
    while line < end:
        begin, finish = state.bMarks[line] + state.tShift[line], state.eMarks[line]
        if begin < finish and state.sCount[line] < state.blkIndent:
            return line, False  # the list item or quote holding it ended
        text = state.src[begin:finish].rstrip()
        if state.sCount[line] - state.blkIndent < 4 and len(text) >= len(marker) and text == marker[0] * len(text):
            return line, True
        line += 1
    return end, False


def _read_options(state, line: int, close: int, directive: Directive) -> int:
    """Read the `:key: value` lines at the top of a body into `directive.options`; return the body's first line."""
    while line < close:
        found = OPTION.match(state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]])
        if not found:
            break
        directive.options[found.group(1)] = ((found.group(2) or "").strip(), line + 1)
        line += 1
    return line


def _push_container(state, kind: str, directive: Directive, body: int, close: int, marker: str) -> None:
    """Push `myst_<kind>_open`, the body's tokens (tokenized in place, so lines stay the page's), `…_close`."""
    opening = state.push(f"myst_{kind}_open", "div", 1)
    opening.markup, opening.info, opening.map = marker, directive.name, [directive.line - 1, close]
    opening.meta["directive"] = directive
    state.env["myst_blocks"] = True  # the page has some: the check rule looks at its tokens
    old_parent, old_max = state.parentType, state.lineMax
    state.parentType, state.lineMax = "myst", close
    state.md.block.tokenize(state, body, close)
    state.parentType, state.lineMax = old_parent, old_max
    closing = state.push(f"myst_{kind}_close", "div", -1)
    closing.markup = marker
