"""Primes beside their letter, not raised a second time: `f'(x)` as f′(x), legible in any math font.

Temml writes `f'` as TeX does, a superscript: `<msup><mi>f</mi><mo class="tml-prime">′</mo></msup>`.
That only looks right in a font whose `ssty` feature swaps in a prime drawn for that place (Temml's
Latin Modern). The Unicode prime is already drawn high; raised again and shrunk to script size, as
in the math font this theme ships (Noto Sans Math, no `ssty`), it became a speck above the f and
`f'(x)` read as `f(x)`. So a superscript made of primes only leaves the script: `f′` is the base then
the primes; `f'^2` keeps its 2 as the superscript of `f′`; `f'_1` is `f₁′`. Nothing else changes.
"""

from __future__ import annotations

import re

TAG = re.compile(r"<(/?)([a-zA-Z][\w-]*)[^>]*?(/?)>")
PRIME = re.compile(r'<mo\b[^>]*\bclass="tml-prime[^"]*"[^>]*>[′″‴⁗]</mo>')
SCRIPTS = {"msup": 1, "msubsup": 2}  # the element → the index of its superscript child


class Element:
    """One element of Temml's MathML: its start tag, children (elements and text) and end tag, as written."""

    def __init__(self, name: str, start: str):
        self.name, self.start, self.end = name, start, ""
        self.children: list[Element | str] = []

    def text(self) -> str:
        return (
            self.start
            + "".join(child if isinstance(child, str) else child.text() for child in self.children)
            + self.end
        )


def unscript_primes(mathml: str) -> str:
    """Return `mathml` with every superscript that begins with primes rewritten as the module's docstring says."""
    if "tml-prime" not in mathml:
        return mathml
    root = _parse(mathml)
    return "".join(_rewritten(child) for child in root.children)


def _parse(mathml: str) -> Element:
    root = Element("", "")
    stack, position = [root], 0
    for match in TAG.finditer(mathml):
        if match.start() > position:
            stack[-1].children.append(mathml[position : match.start()])
        position = match.end()
        closing, name, empty = match.groups()
        if closing:
            stack[-1].end = match.group(0)
            stack.pop()
        elif empty:
            stack[-1].children.append(match.group(0))
        else:
            element = Element(name, match.group(0))
            stack[-1].children.append(element)
            stack.append(element)
    stack[-1].children.append(mathml[position:])
    return root


def _rewritten(node) -> str:
    if isinstance(node, str):
        return node
    children = [child for child in node.children if not (isinstance(child, str) and not child.strip())]
    if node.name in SCRIPTS and len(children) == SCRIPTS[node.name] + 1:
        primes, rest = _leading_primes(children[-1])
        if primes:
            inner = [_rewritten(child) for child in children[:-1]]
            base = inner[0] if node.name == "msup" else f"<msub>{inner[0]}{inner[1]}</msub>"
            if not rest:
                return f"<mrow>{base}{''.join(primes)}</mrow>"
            script = rest[0] if len(rest) == 1 else f"<mrow>{''.join(rest)}</mrow>"
            return f"<msup><mrow>{base}{''.join(primes)}</mrow>{script}</msup>"
    return node.start + "".join(_rewritten(child) for child in node.children) + node.end


def _leading_primes(script) -> tuple[list[str], list[str]]:
    """Return the primes a superscript begins with, and the rest of it (each as written)."""
    if isinstance(script, str):
        return [], [script]
    if script.name == "mo":
        return ([script.text()], []) if PRIME.fullmatch(script.text()) else ([], [script.text()])
    if script.name != "mrow":
        return [], [_rewritten(script)]
    parts = [child for child in script.children if not (isinstance(child, str) and not child.strip())]
    count = 0
    while count < len(parts) and not isinstance(parts[count], str) and PRIME.fullmatch(parts[count].text()):
        count += 1
    if count == 0:
        return [], [_rewritten(script)]
    return [part.text() for part in parts[:count]], [_rewritten(part) for part in parts[count:]]
