"""The one registry of MyST directive names (```` ```{name} ````) that coursegen understands.

A fence or colon fence whose name is not here, and whose name no feature registered as a fence
handler, is a located warning that names the coursegen way (features/myst/foreign.py): never a
silent code block. A feature that reads a directive either registers a fence handler for
`{name}` (parse.register_fence) or adds its name to `KNOWN`, one name a line (names read by block
rules rather than fence handlers, such as the MyST feature's own admonitions and tabs). A frozen set:
the build process keeps no mutable module global.
"""

from __future__ import annotations

KNOWN = frozenset(
    {
        # MyST's admonitions, tabs and include (features/myst/)
        "admonition",
        "note",
        "warning",
        "tip",
        "hint",
        "important",
        "caution",
        "attention",
        "danger",
        "error",
        "seealso",
        "tab-set",
        "tab-item",
        "include",
        # other features' directives (math, code cells; figures and tables)
        "math",
        "code-cell",
        "figure",
        "list-table",
        "table",
        "bibliography",  # where a page's References go (features/citations/)
    }
)


def is_known(name: str, fence_handlers=()) -> bool:
    """Return whether `name` is a directive coursegen reads: registered here, or rendered by a fence handler."""
    return name in KNOWN or f"{{{name}}}" in fence_handlers
