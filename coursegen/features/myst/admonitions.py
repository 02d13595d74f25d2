"""MyST's admonitions (```` ```{note} ````, `:::{tip}`, `{admonition} Title`, …) as coursegen's callouts.

Each kind takes the look of the nearest callout (`callout-caveat` for a warning, `callout-key` for
`{important}`, `callout-aside` for `{seealso}`, and a `callout-tip` of its own) and MyST's title in the
course's language; the text after the name is the title, `:class:` adds classes (a kind's name there,
as Jupyter Book writes `{admonition}` with `:class: tip`, gives that kind's look).
"""

from __future__ import annotations

import re

from coursegen.features.callouts import callout_open
from coursegen.theme.messages import say, texts

# MyST's name → (the callout look, the catalogue key of its default title).
KINDS = {
    "admonition": ("note", ""),  # its title is the text after the name, which it needs
    "note": ("note", "callout.note"),
    "warning": ("caveat", "callout.warning"),
    "caution": ("caveat", "callout.caution"),
    "attention": ("caveat", "callout.caution"),
    "danger": ("caveat", "callout.warning"),
    "error": ("caveat", "callout.warning"),
    "important": ("key", "callout.important"),
    "tip": ("tip", "callout.tip"),
    "hint": ("tip", "callout.tip"),
    "seealso": ("aside", "callout.seealso"),
}
LOOKS = {"note", "caveat", "key", "aside", "tip"}  # coursegen's callout looks, also allowed in :class:
CLASS_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
OPTIONS = ("class",)


def check(directive, env: dict) -> None:
    """Report an `{admonition}` without a title, unknown options and unusable class names."""
    problems, path = env["problems"], env["path"]
    if directive.name == "admonition" and not directive.argument:
        problems.error(path, directive.line, "'{admonition}' needs a title", "write ```{admonition} The title")
    for key, (value, line) in directive.options.items():
        if key not in OPTIONS:
            problems.warning(
                path, line, f"unknown option ':{key}:' of '{{{directive.name}}}'", "its one option is :class:"
            )
        for word in value.split() if key == "class" else ():
            if not CLASS_NAME.match(word):
                problems.error(path, line, f"class '{word}' is not a class name", "use letters, digits, '-' and '_'")


def render_open(self, tokens, idx, options, env) -> str:
    """Return an admonition's opening: a callout's, titled as written or by its kind's default."""
    directive = tokens[idx].meta["directive"]
    look, key = KINDS[directive.name]
    extra = []
    for word in directive.options.get("class", ("", 0))[0].split():
        if not CLASS_NAME.match(word):
            continue
        if word in KINDS or word in LOOKS:
            look = KINDS[word][0] if word in KINDS else word
        else:
            extra.append(word)
    title = directive.argument or (say(texts(env), key) if key else "")
    return callout_open(look, title, " ".join(extra))


def render_close(self, tokens, idx, options, env) -> str:
    """Return an admonition's end."""
    return "</aside>\n"
