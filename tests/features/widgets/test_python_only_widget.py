"""A widget folder with only spec.yaml and widget.py: the theme draws its controls and what run() returns."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES, copy_course
from widget_pages import figure_states

from coursegen.errors import ContentError, Problems
from coursegen.features.widgets import present
from coursegen.features.widgets.spec import load_widget
from coursegen.pipeline import build_site

WIDGET = "widgets/every-return"


@pytest.fixture
def course(tmp_path) -> Path:
    """A private copy of tests/fixtures/python-widget, with its own pure-Python package."""
    root = copy_course(FIXTURES / "python-widget", tmp_path / "course")
    shutil.copytree(FIXTURES / "python-widget" / "shapes", root / "shapes")
    return root


def states(outputs) -> dict:
    """Return {(shape, n): baked record} of the page's first figure."""
    html = outputs["returns.html"].decode()
    return {(p["shape"], p["n"]): r for p, r in figure_states(html, "every-return")}


def test_each_kind_of_return_is_baked_as_the_record_the_theme_draws(course):
    baked = states(build_site(course).outputs)
    assert len(baked) == 5 * 4
    assert baked[("text", 2)] == {"kind": "text", "value": "1 squared is 1\n2 squared is 4"}
    assert baked[("table", 2)] == {"kind": "table", "value": {"head": [], "rows": [["1 squared", "1"], ["2 squared", "4"]]}}
    assert baked[("grid", 2)] == {
        "kind": "table",
        "value": {
            "head": ["", "square", "half", "even"],
            "rows": [["row 1", "1", "0.5", "False"], ["row 2", "4", "1.0", "True"]],
        },
    }
    assert baked[("html", 3)] == {"kind": "html", "value": "<p>Squares up to <strong>9</strong>.</p>"}
    figure = baked[("figure", 3)]
    assert figure["kind"] == "figure" and figure["value"].startswith('<svg role="img" aria-label="Squares of 1 to 3"')


def test_the_page_shows_the_page_state_without_javascript_and_loads_no_stylesheet_it_lacks(course):
    outputs = build_site(course).outputs
    page = outputs["returns.html"].decode()
    assert (
        '<div class="widget-result" data-widget-result aria-live="polite">\n<table class="widget-table" tabindex="0">\n<tbody>\n'
        '<tr><th scope="row">1 squared</th><td>1</td></tr>\n<tr><th scope="row">2 squared</th><td>4</td></tr>\n'
        "</tbody>\n</table>\n</div>" in page
    )
    assert '<p class="widget-text">1 squared is 1\n2 squared is 4\n3 squared is 9</p>' in page  # the second figure
    assert "widgets/every-return/" not in page  # no view.js, no style.css of its own
    view = re.search(r'data-view="(assets/widget-view\.[0-9a-f]+\.js)"', page).group(1)
    assert view in outputs
    runtime = json.loads(re.search(r"<script type=\"application/json\" data-widget-runtime>(.*?)</script>", page).group(1))
    assert outputs[runtime["present"]] == Path(present.__file__).read_bytes()  # the very file the build ran
    controls = re.search(r"<form class=\"widget-controls\".*?</form>", page, re.S).group(0)
    assert '<select id="widget-every-return-shape" name="shape">' in controls
    assert '<input type="range" id="widget-every-return-n" name="n" min="1" max="4" step="1" value="2">' in controls


def test_a_figure_is_the_same_svg_in_every_build_with_no_date_and_ids_of_its_own(course, tmp_path):
    first = states(build_site(course).outputs)[("figure", 2)]["value"]
    again = copy_course(FIXTURES / "python-widget", tmp_path / "again")
    shutil.copytree(FIXTURES / "python-widget" / "shapes", again / "shapes")
    assert states(build_site(again).outputs)[("figure", 2)]["value"] == first
    assert "<dc:date>" not in first and "<metadata>" not in first and "<?xml" not in first
    ids = re.findall(r'\bid="([^"]+)"', first)
    assert ids and all(re.fullmatch(r"mpl-[0-9a-f]{8}-.+", name) for name in ids)
    assert all(f"#{name}" for name in ids)  # references follow: every url(#…) names an id of this figure
    assert set(re.findall(r"url\(#([^)]+)\)", first)) <= set(ids)
    other = states(build_site(course).outputs)[("figure", 3)]["value"]
    assert not set(ids) & set(re.findall(r'\bid="([^"]+)"', other))  # two figures on a page never share an id


