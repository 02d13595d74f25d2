"""Numbered figures and tables, labelled sections, and the `{numref}` and `{ref}` roles (MyST's syntax).

```` ```{figure} path ````, ```` ```{table} Caption ```` and ```` ```{list-table} Caption ```` fences
with a `:name:` are numbered per lesson ("Figure 3.2": the unit's place in course.yaml, then the
figure's among the page's), as equations are (features/math/). `(label)=` on the line before a
heading, or `## Title {#label}`, labels a section. `` {numref}`label` `` shows "Figure 3.2" linked
to it (`` {numref}`Fig. %s <label>` `` its own text), `` {ref}`label` `` the caption or heading;
`` {numref}`03-newton.md#label` `` names another unit's, as a link does. Every label is checked:
an unknown one is an error at the reference, with a did-you-mean; a doubled one, at both places.

Two core rules: one before inline parsing turns the fences into tokens (blocks.py) and takes the
section labels off their lines; one after it numbers the labels, records them as the page's
targets (model.Target) and checks them, before the roles run. A reference to another page is a
placeholder filled after linking (stages/references.py), checked by `check` once every page is known.
"""

from __future__ import annotations

import posixpath
import re

from markdown_it.common.utils import escapeHtml

from coursegen.errors import Problems, did_you_mean
from coursegen.features.figrefs.blocks import LABEL_HINT, VALID_LABEL, Label, directive_name, expand
from coursegen.model import Link, Target
from coursegen.stages.references import placeholder, reference_link, reference_text, target_of
from coursegen.stages.roles import register_role
from coursegen.theme.messages import say, texts

SECTION_TARGET = re.compile(r"^\(([^()\s]+)\)=$")
HEADING_ID = re.compile(r"\s*\{#([^{}\s]+)\}\s*$")
CUSTOM_TEXT = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)
NAMES = {"figure": "figures.figure", "table": "figures.table"}  # a kind → its catalogue key
MARKERS = ("{figure}", "{table}", "{list-table}", ")=", "{#", "{numref}", "{ref}")


def install(md) -> None:
    """Register the directives' rules, the section labels and the {numref} and {ref} roles."""
    register_role(md, "numref", lambda token, env, line: render_reference(token, env, line, "numref"))
    register_role(md, "ref", lambda token, env, line: render_reference(token, env, line, "ref"))
    md.core.ruler.after("block", "figrefs_blocks", blocks_rule)
    md.core.ruler.before("course_roles", "figrefs_numbers", numbers_rule)
    md.add_render_rule("figrefs_figure_open", _render_figure_open)
    md.add_render_rule("figrefs_caption_open", _render_caption_open)


def prepare(root, config, problems: Problems) -> dict:
    """Return each unit's number by slug: the first part of its figures' and tables' numbers."""
    units = config.units if config is not None else ()
    return {"numbers": {unit.slug: number for number, unit in enumerate(units, 1) if unit.slug}}


# ---- before inline parsing: directives and section labels ----------------------------------------


def blocks_rule(state) -> None:
    """Replace figure and table fences by their tokens, and take section labels off their lines."""
    if not any(marker in state.src for marker in MARKERS[:5]):
        return
    labels: list[Label] = []
    out = []
    tokens = state.tokens
    for index, token in enumerate(tokens):
        if token.type == "fence" and (name := directive_name(token)):
            out += expand(state, token, name, labels)
        elif token.type == "heading_open":
            _heading_label(state, token, tokens[index + 1], labels)
            out.append(token)
        elif token.type == "inline" and index and tokens[index - 1].type == "paragraph_open":
            found = SECTION_TARGET.match(token.content.strip())
            if found is None:
                out.append(token)
                continue
            _section_target(state, token, found.group(1), tokens, index, labels)
            out.pop()  # the paragraph_open; its close is dropped below
            tokens[index + 1].meta["figrefs_drop"] = True
        elif not token.meta.get("figrefs_drop"):
            out.append(token)
    state.tokens[:] = out
    if labels:  # the page's own keys of env only where it has labels
        state.env["figrefs"] = labels


