"""What a widget without a look of its own shows: the value its run() returns, as a record the theme draws.

A widget folder with only spec.yaml and widget.py has no result.html or view.js: the theme draws its
controls from the spec and its result from this record (templates/partials/widget_result.html without
JavaScript, assets/widget-view.js with it). run() may return

- a string: shown as text (its line breaks kept);
- a mapping: a table, one row per key; when every value is itself a mapping, a table whose columns are
  the inner keys (each value written as Python's str() writes it);
- an object with a `_repr_html_()` method (Jupyter's convention: a pandas DataFrame, or a class of your
  own): that HTML fragment, which must close what it opens and hold no script or event handler; its
  <style> elements and style attributes are dropped (the pages' Content-Security-Policy allows no inline
  style: a widget's own style.css styles it);
- a matplotlib Figure: an inline SVG, the same bytes on every machine (a fixed hash salt, text as
  paths, no date), its element ids prefixed so two figures on a page never share one.

This file runs in two places: at build time in CPython, where the author-code worker imports it, and in
the learner's browser, where the page fetches it (as assets/widget-present.py) and runs it after the
widget's entry in Pyodide. So it imports only the standard library, and matplotlib only for a figure.
"""

from __future__ import annotations

import hashlib
import io
import re
import sys
from collections.abc import Mapping
from html.parser import HTMLParser

KINDS = ("text", "table", "html", "figure")
SCALARS = (str, int, float, bool, type(None))
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
REFUSED_TAGS = {"script", "iframe", "object", "embed"}  # the page's policy blocks them, or they escape it
HTML_STYLE_ELEMENT = re.compile(r"<style\b[^>]*>.*?</style\s*>", re.S | re.I)
HTML_STYLE = re.compile(r"""\sstyle\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)""", re.I)
SVG_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
SVG_STYLE = re.compile(r'\sstyle="([^"]*)"')
SVG_STYLE_ELEMENT = re.compile(r"\s*<style[^>]*>.*?</style>", re.S)
SVG_STYLE_RULES = re.compile(r"<style[^>]*>\s*\*\s*\{([^}]*)\}", re.S)
SVG_ID = re.compile(r'(\bid="|url\(#|href="#)([^")]+)')


def present(value, live_only=()) -> dict:
    """Return {"kind": …, "value": …} for what run() returned, or raise ValueError saying what is wrong."""
    if _is_figure(value):
        return {"kind": "figure", "value": figure_svg(value)}
    html = value._repr_html_() if callable(getattr(type(value), "_repr_html_", None)) else None
    if html is not None:  # before str: a str subclass may carry HTML; None means "no HTML", as in Jupyter
        return {"kind": "html", "value": checked_html(html)}
    if isinstance(value, str):
        return {"kind": "text", "value": str(value)}  # a plain str, whatever subclass it was
    if isinstance(value, Mapping):
        return {"kind": "table", "value": table(value, live_only)}
    raise ValueError(
        f"run() returned {type(value).__name__}; a widget without result.html shows a string, a mapping "
        "(a table), an object with _repr_html_() or a matplotlib figure"
    )


def table(value: Mapping, live_only=()) -> dict:
    """Return {"head": [column, …] or [], "rows": [[cell, …], …]}: every cell a string."""
    rows = [(key, cell) for key, cell in value.items() if key not in live_only]
    if rows and all(isinstance(cell, Mapping) for _, cell in rows):
        columns = list(dict.fromkeys(column for _, cell in rows for column in cell))
        return {
            "head": ["", *map(str, columns)],
            "rows": [[str(key), *(written(cell.get(c, ""), key) for c in columns)] for key, cell in rows],
        }
    return {"head": [], "rows": [[str(key), written(cell, key)] for key, cell in rows]}


