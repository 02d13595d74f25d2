"""Notebooks as lessons: an .ipynb as Jupyter writes it read into lesson text, and every problem placed by cell."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from helpers import run_cli
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

from coursegen.errors import Problems
from coursegen.stages.notebook import MAX_CELLS, read_notebook

SHOWN = "lessons/02-second.ipynb"
WIDGET_STATE = {  # what Jupyter saves for a notebook that displayed an ipywidget
    "application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2, "version_minor": 0}
}


def jupyter_notebook(cells, **metadata) -> str:
    """Return a notebook's text as Jupyter saves it: nbformat 4.5, a kernelspec, cell ids, one-space indent."""
    notebook = new_notebook(
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python", "version": "3.11.2"},
            "widgets": WIDGET_STATE,
            **metadata,
        }
    )
    notebook.cells = cells
    return nbformat.writes(notebook)


def front(title: str = "Second lesson") -> nbformat.NotebookNode:
    return new_raw_cell(f"---\ntitle: {title}\nsummary: From a notebook.\n---")


def plot_output():
    return new_output("display_data", data={"image/png": "iVBORw0KGgo=" * 50, "text/plain": "<Figure>"})


def every_kind_of_cell() -> list:
    return [
        front(),
        new_markdown_cell(
            "## Details\n\nBack to [the table](01-first.md#a-table-and-math).\n\n::: note\nKept.\n:::\n\n"
            "Ceiling: {calc}`overflow.BF16_MAX_LOG | .2f | = 88.72`."
        ),
        new_code_cell(
            "x = 2\nx ** 2",
            execution_count=7,
            outputs=[new_output("execute_result", data={"text/plain": "4"}, execution_count=7), plot_output()],
            metadata={"tags": ["hide-input", "my tag"]},
        ),
        new_raw_cell("\\newpage"),
        new_code_cell("", execution_count=None),  # the empty cell Jupyter leaves at the end of a session
        new_markdown_cell("Text with ```` a fence ```` inside."),
        new_code_cell("print('```')", outputs=[new_output("stream", name="stdout", text="```\n")]),
    ]


def read(text: str):
    problems = Problems()
    found = read_notebook(SHOWN, text, problems)
    return found, problems.items


def test_a_notebook_becomes_front_matter_markdown_and_code_cell_fences():
    (text, _cells), problems = read(jupyter_notebook(every_kind_of_cell()))
    assert text == (
        "---\ntitle: Second lesson\nsummary: From a notebook.\n---\n\n"
        "## Details\n\nBack to [the table](01-first.md#a-table-and-math).\n\n::: note\nKept.\n:::\n\n"
        "Ceiling: {calc}`overflow.BF16_MAX_LOG | .2f | = 88.72`.\n\n"
        '```{code-cell} python\n:tags: [hide-input, "my tag"]\nx = 2\nx ** 2\n```\n\n'
        "Text with ```` a fence ```` inside.\n\n"
        "````{code-cell} python\nprint('```')\n````\n"
    )
    assert "iVBOR" not in text and "execution_count" not in text  # stored outputs are no part of the lesson
    assert [(p.severity, p.where, p.message) for p in problems] == [
        ("warning", "cell 4", "raw cell skipped: a lesson shows markdown and code cells")
    ]


def test_every_line_of_the_text_is_placed_in_its_cell():
    (text, cells), _ = read(jupyter_notebook(every_kind_of_cell()))
    lines = text.split("\n")
    assert cells.place(3) == "cell 1, line 3"  # the summary line of the raw front-matter cell
    assert cells.place(lines.index("::: note") + 1) == "cell 2, line 5"
    assert cells.place(lines.index("x ** 2") + 1) == "cell 3, line 2"
    assert cells.place(lines.index("```{code-cell} python") + 1) == "cell 3"  # the fence stands for the whole cell
    assert cells.place(lines.index("Text with ```` a fence ```` inside.") + 1) == "cell 6, line 1"
    assert cells.place(lines.index("print('```')") + 1) == "cell 7, line 1"


