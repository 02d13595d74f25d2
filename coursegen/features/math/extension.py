"""Math: `$…$`, `$$…$$` and ```` ```{math} ```` fences as MathML (Temml), and numbered equations.

MyST's syntax, so Jupyter Book sources work: `$$ … $$ (label)`, a ```` ```{math} ```` fence with a
`:label:` line, or `\\label{…}` inside display math, numbers the equation per lesson ("(3.2)": the
unit's place in course.yaml, then the equation's among the page's labelled ones); `` {eq}`label` ``
and `\\eqref{label}` (or `\\ref{label}`, without parentheses) inside math link to it, and
`` {eq}`03-newton.md#label` `` to one of another unit, checked by the link stage as links are and
numbered after linking (stages/references.py).

One core rule does a page's math before its roles run: it finds every formula and label, numbers
the labelled ones, reports unknown and doubled labels, and converts the formulas Temml has not
seen (the memo keeps each one's MathML or message) in one call (temml.py); the render rules only
print what it stored in `token.meta`.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import NamedTuple

from markdown_it.common.utils import escapeHtml

from coursegen.errors import Problems, did_you_mean
from coursegen.features.math import font_subset
from coursegen.memo import Memo
from coursegen.model import Link, Target
from coursegen.stages.parse import child_lines, register_fence
from coursegen.stages.references import placeholder
from coursegen.stages.roles import register_role
from coursegen.theme import math_font
from coursegen.theme.messages import say, texts

FENCE = "{math}"
LABEL_IN_MATH = re.compile(r"\\label\s*\{([^{}]*)\}")
REF_IN_MATH = re.compile(r"\\(eqref|ref)\s*\{([^{}]*)\}")
STYLE_ATTR = re.compile(r' style="([^"]*)"')
DATA_STYLE = re.compile(r' data-tml-style="([^"]*)"')
UNSAFE_IN_CSS = re.compile(r"[{}<>\\@]|/\*")
PLACEHOLDER = re.compile(r"<mtext>@(eqref|ref)([0-9a-f]*)@</mtext>")
OPTION = re.compile(r"^:([A-Za-z-]+):\s*(.*)$")
LABEL_HINT = "a label is letters, digits, '-', '_', ':' or '.', e.g. (eq-newton)"
SESSION_HOOKS = ("prepare", "add_files")  # these also take the build's session (extensions.ModuleExtension)
VALID_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")


def install(md) -> None:
    """Register the math render rules, the `{math}` fence, the `{eq}` role and the rule between them."""
    register_role(md, "eq", render_eq_role)
    register_fence(md, FENCE, render_fence)
    md.core.ruler.before("course_roles", "math", math_rule)
    md.add_render_rule("math_inline", lambda self, tokens, idx, options, env: _inline(tokens[idx]))
    md.add_render_rule("math_inline_double", lambda self, tokens, idx, options, env: _inline(tokens[idx]))
    md.add_render_rule("math_block", lambda self, tokens, idx, options, env: _block(tokens[idx], env))
    md.add_render_rule("math_block_label", lambda self, tokens, idx, options, env: _block(tokens[idx], env))


def prepare(root: Path, config, problems: Problems, session=None) -> dict:
    """Return each unit's number by slug: the first part of its equations' numbers. And start the math
    font's cutting, whose process readies fontTools while the pages are parsed (font_subset.Cutting)."""
    file = math_font.font_file(root)
    if file is not None and config is not None and session is not None and _may_have_formulas(session):
        font = file.read_bytes()
        if font_subset.looks_like_a_font(font):
            font_subset.start_early(font, session)
    units = config.units if config is not None else ()
    return {"numbers": {unit.slug: number for number, unit in enumerate(units, 1) if unit.slug}}


def _may_have_formulas(session) -> bool:
    """Return whether a source of this build may hold a formula (a `$` or a `{math}` fence): else no cutting
    process is started early, to take nothing from the build's other processes (a notebook's cells)."""
    sources = session.records.sources.sources.values() if session.records.sources else ()
    return any("$" in source.text or "{math}" in source.text for source in sources)


def equation_id(label: str) -> str:
    """Return the element id of the equation labelled `label` (prefixed: labels and headings never clash)."""
    return "eq-" + label


# ---- the core rule -----------------------------------------------------------------------


