"""Inline roles, `` {name}`content` `` (mdit-py-plugins' myst_role syntax), for extensions.

An extension calls `register_role(md, name, handler)` in its `install`; a core rule then runs
every role of a page once, knowing its line and column, and stores the HTML the renderer prints.
A role nobody registered is an error at its place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from markdown_it.common.utils import escapeHtml

if TYPE_CHECKING:  # parse.py imports this module
    from coursegen.stages.parse import CourseParser

from coursegen.errors import choices_hint


def register_role(md: CourseParser, name: str, handler) -> None:
    """Render inline roles `` {name}`content` `` through `handler(token, env, line) -> html`.

    The handler runs in a core rule (so it knows the source line) and may record problems;
    roles whose name nobody registered are reported as errors.
    """
    if not hasattr(md, "role_handlers"):
        from mdit_py_plugins.myst_role import myst_role_plugin

        md.use(myst_role_plugin)
        md.role_handlers = {}
        md.add_render_rule("myst_role", lambda self, tokens, idx, options, env: tokens[idx].meta.get("html", ""))
        md.core.ruler.push("course_roles", _run_roles)
    md.role_handlers[name] = handler


def _run_roles(state) -> None:
    """Evaluate every inline role once, with its line (and column in `token.meta`), storing its HTML."""
    if "}`" not in state.src:  # no role on this page: skip the walk
        return
    handlers, lines = state.md.role_handlers, state.src.split("\n")
    for block in state.tokens:
        cursor = 0
        for token in block.children or ():
            if token.type != "myst_role":
                continue
            name = token.meta.get("name", "")
            found = block.content.find("{" + name + "}", cursor)
            cursor = max(found, 0) + 1
            before = block.content[: max(found, 0)]
            line = (block.map[0] + 1 if block.map else 1) + before.count("\n")
            nth = before[before.rfind("\n") + 1 :].count("{" + name + "}")  # roles of this name earlier on the line
            token.meta["col"] = _column(lines[line - 1] if line <= len(lines) else "", "{" + name + "}", nth)
            if name in handlers:
                token.meta["html"] = handlers[name](token, state.env, line)
            else:
                state.env["problems"].error(
                    state.env["path"],
                    line,
                    f"unknown role '{{{name}}}'",
                    choices_hint(name, handlers, "roles"),
                    col=token.meta["col"],
                )
                token.meta["html"] = f"<code>{escapeHtml(token.content)}</code>"


def _column(text: str, needle: str, nth: int) -> int:
    """Return the 1-based column of the nth (0-based) `needle` in a source line, or 0 if absent."""
    at = -1
    for _ in range(nth + 1):
        at = text.find(needle, at + 1)
        if at < 0:
            return 0
    return at + 1