def test_front_matter_may_come_from_the_notebook_metadata():
    (text, cells), problems = read(
        jupyter_notebook([new_markdown_cell("Body.")], coursegen={"title": "From metadata", "draft": False})
    )
    assert text == '---\n"draft": false\n"title": "From metadata"\n---\n\nBody.\n'  # Jupyter sorts keys
    assert cells.place(2) == "notebook metadata 'coursegen'" and cells.place(6) == "cell 1, line 1"
    assert problems == []


def test_front_matter_given_twice_is_an_error_at_cell_1():
    _, problems = read(jupyter_notebook([front(), new_markdown_cell("Body.")], coursegen={"title": "Twice"}))
    assert [(p.where, p.message) for p in problems] == [
        ("cell 1", "front matter is given twice: in cell 1 and in the notebook metadata")
    ]


def test_an_attachment_is_an_error_at_its_line_in_the_cell():
    cell = new_markdown_cell("Look:\n\n![plot](attachment:plot.png)", attachments={"plot.png": {"image/png": "iVBO"}})
    (text, cells), problems = read(jupyter_notebook([front(), cell]))
    assert [p.message for p in problems] == ["cell attachment 'plot.png' is not published"]
    assert cells.place(problems[0].line) == "cell 2, line 3"
    assert text.endswith("Look:\n\nplot\n")  # its alt text: no follow-on problem about a missing image


def test_a_notebook_of_another_language_is_refused_at_its_kernelspec():
    julia = {"display_name": "Julia 1.10", "language": "julia", "name": "julia-1.10"}
    found, problems = read(jupyter_notebook([front(), new_code_cell("x = 1")], kernelspec=julia))
    assert found is None
    assert [(p.where, p.message) for p in problems] == [
        ("notebook metadata 'kernelspec'", "this notebook's kernel runs julia, and a lesson's code cells run in Python")
    ]


# ---- whole builds: the notebook is a unit like a Markdown file ------------------------------


def as_notebook(course: Path, cells, **metadata) -> Path:
    """Replace the mini course's second lesson by a notebook of these cells."""
    (course / "lessons" / "02-second.md").unlink(missing_ok=True)
    first = course / "lessons" / "01-first.md"
    first.write_text(first.read_text().replace("02-second.md", "02-second.ipynb"))  # links name the notebook
    path = course / SHOWN
    path.write_text(jupyter_notebook(cells, **metadata), encoding="utf-8")
    return path


def test_a_notebook_lesson_builds_into_its_page(mini_course, capsys):
    as_notebook(mini_course, every_kind_of_cell())
    status, _out, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 0, err
    assert f"{SHOWN}: cell 4: warning: raw cell skipped" in err
    page = (mini_course / "site" / "second.html").read_text()
    assert 'id="details"' in page and 'href="first.html#a-table-and-math"' in page
    assert "callout" in page and "x ** 2" in page and "iVBOR" not in page
    assert '<span class="calc" data-calc="overflow.BF16_MAX_LOG">88.72</span>' in page  # {calc} in a markdown cell


def test_a_bad_callout_in_a_cell_is_reported_at_that_cell_and_line(mini_course, capsys):
    cells = every_kind_of_cell()
    cells[1] = new_markdown_cell("## Details\n\n::: cavaet\nMisspelled.\n:::")
    as_notebook(mini_course, cells)
    status, _out, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 1 and "Traceback" not in err
    assert f"{SHOWN}: cell 2, line 3: unknown block '::: cavaet'" in err, err


def test_a_front_matter_mistake_is_reported_in_its_cell_or_in_the_metadata(mini_course, capsys):
    as_notebook(mini_course, [new_raw_cell("---\ntitle: Second\nsumary: typo\n---"), new_markdown_cell("Body.")])
    status, _out, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 1 and f"{SHOWN}: cell 1, line 3: unknown front-matter key 'sumary'" in err, err
    as_notebook(mini_course, [new_markdown_cell("Body.")], coursegen={"title": "Second", "sumary": "typo"})
    status, _out, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 1 and f"{SHOWN}: notebook metadata 'coursegen': unknown front-matter key 'sumary'" in err, err