def _section_target(state, token, label: str, tokens, index: int, labels: list[Label]) -> None:
    """Give `(label)=`'s label to the heading after it (the next block), or report it stands alone."""
    line = token.map[0] + 1 if token.map else 1
    following = tokens[index + 2] if index + 2 < len(tokens) else None
    if following is None or following.type != "heading_open":
        state.env["problems"].error(
            state.env["path"],
            line,
            f"the label '({label})=' is not followed by a heading",
            "put it on the line just before a heading; a figure or a table takes :name: instead",
        )
        return
    _add_section(state, following, tokens[index + 3], label, line, labels)


def _heading_label(state, opener, inline, labels: list[Label]) -> None:
    """Take `{#label}` off the end of a heading's text and give the heading that id."""
    found = HEADING_ID.search(inline.content)
    if found is None or "{#" not in inline.content:
        return
    inline.content = inline.content[: found.start()]
    _add_section(state, opener, inline, found.group(1), opener.map[0] + 1 if opener.map else 1, labels)


def _add_section(state, opener, inline, label: str, line: int, labels: list[Label]) -> None:
    if not VALID_LABEL.match(label):
        state.env["problems"].error(state.env["path"], line, f"section label '{label}' is not a valid name", LABEL_HINT)
        return
    if opener.attrGet("id") and opener.attrGet("id") != label:  # '(a)=' and '{#b}' on one heading
        state.env["problems"].error(
            state.env["path"], line, f"one heading with two labels: {opener.attrGet('id')}, {label}", "keep one"
        )
        return
    opener.attrSet("id", label)
    labels.append(Label(label, "section", line, opener, inline))


# ---- after inline parsing: numbers, titles, checks ------------------------------------------------


def numbers_rule(state) -> None:
    """Number the page's figures and tables, record its targets and check its labels for doubles."""
    env = state.env
    labels = env.get("figrefs", [])
    if not labels:
        return
    ctx = env.get("ctx")
    unit = ctx.extra.get("figrefs", {}).get("numbers", {}).get(env["source"].slug) if ctx is not None else None
    counts = {"figure": 0, "table": 0}
    targets: dict[str, Target] = {}
    first: dict[str, int] = {}
    for label in labels:
        if label.label in first:
            _doubled(env, label.label, first[label.label], label.line)
            continue
        first[label.label] = label.line
        name = ""
        if label.kind in counts:
            counts[label.kind] += 1
            label.number = f"{unit}.{counts[label.kind]}" if unit else str(counts[label.kind])
            name = say(texts(env), NAMES[label.kind], number=label.number)
            label.opener.attrSet("id", label.label)
        targets[label.label] = Target(label.kind, label.number, name, _plain(label.caption), label.label, label.line)
    _check_heading_clash(state, labels)
    _set_widths(state.tokens)
    env["figrefs_targets"] = targets
    env["derived"].setdefault("targets", {}).update(targets)


def _doubled(env: dict, label: str, first: int, again: int) -> None:
    problems, path = env["problems"], env["path"]
    problems.error(path, first, f"label '{label}' is defined twice (again at line {again})", "rename one of them")
    problems.error(path, again, f"label '{label}' is defined twice (first at line {first})", "rename one of them")


def _check_heading_clash(state, labels: list[Label]) -> None:
    """Report a figure or table label that a heading's own anchor already is (two elements, one id)."""
    named = {label.label: label for label in labels if label.kind != "section"}
    for token in state.tokens:
        if token.type == "heading_open" and token.attrGet("id") in named:
            label = named[token.attrGet("id")]
            state.env["problems"].error(
                state.env["path"],
                label.line,
                f"label '{label.label}' is also the anchor of the heading at line {token.map[0] + 1}",
                f"rename the {label.kind}'s label, e.g. {label.kind[:3]}-{label.label}",
            )


def _set_widths(tokens) -> None:
    """Give each figure's image its `:width:`: pixels as its width, a percentage as a data attribute
    (style.css sizes it: the pages' Content-Security-Policy blocks style attributes)."""
    for token in tokens:
        if token.type == "figrefs_figure_open" and token.meta.get("width"):
            image = next((c for c in token.meta["image"].children or () if c.type == "image"), None)
            number, unit = token.meta["width"]
            if image is not None:
                image.attrSet("width" if unit == "px" else "data-width", number)


def _plain(inline) -> str:
    """Return an inline token's text without markup (a caption's or heading's title)."""
    if inline is None:
        return ""
    return " ".join(
        "".join(c.content for c in inline.children or () if c.type in ("text", "code_inline", "math_inline")).split()
    )


