"""A code cell in the page: its code, highlighted as any Python fence is, and its baked outputs under it.

Everything is plain HTML, there to read without JavaScript: printed text and values in `<pre>`,
HTML values as they are, figures as inline SVG. The tags decide what shows: `hide-input`,
`hide-output` and `hide-cell` fold a part into a closed `<details>`, `remove-input`,
`remove-output` and `remove-cell` leave it out (the cell still runs).
"""

from __future__ import annotations

from markdown_it.common.utils import escapeHtml

from coursegen.stages.parse import highlight_code
from coursegen.theme import messages


def render_cell(token, env: dict) -> str:
    """Return the cell's HTML (see the module's docstring)."""
    data = token.meta.get("cell") or {}
    cell = data.get("cell")
    if cell is None:  # a problem was reported at its line; the build stops
        return f'<pre class="code-cell-error"><code>{escapeHtml(token.content)}</code></pre>\n'
    if cell.tagged("remove-cell"):
        runtime = data.get("runtime")
        return f'<script type="application/json" data-cells-runtime>{runtime}</script>\n' if runtime else ""
    texts = messages.texts(env)
    parts = []
    if not cell.tagged("remove-input"):
        code = highlight_code(cell.code, "python", None, env["ctx"].memo)
        parts.append(_folded(code, "code-cell-input", texts["cell.show_code"], cell.tagged("hide-input")))
    outputs = data.get("outputs") or ()
    if outputs and not cell.tagged("remove-output"):
        shown = "".join(_output(kind, text, cut, texts) for kind, text, cut in outputs)
        parts.append(_folded(shown, "code-cell-output", texts["cell.show_output"], cell.tagged("hide-output")))
    body = "".join(parts)
    if data.get("runtime"):  # the page's first cell: what its live runs need (cells.js)
        body += f'<script type="application/json" data-cells-runtime>{data["runtime"]}</script>\n'

    if cell.tagged("hide-cell"):
        body = (
            f'<details class="code-cell-fold"><summary>{escapeHtml(texts["cell.show_cell"])}</summary>{body}</details>'
        )
    return f'<div class="code-cell" data-code-cell="{data["number"]}">\n{body}</div>\n'


def _folded(html: str, css: str, summary: str, hidden: bool) -> str:
    """Return a part of the cell, in a closed <details> when its hide- tag is set."""
    if hidden:
        return f'<details class="{css}"><summary>{escapeHtml(summary)}</summary>\n{html}</details>\n'
    return f'<div class="{css}">\n{html}</div>\n'


def _output(kind: str, text: str, cut: int, texts: dict[str, str]) -> str:
    """Return one output's HTML."""
    if kind in ("stdout", "stderr", "text", "error"):
        shown = f'<pre class="cell-{kind}" tabindex="0">{escapeHtml(text)}</pre>\n'
        if cut:
            shown += f'<p class="cell-cut">{escapeHtml(messages.say(texts, "cell.output_cut", count=f"{cut:,}"))}</p>\n'
        return shown
    if kind == "svg":
        return f'<figure class="cell-figure">\n{text}\n</figure>\n'
    return f'<div class="cell-html">\n{text}\n</div>\n'