def test_a_notebook_without_front_matter_is_told_where_to_put_it(mini_course, capsys):
    as_notebook(mini_course, [new_markdown_cell("Body.")])
    status, _out, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 1 and f"{SHOWN}: cell 1, line 1: no YAML front matter" in err, err
    assert "start cell 1 with a '# Title' heading, make it a raw cell of '---'" in err


def test_a_raw_cell_fails_a_strict_build(mini_course, capsys):
    as_notebook(mini_course, every_kind_of_cell())
    status, _out, err = run_cli(capsys, "--root", mini_course, "build", "--strict")
    assert status == 1 and f"{SHOWN}: cell 4: warning: raw cell skipped" in err


def test_a_unit_with_both_a_markdown_file_and_a_notebook_names_both(mini_course, capsys):
    (mini_course / SHOWN).write_text(jupyter_notebook([front(), new_markdown_cell("Body.")]))
    status, _out, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 1
    assert (
        "lessons/02-second.md:1: unit 'second' has two source files: lessons/02-second.ipynb and lessons/02-second.md"
        in err
    ), err


# ---- notebooks that cannot be lessons: one clear message each, the previous site untouched ----


def broken_notebooks() -> dict:
    valid = json.loads(jupyter_notebook([front(), new_markdown_cell("Body.")]))
    huge = json.loads(jupyter_notebook([front(), new_code_cell("big()"), new_markdown_cell("Body.")]))
    huge["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x" * 50_000_000}]
    many = json.loads(jupyter_notebook([front()] + [new_markdown_cell(f"Cell {n}.") for n in range(9_999)]))
    no_type = json.loads(jupyter_notebook([front(), new_markdown_cell("Body.")]))
    del no_type["cells"][1]["cell_type"]
    return {
        "not JSON": (
            '{\n "cells": [\n  {"cell_type": "markdown",}\n ]\n}\n',
            f"{SHOWN}:3: not a Jupyter notebook: invalid JSON: Expecting property name enclosed in double quotes",
        ),
        "nbformat 3": (
            json.dumps({**valid, "nbformat": 3}),
            f"{SHOWN}:1: not a notebook coursegen reads: it is nbformat 3, and lessons are nbformat 4",
        ),
        "JSON but no notebook": ("[1, 2]", f"{SHOWN}:1: not a notebook coursegen reads: it has no 'nbformat' field"),
        "10,000 cells": (
            json.dumps(many),
            f"{SHOWN}: cell {MAX_CELLS + 1}: this notebook has 10,000 cells; a lesson holds at most 1,000",
        ),
        "a 50 MB output": (
            json.dumps(huge),
            f"{SHOWN}: cell 2: this cell stores 50.0 million characters of output; "
            "a lesson's cells may store at most 10 million",
        ),
        "a cell without a type": (json.dumps(no_type), f"{SHOWN}: cell 2: not a valid nbformat 4 notebook: "),
    }


BROKEN = broken_notebooks()


@pytest.mark.parametrize("name", BROKEN)
def test_a_notebook_that_cannot_be_a_lesson_is_one_located_error(name, mini_course, capsys):
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    before = {p: p.read_bytes() for p in (mini_course / "site").rglob("*") if p.is_file()}
    as_notebook(mini_course, [])
    text, expected = BROKEN[name]
    (mini_course / SHOWN).write_text(text)
    status, _out, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 1 and "Traceback" not in err
    assert err.startswith(expected), err
    assert "1 problem(s)" in err  # one clear error, no follow-on ones
    assert {p: p.read_bytes() for p in (mini_course / "site").rglob("*") if p.is_file()} == before


def test_a_notebook_saved_on_windows_reads_the_same():
    cells = [front(), new_markdown_cell("## Details\r\n\r\nText.\r\n"), new_code_cell("x = 1\r\nx")]
    (text, _), _ = read(jupyter_notebook(cells))
    assert "\r" not in text and "## Details\n\nText.\n\n```{code-cell} python\nx = 1\nx\n```\n" in text