def math_rule(state) -> None:
    """Number, check and convert every formula of the page (see the module's docstring)."""
    src = state.src
    if "$" not in src and FENCE not in src and "{eq}" not in src:
        return
    env = state.env
    formulas = list(_formulas(state.tokens))
    labels = _number(formulas, env)
    env["math_labels"] = labels
    for item in formulas:
        item["latex"] = _with_references(item, labels, env)
    _convert(formulas, env["ctx"].memo if env.get("ctx") is not None else None)
    for item in formulas:
        ok, text = item["result"]
        token = item["token"]
        if not ok:
            env["problems"].error(env["path"], item["line"], f"cannot read math '{item['shown']}': {text}")
            token.meta["math"] = {"html": f'<code class="math-error">{escapeHtml(item["shown"])}</code>'}
            continue
        html = PLACEHOLDER.sub(lambda m: _reference_in_math(m, labels), STYLE_ATTR.sub(_style_as_data, text))
        token.meta["math"] = {"html": html, "label": item.get("label"), "number": item.get("number")}


def _formulas(tokens):
    """Yield a dict per formula: its token, line, LaTeX and whether it is displayed."""
    for block in tokens:
        if block.type in ("math_block", "math_block_label"):
            line = block.map[0] + 1 if block.map else 1
            label = block.info.strip() if block.type == "math_block_label" else None
            yield {"token": block, "line": line, "latex": block.content.strip(), "display": True, "label": label}
        elif block.type == "fence" and block.info.strip().split(maxsplit=1)[:1] == [FENCE]:
            yield _fence_formula(block)
        elif block.type == "inline" and "$" in block.content:
            for token, line in child_lines(block):
                if token.type.startswith("math_inline"):
                    display = token.type == "math_inline_double"
                    yield {"token": token, "line": line, "latex": token.content.strip(), "display": display}


def _fence_formula(block) -> dict:
    """Return a ```` ```{math} ```` fence's formula: its `:label:` (and other option lines) taken off the top."""
    line = block.map[0] + 1 if block.map else 1
    lines = block.content.split("\n")
    options: dict[str, tuple[str, int]] = {}
    while lines and (found := OPTION.match(lines[0].strip())):
        options[found.group(1)] = (found.group(2).strip(), line + 1 + len(options))
        lines.pop(0)
    item = {"token": block, "line": line, "latex": "\n".join(lines).strip(), "display": True, "options": options}
    if "label" in options:
        item["label"] = options["label"][0]
    return item


def _number(formulas: list[dict], env: dict) -> dict[str, tuple[str, int]]:
    """Give each labelled display formula its number; return label → (number, line). Reports labels
    that are doubled, malformed, or where no number can go (inline math, two in one formula)."""
    problems, path = env["problems"], env["path"]
    ctx = env.get("ctx")
    unit = ctx.extra.get("math", {}).get("numbers", {}).get(env["source"].slug) if ctx is not None else None
    labels: dict[str, tuple[str, int]] = {}
    count = 0
    for item in formulas:
        for key, (_, line) in item.get("options", {}).items():
            if key != "label":
                problems.error(path, line, f"unknown option ':{key}:' of a {{math}} fence", "the one option is :label:")
        inner = LABEL_IN_MATH.findall(item["latex"])
        item["shown"] = item["latex"]
        item["latex"] = LABEL_IN_MATH.sub("", item["latex"]).strip()
        if inner and not item["display"]:
            problems.error(path, item["line"], f"'\\label{{{inner[0]}}}' in inline math", "label display math: $$ … $$")
            continue
        found = ([item["label"]] if item.get("label") else []) + inner
        if len(found) > 1:
            problems.error(path, item["line"], f"one equation with two labels: {', '.join(found)}", "keep one")
        if not found:
            continue
        label = found[0]
        if not VALID_LABEL.match(label):
            problems.error(path, item["line"], f"equation label '{label}' is not a valid name", LABEL_HINT)
            continue
        if label in labels:
            first = labels[label][1]
            problems.error(path, first, f"equation label '{label}' is defined twice (again at line {item['line']})")
            problems.error(path, item["line"], f"equation label '{label}' is defined twice (first at line {first})")
            continue
        count += 1
        item["label"], item["number"] = label, f"{unit}.{count}" if unit else str(count)
        labels[label] = (item["number"], item["line"])
        name = say(texts(env), "math.equation", number=item["number"])
        target = Target("equation", item["number"], name, "", label, item["line"])
        env.setdefault("derived", {}).setdefault("targets", {})[equation_id(label)] = target  # for other pages
    return labels


