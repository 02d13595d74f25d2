"""MyST's `{tab-set}` of `{tab-item} Label` blocks: tabs that work without JavaScript.

The page holds every tab's label and content, one after the other: that is what a reader without
JavaScript, a search engine and paper see. The theme's tabs.js turns each set into the WAI-ARIA
tabs pattern (a tablist of buttons, arrow keys, Home and End) when it runs.
"""

from __future__ import annotations

from markdown_it.common.utils import escapeHtml

SET_OPTIONS: tuple[str, ...] = ()
ITEM_OPTIONS = ("selected",)


def check(tokens, index: int, env: dict) -> None:
    """Report a tab-set holding anything but tab-items (or none), a tab-item outside one, a missing label."""
    problems, path = env["problems"], env["path"]
    token = tokens[index]
    directive = token.meta["directive"]
    allowed = ITEM_OPTIONS if token.type == "myst_tab_item_open" else SET_OPTIONS
    for key, (_, line) in directive.options.items():
        if key not in allowed:
            hint = "its one option is :selected:" if allowed else "it takes no options"
            problems.warning(path, line, f"unknown option ':{key}:' of '{{{directive.name}}}'", hint)
    if token.type == "myst_tab_item_open":
        if not directive.argument:
            problems.error(path, directive.line, "'{tab-item}' needs a label", "write ```{tab-item} Python")
        parent = _parent(tokens, index)
        if parent is None or parent.type != "myst_tab_set_open":
            problems.error(
                path, directive.line, "'{tab-item}' outside a '{tab-set}'", "put the tab-items inside a ````{tab-set}"
            )
        return
    children = [t for t in _children(tokens, index) if t.nesting != -1]
    if not children:
        problems.error(path, directive.line, "'{tab-set}' holds no '{tab-item}'", "add ```{tab-item} Label blocks")
    for child in children:
        if child.type != "myst_tab_item_open":
            line = child.map[0] + 1 if child.map else directive.line
            problems.error(
                path,
                line,
                "only '{tab-item}' blocks go inside a '{tab-set}'",
                "start each tab with ```{tab-item} Label (give the tab-set a longer fence than its items)",
            )


def _children(tokens, index: int):
    """Yield the tokens one level inside the container opened at `index`."""
    level = tokens[index].level
    for token in tokens[index + 1 :]:
        if token.level == level:
            return
        if token.level == level + 1:
            yield token


def _parent(tokens, index: int):
    """Return the open token of the block that holds tokens[index], or None at the top."""
    level = tokens[index].level
    for token in reversed(tokens[:index]):
        if token.level < level and token.nesting == 1:
            return token
    return None


def render_set_open(self, tokens, idx, options, env) -> str:
    """Return a tab set's opening."""
    return '<div class="tab-set" data-tab-set>\n'


def render_set_close(self, tokens, idx, options, env) -> str:
    """Return a tab set's end."""
    return "</div>\n"


def render_item_open(self, tokens, idx, options, env) -> str:
    """Return a tab's opening: its label, shown above its content until tabs.js makes it a tab."""
    directive = tokens[idx].meta["directive"]
    selected = " data-tab-selected" if "selected" in directive.options else ""
    label = escapeHtml(directive.argument)
    return (
        f'<div class="tab-item" data-tab-item{selected}>\n<p class="tab-label" data-tab-label>{label}</p>\n'
        '<div class="tab-panel" data-tab-panel>\n'
    )


def render_item_close(self, tokens, idx, options, env) -> str:
    """Return a tab's end."""
    return "</div>\n</div>\n"