# ---- rendering ------------------------------------------------------------------------------------


def _render_figure_open(self, tokens, idx, options, env) -> str:
    label = tokens[idx].meta.get("label")
    ident = f' id="{escapeHtml(label.label)}"' if label is not None else ""
    return f'<figure class="figure{" numbered" if label is not None else ""}"{ident}>\n'


def _render_caption_open(self, tokens, idx, options, env) -> str:
    token, label = tokens[idx], tokens[idx].meta.get("label")
    opening = f"<{token.tag}>"
    if label is None or not label.number:
        return opening
    name = say(texts(env), NAMES[label.kind], number=label.number)
    return f'{opening}<span class="caption-number">{escapeHtml(name)}</span> '


# ---- the roles -----------------------------------------------------------------------------------


def render_reference(token, env: dict, line: int, form: str) -> str:
    """`` {numref}`label` `` or `` {ref}`label` `` (`text <label>` for the author's own text): a link to
    the label of this page, or to one of another unit's (`03-newton.md#label`), filled after linking."""
    found = CUSTOM_TEXT.match(token.content.strip())
    custom, target = (found.group(1).strip(), found.group(2).strip()) if found else ("", token.content.strip())
    col = token.meta.get("col", 0)
    if "#" in target:
        return _elsewhere(target, custom, form, env, line, col)
    targets = env.get("figrefs_targets", {})
    if target not in targets:
        env["problems"].error(
            env["path"],
            line,
            f"{{{form}}} '{target}' names no figure, table or section label of this page",
            did_you_mean(target, targets)
            or "name one with :name: (a figure, a table) or (label)= (a section), or another page's: 03-x.md#label",
            col=col,
        )
        return f"<code>{escapeHtml(target)}</code>"
    found_target = targets[target]
    if form == "numref" and not found_target.number:
        _unnumbered(env, line, col, target)
        return f"<code>{escapeHtml(target)}</code>"
    return reference_link("#" + target, form, reference_text(found_target, form, custom))


def _unnumbered(env: dict, line: int, col: int, target: str) -> None:
    env["problems"].error(
        env["path"],
        line,
        f"{{numref}} '{target}' names a section, which has no number",
        f"write {{ref}}`{target}`",
        col=col,
    )


def _elsewhere(target: str, custom: str, form: str, env: dict, line: int, col: int) -> str:
    """Write a placeholder for another unit's label (its source checked here, the label by `check`)."""
    ctx = env["ctx"]
    file, _, label = target.partition("#")
    path = posixpath.normpath(posixpath.join(posixpath.dirname(env["path"]), file))
    slug = ctx.slug_by_path.get(path)
    if slug is None:
        here = posixpath.dirname(env["path"]) or "."
        env["problems"].error(
            env["path"],
            line,
            f"{{{form}}} '{target}': no source file '{path}'",
            did_you_mean(file, [posixpath.relpath(p, here) for p in ctx.slug_by_path])
            or "name a lesson's .md file, then '#' and the label",
            col=col,
        )
        return f"<code>{escapeHtml(target)}</code>"
    env["links"].append(Link(slug, "", line))  # published? who links to whom? (the link stage)
    env["derived"].setdefault("references", []).append((slug, label, form, line, col))
    return placeholder(slug, label, form, custom, custom or label)


def check(course, root, problems: Problems) -> None:
    """Report each reference to another unit's label that names none (or, for {numref}, no number)."""
    for unit in course.written:
        for slug, label, form, line, col in unit.page.derived.get("references", ()):
            other = course.unit(slug)
            if other is None or other.page is None:
                continue  # the link stage reported it
            found = target_of(course, slug, label)
            where = unit.page.source.path
            if found is None or found.kind == "equation":
                labels = [t.label for t in other.page.derived.get("targets", {}).values() if t.kind != "equation"]
                problems.error(
                    where,
                    line,
                    f"{{{form}}} '{label}' names no figure, table or section label of {other.page.source.path}",
                    did_you_mean(label, labels) or "give it a :name: (a figure, a table) or (label)= (a section)",
                    col=col,
                )
            elif form == "numref" and not found.number:
                problems.error(
                    where,
                    line,
                    f"{{numref}} '{label}' names a section, which has no number",
                    "write {ref} instead",
                    col=col,
                )