def _with_references(item: dict, labels: dict, env: dict) -> str:
    """Return the formula's LaTeX with each `\\eqref{x}`/`\\ref{x}` as a placeholder Temml passes through
    (the label in hex, so the memo's key does not depend on the equation's number)."""

    def placeholder(match) -> str:
        kind, label = match.group(1), match.group(2).strip()
        if label not in labels:
            env["problems"].error(
                env["path"],
                item["line"],
                f"'\\{kind}{{{label}}}' names no equation of this page",
                did_you_mean(label, labels) or "label the equation: $$ … $$ (label)",
            )
        return "\\text{@" + kind + label.encode().hex() + "@}"

    return REF_IN_MATH.sub(placeholder, item["latex"])


def _style_as_data(match) -> str:
    """Temml's style attribute as a data attribute that math.css styles (see add_files): the pages'
    Content-Security-Policy (style-src 'self') blocks style attributes, and \\boxed's border is one."""
    return f' data-tml-style="{match.group(1)}"'


class MathUse(NamedTuple):
    """What a page's formulas need from math.css and the math font (kept with the page: see add_files)."""

    styles: tuple[str, ...]  # the distinct Temml styles, sorted
    characters: str  # the distinct characters written inside <math>, sorted (font_subset.characters)


def analyse(html: str, source=None) -> MathUse | None:
    """Return what the page's formulas use, or None for a page without any."""
    if "<math" not in html:
        return None
    styles = tuple(sorted(set(DATA_STYLE.findall(html)))) if "data-tml-style" in html else ()
    return MathUse(styles, font_subset.characters(html))


def add_files(course, root: Path, assets, problems, session) -> None:
    """Add math.css (the math font's rules, Temml's layout rules and a rule per style the formulas
    use) and the math font, cut to the characters every page's formulas use together."""
    uses = [use for unit in (course.written if course else ()) if (use := unit.page.derived.get("math"))]
    styles = sorted({style for use in uses for style in use.styles})
    font_url = served_font(
        root, "".join(sorted({c for use in uses for c in use.characters})), assets, problems, session
    )
    rules = [
        f'[data-tml-style="{style}"] {{ {style} }}\n'
        for style in styles
        if not UNSAFE_IN_CSS.search(style)  # Temml writes only declarations; anything else stays out of the sheet
    ]
    assets.add(math_font.STYLESHEET, (math_font.stylesheet(font_url) + "".join(rules)).encode())


def served_font(root: Path, written: str, assets, problems, session) -> str | None:
    """Return the site path of the math font as the site serves it (None when there is none): cut to the
    glyphs of `written` when any page has a formula, whole when none has or fontTools cannot read it.

    The cut is named by what it is cut from (font_subset.cut_key) and made while the pages render
    (assets.meanwhile), in a forked process: the pages name it before it exists."""
    file = math_font.font_file(root)
    if file is None:
        return None
    font = file.read_bytes()
    if written and font_subset.looks_like_a_font(font):
        text = font_subset.needed(written)
        cutting = font_subset.take(font, session)
        cutting.cut(text, session.memo if session else None)
        path = assets.add_named(math_font.FONT, font_subset.cut_key(font, text))  # in place of the theme's whole file

        def made() -> dict[str, bytes]:
            try:
                return {path: cutting.result()}
            except font_subset.NotAFont as error:
                _warn_uncut(root, file, problems, error)
                return {path: font}

        assets.meanwhile(made, cutting.cancel)
        return path
    font_subset.cancel_started(session)  # nothing to cut
    if written:
        _warn_uncut(root, file, problems, "not an OpenType, TrueType, WOFF or WOFF2 file")
    return assets.add(math_font.FONT, font)


def _warn_uncut(root: Path, file: Path, problems, error) -> None:
    where = file.relative_to(root).as_posix() if file.is_relative_to(root) else file.as_posix()
    problems.warning(
        where, 0, f"the math font could not be cut to the formulas' characters, so it is served whole: {error}"
    )


