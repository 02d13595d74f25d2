"""A warning when a page grows large because of the widget states baked into it.

Each baked state is a result the page answers with at once; a grid of two sliders bakes every pair,
so a spec's `precompute` can make a page of hundreds of kilobytes without a line of it showing.
The warning names the page, its size and each widget's share of it, at the widget's first fence.

Why 500 KB: it is about twice the largest page of the sample course (260 KB, 165 KB of it the baked
states of two widgets) and fifteen times a lesson of text alone (about 30 KB). And the cost is not
only the page's: the service worker fetches every page on a learner's first visit (docs/hosting.md),
so each such page is downloaded and stored by every learner, whether or not they open it. A page is
flagged only when the states are at least half of it: a long page of text is the author's choice.
"""

from __future__ import annotations

import re

from coursegen.errors import Problems
from coursegen.memo import Memo
from coursegen.model import per_unit_problems

PAGE_LIMIT = 500_000  # bytes of a page's HTML
STATES_SHARE = 0.5  # …of which at least this share are baked widget states
FIGURE_STATES = re.compile(
    r'<figure class="widget[^"]*" id="[^"]*" data-widget="([^"]+)".*?'
    r'<script type="application/json" data-widget-states>(.*?)</script>',
    re.S,
)


def baked_state_sizes(html: str, source) -> dict[str, tuple[int, int]]:
    """Return {widget name: (bytes of its baked states on the page, line of its first fence)}: a page analyser."""
    if "data-widget-states" not in html:
        return {}
    sizes: dict[str, int] = {}
    for name, states in FIGURE_STATES.findall(html):
        sizes[name] = sizes.get(name, 0) + len(states.encode("utf-8"))
    return {name: (size, _fence_line(source.text, name)) for name, size in sizes.items()}


def _fence_line(text: str, name: str) -> int:
    """Return the line of the first widget fence naming `name` in a source (1 if none is found)."""
    fence = re.compile(rf"^[ \t]*(?:`{{3,}}|~{{3,}})[ \t]*widget[ \t]+{re.escape(name)}(?:\s|$)", re.M)
    found = fence.search(text)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def check_page_weight(course, problems: Problems, memo: Memo | None = None) -> None:
    """Warn about each page over PAGE_LIMIT whose baked widget states make up at least STATES_SHARE of it
    (in `serve` each page's warning is kept by model.per_unit: only replaced units are looked at)."""
    per_unit_problems(memo, "page weight", course.written, _page_weight, problems)


def _page_weight(unit, problems: Problems) -> None:
    """Warn about one unit's page if its baked widget states make it heavy."""
    sizes = unit.page.derived.get("widgets") or {}  # this extension's `analyse`
    if not sizes:
        return
    total = len(unit.page.html.encode("utf-8"))
    baked = sum(size for size, _ in sizes.values())
    if total <= PAGE_LIMIT or baked < total * STATES_SHARE:
        return
    largest = sorted(sizes.items(), key=lambda item: (-item[1][0], item[0]))
    shares = ", ".join(f"'{name}' {_kb(size)} ({_percent(size, total)})" for name, (size, _) in largest)
    name, (_, line) = largest[0]
    problems.warning(
        unit.page.source.path,
        line,
        f"page '{unit.slug}' is {_kb(total)} of HTML, {_percent(baked, total)} of it baked widget states: {shares}",
        f"bake fewer states: list fewer parameters under precompute in widgets/{name}/spec.yaml, or give its "
        "sliders a larger step; a state that is not baked is computed by live Python when it is chosen",
    )


def _kb(size: int) -> str:
    return f"{size / 1000:,.0f} KB"


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%"
