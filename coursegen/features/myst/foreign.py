"""Warnings for what other tools' authors type and coursegen does not read, each naming the coursegen way.

A MyST directive that no feature reads (```` ```{dropdown} ````, `:::{margin}`, …), MkDocs' admonitions
(`!!! note "Title"`, `??? note`), content tabs (`=== "Tab"`) and snippets (`--8<--`) are warnings
at their line (errors under --strict): markdown-it would show them as a code block or as text.
`{code-block} python` (and `{code}`, `{sourcecode}`) is shown as the code fence it means.
"""

from __future__ import annotations

import re

from coursegen.features.myst.admonitions import KINDS
from coursegen.features.myst.fences import OPTION
from coursegen.stages.directives import KNOWN, is_known

DIRECTIVE_FENCE = re.compile(r"[`~:]{3,}[ \t]*\{")  # one class: a faster scan (mixed marks: a needless look)
NAME = re.compile(r"^\{([^{}\s]*)\}")
CODE_BLOCKS = ("code-block", "code", "sourcecode")
CALLOUT_WAY = "write ::: aside Title, the text, then ::: (a callout; or ```{note} Title)"
# An unknown directive's name → the coursegen way (the default lists what coursegen reads).
HINTS = {
    "dropdown": "coursegen has no dropdown: write a callout (```{note} Title) or a <details><summary>…</summary> block",
    "margin": CALLOUT_WAY,
    "sidebar": CALLOUT_WAY,
    "aside": CALLOUT_WAY,
    "epigraph": "write a '>' block quote",
    "pull-quote": "write a '>' block quote",
    "image": "write ![alt text](path/to/image.png)",
    "toctree": "list the units in course.yaml's units:",
    "tableofcontents": "list the units in course.yaml's units:",
    "card": "write the card's text as Markdown (coursegen has no cards)",
    "grid": "write the grid's text as Markdown (coursegen has no grids)",
    "raw": "write raw HTML as it is, without a fence",
    "glue": "compute the number with {calc}`expression`",
    "code-cell": "write ```{code-cell} python",
}
MKDOCS_ADMONITION = re.compile(r"^(!!!|\?\?\?\+?)[ \t]+([A-Za-z][\w-]*)(?:[ \t]+\"([^\"]*)\")?")
MKDOCS_TAB = re.compile(r"^===\+?[ \t]+\"([^\"]*)\"")
SNIPPET = re.compile(r"^;?-+8<-+(?:[ \t]+[\"']([^\"']*)[\"'])?")


def foreign_rule(state) -> None:
    """Core rule: warn about unknown directives and MkDocs syntax (see the module's docstring)."""
    src = state.src
    mkdocs = "!!!" in src or "???" in src or "===" in src or "8<" in src
    if not mkdocs and not DIRECTIVE_FENCE.search(src):
        return  # most pages
    handlers = state.md.renderer.fence_handlers
    for index, token in enumerate(state.tokens):
        if token.type == "fence":
            _check_fence(token, state.env, handlers)
        elif mkdocs and token.type == "inline" and state.tokens[index - 1].type == "paragraph_open":
            first = token.map[0] + 1 if token.map else 1
            for offset, text in enumerate(token.content.split("\n")):
                _check_line(text.strip(), first + offset, state.env)


def _check_fence(token, env: dict, handlers) -> None:
    """Warn about a fence of a directive coursegen does not read; a code-block becomes the fence it means."""
    line = token.map[0] + 1 if token.map else 1
    info = token.info.strip()  # markdown-it keeps the space of "``` {name}"
    if not info.startswith("{"):
        for offset, text in enumerate(token.content.split("\n")):
            snippet = SNIPPET.match(text.strip()) if "8<" in text else None
            if snippet and snippet.group(1):  # a snippet in code names its file: `--8<-- "code.py"`
                _snippet(snippet, line + 1 + offset, env)
        return
    found = NAME.match(info)
    name = found.group(1) if found else info
    if is_known(name, handlers):
        return
    problems, path = env["problems"], env["path"]
    language = info[found.end() :].split()[:1] if found else []
    if name in CODE_BLOCKS:
        fence = f"```{language[0]}" if language else "```"
        problems.warning(path, line, f"'{{{name}}}' is MyST's code fence", f"write {fence}")
        lines = token.content.split("\n")
        while lines and OPTION.match(lines[0].strip()):
            lines.pop(0)  # :linenos:, :caption: and friends: not shown
        token.info, token.content = (language[0] if language else ""), "\n".join(lines)
        return
    readable = ", ".join(sorted(KNOWN))
    problems.warning(
        path,
        line,
        f"unknown directive '{{{name}}}': shown as a code block",
        HINTS.get(name, f"coursegen reads these directives: {readable}"),
    )


def _check_line(text: str, line: int, env: dict) -> None:
    """Warn about one line of a paragraph written in MkDocs' syntax."""
    problems, path = env["problems"], env["path"]
    if found := MKDOCS_ADMONITION.match(text):
        marker, kind, title = found.groups()
        name = kind.lower() if kind.lower() in KINDS else "admonition"
        if name == "admonition" and not title:
            title = kind.capitalize()
        way = f"```{{{name}}}" + (f" {title}" if title else "") + ", the text without its indent, then ```"
        folded = "coursegen has no folded callout: " if marker.startswith("???") else ""
        problems.warning(
            path, line, f"MkDocs admonition '{marker} {kind}' is not coursegen syntax", f"{folded}write {way}"
        )
    elif found := MKDOCS_TAB.match(text):
        problems.warning(
            path,
            line,
            f"MkDocs content tab '=== \"{found.group(1)}\"' is not coursegen syntax",
            f"write a ````{{tab-set}} holding a ```{{tab-item}} {found.group(1)} block per tab",
        )
    elif "8<" in text and (snippet := SNIPPET.match(text)):
        _snippet(snippet, line, env)


def _snippet(snippet: re.Match, line: int, env: dict) -> None:
    """Warn about an MkDocs snippet line."""
    target = snippet.group(1) or "path/to/file.md"
    env["problems"].warning(
        env["path"],
        line,
        "MkDocs snippet '--8<--' is not coursegen syntax",
        f"write ```{{include}} {target} (a Markdown file of the course, outside lessons/ and reviews/)",
    )