def written(cell, row) -> str:
    """Return a table cell as text, or raise ValueError for a value a cell cannot hold."""
    if not isinstance(cell, SCALARS):
        raise ValueError(
            f"run() returned a table whose row {str(row)!r} holds a {type(cell).__name__}; "
            "a cell is a string, a number, a bool or None"
        )
    return str(cell)


class _Balance(HTMLParser):
    """Finds the first thing wrong with an HTML fragment: a refused tag or handler, or a tag left open."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.problem = ""

    def handle_starttag(self, tag, attrs):
        if tag in REFUSED_TAGS or any(name.startswith("on") for name, _ in attrs):
            self.problem = self.problem or f"a <{tag}> " + ("element" if tag in REFUSED_TAGS else "with an on… handler")
        elif tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.open or self.open[-1] != tag:
            self.problem = self.problem or f"a </{tag}> that closes nothing open"
        else:
            self.open.pop()


def checked_html(html) -> str:
    """Return `_repr_html_()`'s fragment, or raise ValueError when the page could not hold it as it is."""
    if not isinstance(html, str):
        raise ValueError(f"run() returned an object whose _repr_html_() gave {type(html).__name__}, not a string")
    html = HTML_STYLE.sub("", HTML_STYLE_ELEMENT.sub("", html))  # pandas' <style scoped>: the policy blocks it
    found = _Balance()
    found.feed(html)
    found.close()
    problem = found.problem or (f"a <{found.open[-1]}> that is never closed" if found.open else "")
    if problem:
        raise ValueError(f"run() returned HTML with {problem}; a fragment must close what it opens, with no scripts")
    return str(html)


def _is_figure(value) -> bool:
    """Return whether `value` is a matplotlib Figure (without importing matplotlib when it is not loaded)."""
    figure = getattr(sys.modules.get("matplotlib.figure"), "Figure", None)
    return figure is not None and isinstance(value, figure)


def figure_svg(figure) -> str:
    """Return a figure as an inline <svg>, the same bytes on every machine; the figure is closed."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "coursegen", "svg.fonttype": "path", "svg.image_inline": True}):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    if "matplotlib.pyplot" in sys.modules:  # a figure pyplot made stays open, and counted, until closed
        sys.modules["matplotlib.pyplot"].close(figure)
    text = buffer.getvalue()
    text = SVG_METADATA.sub("", text[text.index("<svg") :]).rstrip() + "\n"  # its RDF says nothing a reader needs
    text = _without_inline_style(text)
    prefix = "mpl-" + hashlib.sha256(text.encode()).hexdigest()[:8] + "-"
    text = SVG_ID.sub(lambda m: m.group(1) + prefix + m.group(2), text)
    titles = [axes.get_title() for axes in figure.axes if axes.get_title()]
    label = "; ".join([figure._suptitle.get_text()] if getattr(figure, "_suptitle", None) else titles)
    shown = ' role="img"' + (f' aria-label="{_attribute(label)}"' if label else "")
    return text.replace("<svg", "<svg" + shown, 1)


def _without_inline_style(svg: str) -> str:
    """Return matplotlib's SVG with its style attributes and <style> rules written as presentation attributes
    (`fill="#fff"`): the pages' Content-Security-Policy allows no inline style, and SVG's own attributes
    are no style. Its one rule, `*{stroke-linejoin: round; stroke-linecap: butt}`, goes on the root, whence
    both properties are inherited."""
    rules = "".join(SVG_STYLE_RULES.findall(svg))
    svg = SVG_STYLE_ELEMENT.sub("", svg)
    svg = SVG_STYLE.sub(lambda m: _declarations(m.group(1)), svg)
    return svg.replace("<svg", "<svg" + _declarations(rules), 1)


def _declarations(css: str) -> str:
    """Return `a: b; c: d` as ` a="b" c="d"`."""
    pairs = [part.split(":", 1) for part in css.split(";") if ":" in part]
    return "".join(f' {name.strip()}="{_attribute(value.strip())}"' for name, value in pairs)


def _attribute(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
