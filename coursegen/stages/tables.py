"""Markdown tables as the site can show them: column alignment as classes, roles cut by a cell's `|`.

markdown-it writes a column's alignment (`|---:|`) as `style="text-align:right"`, which the site's
Content-Security-Policy blocks (no inline styles): a core rule turns it into the class the theme
styles (`align-right`, style.css). A table splits its cells at every unescaped `|`, inside backticks
too (GFM's rule), so `` {calc}`x | .2f` `` in a cell is cut in two and shows as text: that is
reported at its line, with the escape that keeps it whole (`\\|`; split_role reads it as `|`).
"""

from __future__ import annotations

import re

ALIGN_STYLE = re.compile(r"text-align:(left|right|center)")
CELLS = ("th_open", "td_open")
ROLE_CUT = re.compile(r"\{([\w-]+)\}`[^`]*$")  # a role's opening backtick with no closing one in the cell


def install(md) -> None:
    """Add the core rules for tables to the parser `md`."""
    md.core.ruler.push("table_cells", _check_cells)


def _check_cells(state) -> None:
    """Make alignment a class and report roles a cell's `|` cut."""
    if "|" not in state.src:
        return
    previous = None
    for token in state.tokens:
        if token.type in CELLS:
            _align_by_class(token)
        elif token.type == "inline" and token.map and previous is not None and previous.type in CELLS:
            _report_cut_role(token, state.env)
        previous = token


def _align_by_class(token) -> None:
    style = token.attrs.pop("style", None)
    found = ALIGN_STYLE.fullmatch(str(style or ""))
    if found:
        token.attrJoin("class", f"align-{found.group(1)}")


def _report_cut_role(token, env: dict) -> None:
    found = ROLE_CUT.search(token.content)
    if found is None:
        return
    name = found.group(1)
    env["problems"].error(
        env["path"],
        token.map[0] + 1,
        f"the table cuts {{{name}}} at a '|': a '|' inside a role splits the cell",
        f"write '\\|' for each '|' inside the role in a table cell, as in {{{name}}}`EXPRESSION \\| .2f`",
    )
