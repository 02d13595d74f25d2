"""matplotlib figures of a code cell, as inline SVG that is the same in every build and readable in both schemes.

A cell's figures are those it shows (`plt.show()`, `display(fig)`, a figure as its last value) and
those it leaves open, shown at its end and closed, as Jupyter's inline backend does. Each becomes
SVG with matplotlib's own settings for repeatable files (a fixed `svg.hashsalt`, no date, glyphs
drawn as paths so no font on the reader's machine matters), then is made fit for the page:

- the Content-Security-Policy allows no inline styles, so each `style="a: b"` becomes the
  presentation attributes `a="b"`, and the `<style>` block becomes attributes of the root;
- black (matplotlib's ink for text, axes and ticks, and the fill of glyphs, which it leaves unset)
  becomes `currentColor` and the backgrounds are transparent, so the figure takes the page's text
  colour in the light and the dark scheme;
- ids are prefixed per figure and those nothing refers to are dropped, so two figures on a page
  never share one.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys

MAX_FIGURES = 20  # per cell: more is a loop that forgot plt.close()
RC: dict = {  # rcParams for every page (a bare dict: their keys are typed as literals)
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",  # shipped with matplotlib: the same glyphs on every machine
    "figure.facecolor": "none",
    "axes.facecolor": "none",
    "savefig.facecolor": "none",
    "savefig.transparent": True,
    "figure.figsize": (5.0, 3.2),  # drawn at its size on a desktop, and its text still readable on a phone
    "font.size": 11.0,
    "figure.dpi": 100.0,
    "savefig.bbox": "tight",
}
STYLE = re.compile(r' style="([^"]*)"')
ID = re.compile(r' id="([^"]+)"')
REFERENCE = re.compile(r'(href="#|url\(#)([^")]+)')
BACKEND = "module://coursegen.features.cells.inline_backend"
ACTIVE: list = [None]  # in the worker: the running cell's Figures, for the backend's show()
SET_UP: list = [None]  # in the worker: the page matplotlib was last set up for


class TooManyFigures(Exception):
    """A cell that draws more than MAX_FIGURES figures (a loop that forgot plt.close())."""


class Figures:
    """The figures of one running cell (see the module's docstring)."""

    def __init__(self, outputs, page: tuple, number: int, code: str, fresh: bool):
        self.outputs, self.page, self.fresh = outputs, page, fresh
        self.salt = f"{page[1]}:{number}"  # which cell of which page: the same every build (lines may move)
        self.wanted = "matplotlib" in code or "pyplot" in code or "matplotlib" in sys.modules
        self.count = 0

    @contextlib.contextmanager
    def drawing(self):
        """Set matplotlib up for the cell (a page's first cell starts from its defaults) and catch `plt.show()`."""
        if self.wanted:
            try:
                import matplotlib
                import matplotlib.pyplot as plt
            except ImportError:  # the cell's own import then says what is missing
                self.wanted = False
            else:
                if self.fresh or SET_UP[0] != self.page:
                    SET_UP[0] = self.page
                    plt.close("all")
                    matplotlib.rcdefaults()
                    matplotlib.rcParams.update(RC)
                _use_backend(plt, self)
        ACTIVE[0] = self
        try:
            yield
        finally:
            ACTIVE[0] = None

    def is_figure(self, value) -> bool:
        figure = sys.modules.get("matplotlib.figure")
        return figure is not None and isinstance(value, figure.Figure)

    def drawn_by(self, value) -> bool:
        """Return True for a matplotlib artist, or a list of them, such as `plt.plot(…)` returns."""
        artist = sys.modules.get("matplotlib.artist")
        if artist is None:
            return False
        items = value if isinstance(value, (list, tuple)) and value else [value]
        return all(isinstance(item, artist.Artist) for item in items)

    def collect(self) -> None:
        """Show and close every figure still open (at the cell's end, and for plt.show())."""
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return
        for number in plt.get_fignums():
            self.add(plt.figure(number))

    def add(self, figure) -> None:
        """Show one figure as SVG and close it (a figure shown by display() is not shown again at the end)."""
        self.count += 1
        if self.count > MAX_FIGURES:
            sys.modules["matplotlib.pyplot"].close("all")
            raise TooManyFigures(f"code cell draws more than {MAX_FIGURES} figures")
        self.outputs.add("svg", svg_of(figure, f"{self.salt}:{self.count}", _prefix(self.salt, self.count)))
        sys.modules["matplotlib.pyplot"].close(figure)


def _use_backend(plt, figures) -> None:
    """Make plt.show() show the running cell's figures: coursegen's backend module at build time; in the page's
    Pyodide, where this file runs as part of the harness and there is no coursegen, Agg and a plain function."""
    if __name__ == "coursegen.features.cells.figures":
        plt.switch_backend(BACKEND)
    else:
        plt.switch_backend("agg")
        plt.show = lambda *args, **kwargs: figures.collect()


def _prefix(salt: str, count: int) -> str:
    """Return the id prefix of a figure: from a hash of where it is (page and line), the same every build."""
    import hashlib

    return "fig" + hashlib.sha256(salt.encode()).hexdigest()[:8] + f"-{count}-"


def svg_of(figure, salt: str, prefix: str) -> str:
    """Return the figure as SVG for the page (see the module's docstring)."""
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": salt}):
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return page_svg(buffer.getvalue(), prefix, _label(figure))


def page_svg(svg: str, prefix: str, label: str) -> str:
    """Return matplotlib's SVG file as an element for the page: no prolog, styles as attributes, black as
    currentColor, ids prefixed (those referred to) or dropped."""
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = re.sub(r"<!--.*?-->\s*", "", svg, flags=re.S)
    root_style = re.search(r"<style[^>]*>\*\{([^}]*)\}</style>\s*", svg)
    svg = re.sub(r"<style[^>]*>.*?</style>\s*", "", svg, flags=re.S)
    svg = re.sub(r"<defs>\s*</defs>\s*", "", svg)
    svg = STYLE.sub(lambda m: _attributes(m.group(1)), svg)
    svg = re.sub(r"#000000\b", "currentColor", svg)
    used = {name for _, name in REFERENCE.findall(svg)}
    svg = ID.sub(lambda m: f' id="{prefix}{m.group(1)}"' if m.group(1) in used else "", svg)
    svg = REFERENCE.sub(lambda m: f"{m.group(1)}{prefix}{m.group(2)}", svg)
    root = f'<svg role="img" aria-label="{_escape(label)}" fill="currentColor"' + (
        _attributes(root_style.group(1)) if root_style else ""
    )
    svg = re.sub(r'<svg\b([^>]*?) width="[^"]*" height="[^"]*"', lambda m: root + m.group(1), svg, count=1)
    return re.sub(r">\s+<", ">\n<", svg.strip())


def _attributes(style: str) -> str:
    """Return `fill: none; stroke: #1f77b4` as ` fill="none" stroke="#1f77b4"` (SVG presentation attributes)."""
    pairs = [part.split(":", 1) for part in style.split(";") if ":" in part]
    return "".join(f' {name.strip()}="{_escape(value.strip())}"' for name, value in pairs)


def _label(figure) -> str:
    """Return the figure's text alternative: its title, or its axes' titles and labels."""
    suptitle = getattr(figure, "_suptitle", None)
    parts = [suptitle.get_text()] if suptitle is not None and suptitle.get_text() else []
    for axes in figure.get_axes():
        parts += [text for text in (axes.get_title(), axes.get_xlabel(), axes.get_ylabel()) if text]
    return "Figure: " + "; ".join(parts) if parts else "Figure"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
