"""Widget specs: a broken spec.yaml or widget folder is reported at its line, and grids are right."""

from __future__ import annotations

import pytest

from coursegen.errors import Problems
from coursegen.features.widgets.spec import Param, check_value, load_widget, parse_value

SPEC = "widgets/overflow-slider/spec.yaml"
CASES = [
    (
        "precompute: grid",
        "precompute: all",
        f"{SPEC}:4: precompute must be 'grid' or a list of parameters, found 'all'",
    ),
    ("precompute: grid", "precompute: [g_min, tiles]", f"{SPEC}:4: precompute names unknown parameter 'tiles'"),
    ("params:", "parms:", f"{SPEC}:5: unknown key 'parms' in a widget spec"),
    ("    type: int", "    type: integer", f"{SPEC}:14: parameter 'tile' has type 'integer'"),
    (
        "    default: 16",
        "    default: 100",
        f"{SPEC}:14: parameter 'tile' has default 100, which must be between 4 and 64",
    ),
    (
        "    default: 16",
        "    default: 18",
        f"{SPEC}:14: parameter 'tile' has default 18, which must be from 4 to 64 in steps of 4",
    ),
    (
        "    max: 64",
        "    max: 2",
        f"{SPEC}:14: parameter 'tile' needs min < max and step > 0, found min 4, max 2, step 4",
    ),
    ("    max: 64", "    max: 66", f"{SPEC}:14: parameter 'tile' has a range that is not a whole number of steps"),
    ("    step: 4", "    step: 0.5", f"{SPEC}:14: parameter 'tile' is int, so its min, max and step must be integers"),
    ('    label: "Tile length L"', "", f"{SPEC}:14: parameter 'tile' lacks label"),
    ("    step: 0.5", "    step: 0.0001", f"{SPEC}:4: precompute would bake 1440016 states, more than 2000"),
    ('title: "Will one tile overflow BF16?"', "", f"{SPEC}:1: a widget spec has no 'title'"),
    ("    unit: tokens", "    units: tokens", f"{SPEC}:21: unknown key 'units' in parameter 'tile'"),
]


@pytest.mark.parametrize("old, new, expect", CASES, ids=[c[2].split(": ", 1)[1] for c in CASES])
def test_a_broken_spec_is_reported_at_its_line(old, new, expect, widget_course):
    spec = widget_course / SPEC
    text = spec.read_text()
    assert old in text
    spec.write_text(text.replace(old, new, 1))
    problems = Problems()
    assert load_widget(widget_course, spec.parent, problems) is None
    assert expect in [p.format().split("\n")[0] for p in problems.items]


def test_a_widget_folder_missing_a_file_names_it(widget_course):
    (widget_course / "widgets" / "kda-chunkwise" / "view.js").unlink()
    problems = Problems()
    assert load_widget(widget_course, widget_course / "widgets" / "kda-chunkwise", problems) is None
    assert problems.items[0].format() == (
        "widgets/kda-chunkwise/spec.yaml:1: widget 'kda-chunkwise' lacks view.js\n"
        "    hint: a widget folder holds spec.yaml and widget.py, and for a look of its own also "
        "view.js, result.html, style.css"
    )


def test_a_choice_default_must_be_one_of_the_choices(widget_course):
    spec = widget_course / "widgets" / "kda-chunkwise" / "spec.yaml"
    spec.write_text(spec.read_text().replace("    default: bounded", "    default: sigmoid"))
    problems = Problems()
    assert load_widget(widget_course, spec.parent, problems) is None
    assert "parameter 'gate' has default 'sigmoid', not one of its choices" in problems.items[0].message


def test_the_overflow_slider_grid_is_every_floor_and_tile_with_the_page_state_first(widget_course):
    widget = load_widget(widget_course, widget_course / "widgets" / "overflow-slider", Problems())
    grid = widget.grid({"g_min": -6.0, "tile": 24})
    assert grid[0] == {"g_min": -6.0, "tile": 24}
    assert len(grid) == 19 * 16 == len({tuple(s.values()) for s in grid})
    assert widget.param("g_min").values()[:3] == (-10.0, -9.5, -9.0)
    assert widget.param("tile").values()[-1] == 64


def test_the_kda_demo_bakes_both_gates_and_every_chunk_size_for_the_page_parameters(widget_course):
    widget = load_widget(widget_course, widget_course / "widgets" / "kda-chunkwise", Problems())
    page = {"T": 64, "chunk_size": 32, "gate": "bounded", "g_min": -5, "seed": 3}
    grid = widget.grid(page)
    assert len(grid) == 8 and grid[0] == page
    assert {(s["gate"], s["chunk_size"]) for s in grid} == {
        (g, c) for g in ("bounded", "unbounded") for c in (16, 32, 64, 128)
    }
    assert all(s["T"] == 64 and s["seed"] == 3 for s in grid)


@pytest.mark.parametrize("text, value", [("-5", -5.0), ("-9.5", -9.5), ("-1", -1.0)])
def test_numbers_on_the_grid_are_accepted(text, value):
    param = Param("g_min", "float", -5, "g", min=-10, max=-1, step=0.5)
    assert parse_value(param, text) == value


def test_check_value_rejects_infinity():
    with pytest.raises(ValueError, match="between -10 and -1"):
        check_value(Param("g_min", "float", -5, "g", min=-10, max=-1, step=0.5), float("-inf"))
