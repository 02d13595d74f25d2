"""docs/widgets.md's reference against the code: every spec key, result.html variable and runtime member
is documented, and nothing documented is missing from the code."""

from __future__ import annotations

import ast
import inspect
import re

from helpers import REPO

from coursegen.features.widgets import extension, spec
from coursegen.stages import render

GUIDE = (REPO / "docs" / "widgets.md").read_text(encoding="utf-8")
WIDGETS_JS = (REPO / "templates" / "assets" / "widgets.js").read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """Return the text under `heading` (a Markdown heading line) up to the next heading of any level."""
    start = text.index(heading + "\n") + len(heading) + 1
    following = re.search(r"^#{1,6} ", text[start:], re.M)
    return text[start : start + following.start()] if following else text[start:]


def first_column(text: str, prefix: str = "") -> list[str]:
    """Return the backticked names that open the rows of the Markdown tables in `text` (after `prefix`)."""
    return re.findall(rf"^\| `{re.escape(prefix)}([A-Za-z_]+)[`(]", text, re.M)


def tables(text: str) -> list[str]:
    """Return each table of `text` as its own text."""
    return [block.strip() for block in re.split(r"\n\s*\n", text) if block.strip().startswith("|")]


def test_every_spec_key_is_documented_and_no_other():
    top, param = tables(section(GUIDE, "### spec.yaml"))[:2]
    assert first_column(top) == list(spec.SPEC.keys)
    assert first_column(param) == list(spec.PARAM_KEYS)
    for kind in spec.PARAM_TYPES:
        assert f"`{kind}`" in param


def render_variables() -> list[str]:
    """Return the names render_figure passes to the figure's template (and so to result.html)."""
    tree = ast.parse(inspect.getsource(extension.render_figure))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "render"]
    assert len(calls) == 1
    return [keyword.arg for keyword in calls[0].keywords if keyword.arg]


def test_every_variable_result_html_receives_is_documented_and_no_other():
    text = section(GUIDE, "### result.html")
    assert sorted(first_column(text)) == sorted(render_variables())
    own_filters = {"num"}  # the filters render's environment, which widgets' figures are made in, adds to Jinja's own
    assert all(f"the filter `{name}`" in text for name in own_filters)
    source = inspect.getsource(render.make_environment)
    assert set(re.findall(r'env\.filters\["(\w+)"\]', source)) == own_filters


def runtime_methods() -> set[str]:
    """Return the methods of widgets.js's WidgetRuntime, the object a view's mount() is given."""
    body = WIDGETS_JS[WIDGETS_JS.index("class WidgetRuntime") :]
    body = body[: body.index("\n}\n")]
    return set(re.findall(r"^  (?:async )?([a-z][A-Za-z]*)\(", body, re.M)) - {"constructor"}


def test_every_runtime_member_a_view_uses_is_documented_and_each_documented_one_exists():
    documented = set(first_column(section(GUIDE, "### view.js"), "runtime."))
    assert documented and documented <= runtime_methods(), documented - runtime_methods()
    views = [*REPO.glob("widgets/*/view.js"), *REPO.glob("coursegen/authoring/skeletons/**/view.js")]
    views += [*REPO.glob("tests/fixtures/*/widgets/*/view.js")]
    used = {name for view in views for name in re.findall(r"\bruntime\.([A-Za-z_]+)", view.read_text())}
    assert len(views) >= 4 and used and used <= documented, used - documented


def test_the_markup_a_view_relies_on_is_what_the_page_makes():
    text = section(GUIDE, "### view.js") + section(GUIDE, "### result.html")
    assert "data-widget-ready" in text and "dataset.widgetReady" in WIDGETS_JS
    assert "`widget:result`" in text and '"widget:result"' in WIDGETS_JS
    assert "`data-out=" in text and "[data-out]" in WIDGETS_JS
    assert "export function mount(element, params, runtime)" in (REPO / "widgets/overflow-slider/view.js").read_text()
    assert "view.mount(figure, JSON.parse(figure.dataset.params), new WidgetRuntime(figure, python))" in WIDGETS_JS
