"""The MyST feature's parser set-up: directive fences, include, the checks and warnings, the render rules."""

from __future__ import annotations

from coursegen.features.myst import admonitions, fences, foreign, include, tabs, title


def install(md) -> None:
    """Register the directive rule, the include and check rules, and how admonitions and tabs render."""
    fences.install(md)
    md.core.ruler.after("normalize", "myst_include", include.include_rule)
    md.core.ruler.after("block", "myst_title", title.title_rule)
    md.core.ruler.push("myst_checks", checks_rule)
    md.add_render_rule("myst_admonition_open", admonitions.render_open)
    md.add_render_rule("myst_admonition_close", admonitions.render_close)
    md.add_render_rule("myst_tab_set_open", tabs.render_set_open)
    md.add_render_rule("myst_tab_set_close", tabs.render_set_close)
    md.add_render_rule("myst_tab_item_open", tabs.render_item_open)
    md.add_render_rule("myst_tab_item_close", tabs.render_item_close)
    md.add_render_rule("myst_include", lambda self, tokens, idx, options, env: "")  # one with a problem


def checks_rule(state) -> None:
    """Core rule: check each admonition and tab, then warn about what other tools' authors type."""
    for index, token in enumerate(state.tokens if state.env.get("myst_blocks") else ()):
        if token.type == "myst_admonition_open":
            admonitions.check(token.meta["directive"], state.env)
        elif token.type in ("myst_tab_set_open", "myst_tab_item_open"):
            tabs.check(state.tokens, index, state.env)
    foreign.foreign_rule(state)