BAD_RETURNS = {
    "a list": ("return [1, 2]", "run() returned list; a widget without result.html shows a string, a mapping"),
    "None": ("return None", "run() returned NoneType; a widget without result.html shows"),
    "a list in a table": (
        "return {'a': [1, 2]}",
        "run() returned a table whose row 'a' holds a list; a cell is a string, a number, a bool or None",
    ),
    "a script": (
        "return Html('<p>x</p><script>alert(1)</script>')",
        "run() returned HTML with a <script> element; a fragment must close what it opens, with no scripts",
    ),
    "an unclosed tag": ("return Html('<div><p>x</p>')", "run() returned HTML with a <div> that is never closed"),
    "a handler": ("return Html('<p onclick=\"x()\">x</p>')", "run() returned HTML with a <p> with an on… handler"),
}


@pytest.mark.parametrize("name", BAD_RETURNS)
def test_a_return_the_theme_cannot_show_is_an_error_at_the_fence_naming_run(course, name):
    code, message = BAD_RETURNS[name]
    entry = course / WIDGET / "widget.py"
    entry.write_text(entry.read_text().replace('    if shape == "text":', f"    {code}\n    if shape == \"text\":"))
    with pytest.raises(ContentError) as caught:
        build_site(course)
    line = next(n for n, text in enumerate(entry.read_text().splitlines(), 1) if text.startswith("def run("))
    assert str(caught.value).startswith(
        f"lessons/01-returns.md:7: widget 'every-return' failed for shape=table n=2: {message}"
    ), caught.value
    assert f"(widgets/every-return/widget.py line {line})" in str(caught.value).split("\n")[0]


def test_a_declared_output_a_table_lacks_is_an_error(course):
    spec = course / WIDGET / "spec.yaml"
    spec.write_text(spec.read_text() + 'outputs:\n  "3 squared": "the third row"\n')
    with pytest.raises(ContentError, match=r"failed for shape=table n=2: run\(\) returned no 3 squared"):
        build_site(course)


def test_result_html_without_view_js_is_named_not_taken_for_a_widget_without_a_look(course):
    (course / WIDGET / "result.html").write_text("<p>{{ result }}</p>\n")
    problems = Problems()
    assert load_widget(course, course / WIDGET, problems) is None
    assert problems.items[0].message == "widget 'every-return' lacks view.js, style.css"


def test_present_imports_only_the_standard_library_so_pyodide_runs_it_as_it_is():
    tree = ast.parse(Path(present.__file__).read_text())
    names = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert names == {"__future__", "collections", "hashlib", "html", "io", "re", "sys", "matplotlib"}


def test_inline_style_is_dropped_from_html_as_the_pages_policy_would_block_it():
    class Frame:  # what pandas' DataFrame._repr_html_ gives, in small
        def _repr_html_(self):
            return '<div>\n<style scoped>\n.x { color: red }\n</style>\n<table style="width: 1em"><tr><td>1</td></tr></table>\n</div>'

    assert present.present(Frame()) == {
        "kind": "html",
        "value": "<div>\n\n<table><tr><td>1</td></tr></table>\n</div>",
    }


def test_a_figure_carries_no_inline_style_so_the_policy_blocks_none_of_it():
    import matplotlib  # the plots extra: scripts/requirements-test.txt pins it
    from matplotlib.figure import Figure

    with matplotlib.rc_context():  # at matplotlib's defaults, as the worker runs a widget (other tests set their own)
        matplotlib.rcdefaults()
        figure = Figure(figsize=(2, 2))
        figure.subplots().plot([0, 1], [1, 0])
        svg = present.present(figure)["value"]
    assert "style" not in svg and 'stroke-linejoin="round"' in svg.split(">")[0] and 'fill="#ffffff"' in svg


def test_what_widget_py_imports_from_outside_the_course_is_not_timed_as_its_first_run(course, tmp_path, monkeypatch):
    """The module sleeps past the call limit: timed as the first run() (as before), the build fails however fast
    the machine; under the import limit it builds."""
    installed = tmp_path / "installed"
    installed.mkdir()
    (installed / "slow_to_import.py").write_text("import time\ntime.sleep(1.5)\n")
    monkeypatch.syspath_prepend(str(installed))  # the worker is a fork of this process: it has the same path
    entry = course / WIDGET / "widget.py"
    entry.write_text(entry.read_text().replace("import shapes\n", "import shapes\nimport slow_to_import\n", 1))
    config = course / "course.yaml"
    config.write_text(config.read_text() + "limits:\n  seconds: 1\n  import_seconds: 600\n")
    assert len(states(build_site(course).outputs)) == 5 * 4
