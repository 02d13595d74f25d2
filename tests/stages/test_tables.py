"""Markdown tables: alignment the site's CSP lets through, roles a cell's `|` would cut."""

from __future__ import annotations

import re

import pytest
from helpers import REPO

from coursegen.errors import ContentError
from coursegen.pipeline import build_site

TABLE = "| name | value |\n|:-----|------:|\n| eps | {calc}`2 ** -52 \\| sci:2` |\n| tile | 16 |\n"


def put(course, text: str) -> None:
    """Replace the mini course's 'Text.' paragraph in lesson 2 with `text`."""
    lesson = course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", text))


def test_column_alignment_is_a_class_the_theme_styles_not_an_inline_style(mini_course):
    put(mini_course, TABLE)
    page = build_site(mini_course).outputs["second.html"].decode()
    assert "text-align" not in page  # the site's CSP blocks inline styles
    assert '<th class="align-left">name</th>' in page and '<th class="align-right">value</th>' in page
    assert '<td class="align-right">16</td>' in page
    css = (REPO / "templates" / "assets" / "style.css").read_text()
    assert re.search(r"td\.align-right[^{]*\{ text-align: right; \}", css)


def test_a_role_with_escaped_bars_stays_whole_in_a_table_cell(mini_course):
    put(mini_course, TABLE)
    page = build_site(mini_course).outputs["second.html"].decode()
    assert "2.2 × 10⁻¹⁶</span></td>" in page and "{calc}" not in page


def test_a_role_cut_by_a_table_bar_is_reported_at_its_line_with_the_escape(mini_course):
    put(mini_course, TABLE.replace("\\|", "|"))
    with pytest.raises(ContentError) as caught:
        build_site(mini_course)
    problem = caught.value.problems[0]
    assert problem.format().splitlines() == [
        "lessons/02-second.md:14: the table cuts {calc} at a '|': a '|' inside a role splits the cell",
        "    hint: write '\\|' for each '|' inside the role in a table cell, as in {calc}`EXPRESSION \\| .2f`",
    ]
