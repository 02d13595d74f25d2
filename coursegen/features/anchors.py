"""Author checks that belong to no single feature: duplicate heading anchors.

The anchors plugin keeps ids unique by renaming a repeated one (`details`, then `details-1`),
silently. A link or a question's `revisit` written for the second heading would then land on
the first, so a repeat is reported as a warning (an error under `--strict`) at its line.
"""

from __future__ import annotations

from coursegen.stages.parse import heading_slug

HEADING_LEVELS = (2, 3, 4)  # the levels the anchors plugin gives ids to


def install(md) -> None:
    """Add the duplicate-anchor check after the anchors plugin has named every heading."""
    md.core.ruler.push("duplicate_anchors", check_duplicate_anchors)


def check_duplicate_anchors(state) -> None:
    """Warn about each heading whose natural anchor an earlier heading of the page already has."""
    first_line: dict[str, int] = {}
    tokens = state.tokens
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or int(token.tag[1]) not in HEADING_LEVELS:
            continue
        line = token.map[0] + 1 if token.map else 1
        title = "".join(c.content for c in tokens[index + 1].children or () if c.type in ("text", "code_inline"))
        natural = heading_slug(title)
        if natural in first_line and token.attrGet("id") != natural:
            state.env["problems"].warning(
                state.env["path"],
                line,
                f"heading '{title.strip()}' repeats the anchor '#{natural}' "
                f"of the heading at line {first_line[natural]}",
                f"links reach only the first; this one becomes '#{token.attrGet('id')}'. Reword one of the headings",
            )
        first_line.setdefault(natural, line)
