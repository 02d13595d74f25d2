"""The widget fence: every author mistake is reported at its line with the valid choices."""

from __future__ import annotations

import pytest
from helpers import run_cli

FENCE = "```widget overflow-slider g_min=-5 tile=16\n```"
CASES = [
    (
        "```widget overflow-slidr\n```",
        "lessons/01-gauges.md:8: unknown widget 'overflow-slidr'",
        "did you mean 'overflow-slider'? known widgets are: bf16-floors, kda-chunkwise, memory-per-sequence, overflow-slider",
    ),
    (
        "```widget\n```",
        "lessons/01-gauges.md:8: widget fence names no widget",
        "known widgets are: bf16-floors, kda-chunkwise, memory-per-sequence, overflow-slider",
    ),
    (
        "```widget overflow-slider gmin=-5\n```",
        "lessons/01-gauges.md:8: unknown parameter 'gmin' for widget 'overflow-slider'",
        "did you mean 'g_min'? known parameters of overflow-slider are: g_min, tile",
    ),
    (
        "```widget overflow-slider g_min=-12\n```",
        "lessons/01-gauges.md:8: parameter 'g_min' of widget 'overflow-slider' must be between -10 and -1, found '-12'",
        "Decay floor g_min: from -10 to -1 in steps of 0.5",
    ),
    (
        "```widget overflow-slider g_min=-5.2\n```",
        "lessons/01-gauges.md:8: parameter 'g_min' of widget 'overflow-slider' must be from -10 to -1 in steps of 0.5, found '-5.2'",
        "Decay floor g_min: from -10 to -1 in steps of 0.5",
    ),
    (
        "```widget overflow-slider tile=big\n```",
        "lessons/01-gauges.md:8: parameter 'tile' of widget 'overflow-slider' must be an integer, found 'big'",
        "Tile length L: from 4 to 64 in steps of 4",
    ),
    (
        "```widget overflow-slider tile=16.5\n```",
        "lessons/01-gauges.md:8: parameter 'tile' of widget 'overflow-slider' must be an integer, found '16.5'",
        "",
    ),
    (
        "```widget overflow-slider g_min=nan\n```",
        "lessons/01-gauges.md:8: parameter 'g_min' of widget 'overflow-slider' must be between -10 and -1, found 'nan'",
        "",
    ),
    (
        "```widget overflow-slider tile\n```",
        "lessons/01-gauges.md:8: widget parameter 'tile' must be written as name=value",
        "parameters of overflow-slider are: g_min, tile",
    ),
    (
        "```widget overflow-slider tile=16 tile=20\n```",
        "lessons/01-gauges.md:8: parameter 'tile' of widget 'overflow-slider' is given twice",
        "",
    ),
    (
        "```widget overflow-slider label='unclosed\n```",
        "lessons/01-gauges.md:8: cannot read the widget fence: No closing quotation",
        "",
    ),
    (
        "```widget overflow-slider\ng_min=-5\n```",
        "lessons/01-gauges.md:8: widget 'overflow-slider' takes no body",
        "write its parameters on the fence line, e.g. ```widget overflow-slider name=value",
    ),
    (
        "```widget kda-chunkwise gate=softplus\n```",
        "lessons/01-gauges.md:8: parameter 'gate' of widget 'kda-chunkwise' must be one of: bounded, unbounded, "
        "found 'softplus'",
        "Decay gate: one of: bounded, unbounded",
    ),
    (
        "```widget kda-chunkwise chunk_size=48\n```",
        "lessons/01-gauges.md:8: parameter 'chunk_size' of widget 'kda-chunkwise' must be one of: 16, 32, 64, 128, "
        "found '48'",
        "",
    ),
]


@pytest.mark.parametrize("fence, expect, hint", CASES, ids=[c[1].split(": ", 1)[1] for c in CASES])
def test_a_bad_widget_fence_is_reported_at_its_line_with_the_choices(fence, expect, hint, widget_course, capsys):
    lesson = widget_course / "lessons" / "01-gauges.md"
    lesson.write_text(lesson.read_text().replace(FENCE, fence))
    status, _, err = run_cli(capsys, "--root", widget_course, "check")
    assert status == 1 and "Traceback" not in err
    lines = err.splitlines()
    assert expect in lines, err
    if hint:
        assert lines[lines.index(expect) + 1].strip() == "hint: " + hint


ENTRY_CASES = [
    (
        "overflow-slider",
        "    a = overflow.analyse(g_min, tile)\n",
        "    a = overflow.analyse(g_min, tile)\n    1 / 0\n",
        "lessons/01-gauges.md:8: widget 'overflow-slider' failed for g_min=-5 tile=16: "
        "ZeroDivisionError: division by zero (widgets/overflow-slider/widget.py line 30)",
    ),
    (
        "overflow-slider",
        '"chart_text": chart,',
        "",
        "run() returned no chart_text (declared under outputs in spec.yaml)",
    ),
    (
        "kda-chunkwise",
        "def run(",
        "def run(:",
        "widget 'kda-chunkwise' failed for T=64 chunk_size=32 gate=bounded g_min=-5 seed=0: SyntaxError",
    ),
]


@pytest.mark.parametrize("name, old, new, expect", ENTRY_CASES, ids=["raises", "misses an output", "syntax error"])
def test_a_broken_widget_entry_is_reported_at_the_fence_with_its_own_line(
    name, old, new, expect, widget_course, capsys
):
    entry = widget_course / "widgets" / name / "widget.py"
    assert old in entry.read_text()
    entry.write_text(entry.read_text().replace(old, new))
    status, _, err = run_cli(capsys, "--root", widget_course, "check")
    assert status == 1 and "Traceback" not in err
    assert expect in err