def _reference_in_math(match, labels: dict) -> str:
    """Return the link for a placeholder: HTML inside <mtext>, where the HTML parser makes it a real link."""
    kind, label = match.group(1), bytes.fromhex(match.group(2)).decode()
    number = labels.get(label, ("?", 0))[0]
    text = f"({number})" if kind == "eqref" else number
    return f'<mtext><a class="eqref" href="#{escapeHtml(equation_id(label))}">{text}</a></mtext>'


def _convert(formulas: list[dict], memo: Memo | None) -> None:
    """Set each formula's `result`: from the memo, or from one call to Temml for all the others."""
    from coursegen.features.math.primes import unscript_primes
    from coursegen.features.math.temml import convert_all, short_message

    keys = [(item["latex"], item["display"]) for item in formulas]
    known = {key: memo.peek("mathml", key) for key in keys} if memo is not None else {}
    todo = sorted({key for key in keys if known.get(key) is None})
    for key, (ok, text) in zip(todo, convert_all(todo)):
        known[key] = (ok, unscript_primes(text) if ok else short_message(text))
        if memo is not None:
            memo.put("mathml", key, known[key])
    for item, key in zip(formulas, keys):
        item["result"] = known[key] if item["latex"] else (True, "")


# ---- rendering -----------------------------------------------------------------------------


def _inline(token) -> str:
    return f'<span class="math inline">{token.meta.get("math", {}).get("html", "")}</span>'


def _block(token, env: dict | None = None) -> str:
    """A display formula: a focusable box that scrolls sideways when wider than a phone; a numbered one
    carries its id and its number at the right, which a reference's link text repeats."""
    math = token.meta.get("math", {})
    if not math.get("number"):
        return f'<div class="math block" tabindex="0">\n{math.get("html", "")}\n</div>\n'
    label, number = math["label"], math["number"]
    name = say(texts(env or {}), "math.equation", number=number)  # what a screen reader calls the box
    return (
        f'<div class="math block numbered" id="{escapeHtml(equation_id(label))}" tabindex="0" role="group" '
        f'aria-label="{escapeHtml(name)}">\n{math["html"]}\n<span class="eq-number">({number})</span>\n</div>\n'
    )


def render_fence(token, env) -> str:
    return _block(token, env)


def render_eq_role(token, env: dict, line: int) -> str:
    """`` {eq}`label` ``: "(3.2)" linked to the equation; `` {eq}`03-newton.md#label` ``: to another unit's."""
    target = token.content.strip()
    problems, path, col = env["problems"], env["path"], token.meta.get("col", 0)
    if "#" in target:
        return _eq_elsewhere(target, env, line, col)
    labels = env.get("math_labels", {})
    if target not in labels:
        problems.error(
            path,
            line,
            f"{{eq}} '{target}' names no equation of this page",
            did_you_mean(target, labels)
            or "label the equation: $$ … $$ (label), or name another page's: 03-x.md#label",
            col=col,
        )
        return f"<code>{escapeHtml(target)}</code>"
    number = labels[target][0]
    return f'<a class="eqref" href="#{escapeHtml(equation_id(target))}">({number})</a>'


def _eq_elsewhere(target: str, env: dict, line: int, col: int) -> str:
    """Link to another unit's equation: the unit's source checked here, the label by the link stage
    (it checks every link's anchor against the target page's ids, with a did-you-mean)."""
    ctx = env["ctx"]
    file, _, label = target.partition("#")
    path = posixpath.normpath(posixpath.join(posixpath.dirname(env["path"]), file))
    slug = ctx.slug_by_path.get(path)
    if slug is None:
        env["problems"].error(
            env["path"],
            line,
            f"{{eq}} '{target}': no source file '{path}'",
            did_you_mean(file, [posixpath.relpath(p, posixpath.dirname(env["path"]) or ".") for p in ctx.slug_by_path])
            or "name a lesson's .md file, then '#' and the label",
            col=col,
        )
        return f"<code>{escapeHtml(target)}</code>"
    env["links"].append(Link(slug, equation_id(label), line))
    unit = ctx.extra.get("math", {}).get("numbers", {}).get(slug)
    # The other page's numbers are not known while this one is parsed (pages parse apart): a
    # placeholder, filled with "(3.2)" after linking (stages/references.py); until then it names
    # the label and the unit.
    text = say(texts(env), "math.other_unit", label=label, unit=unit) if unit else f"({label})"
    return placeholder(slug, equation_id(label), "eq", "", text)
