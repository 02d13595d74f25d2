"""Code cells in Chromium: baked outputs readable without JavaScript; edited and run live in the npm Pyodide, Reset.

The course is the live fixture course (Pyodide self-hosted from the npm package, which has no numpy),
with a lesson of pure-Python cells.
"""

from __future__ import annotations

import shutil

import pytest
from helpers import FIXTURES, copy_course, run_cli, serving
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

LESSON = """---
title: Cells
summary: Pure-Python code cells.
---

## Cells

```{code-cell} python
x = 6
print("set up")
```

```{code-cell} python
print(x * 7)
```
"""


class _NoCapture:
    def readouterr(self):
        return type("Captured", (), {"out": "", "err": ""})()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    course = copy_course(FIXTURES / "live", tmp_path_factory.mktemp("cells") / "course")
    shutil.copytree(FIXTURES / "live" / "tally", course / "tally")
    (course / "lessons" / "02-broken.md").unlink()
    (course / "lessons" / "02-cells.md").write_text(LESSON)
    yaml = course / "course.yaml"
    yaml.write_text(yaml.read_text().replace("  - slug: broken\n", "  - slug: cells\n"))
    status, _, err = run_cli(_NoCapture(), "--root", course, "build", "--strict")
    assert status == 0, err
    return course / "site"


def test_without_javascript_the_code_and_its_baked_output_are_there_to_read(site, context_factory):
    with serving(site) as base:
        page = context_factory(java_script_enabled=False).new_page()
        page.goto(base + "cells.html")
        second = page.locator('[data-code-cell="2"]')
        expect(second.locator(".code-cell-input pre")).to_have_text("print(x * 7)\n")
        expect(second.locator(".cell-stdout")).to_have_text("42\n")
        expect(second.locator(".cell-stdout")).to_be_visible()
        expect(page.locator(".code-cell-run")).to_have_count(0)


def test_an_edited_cell_runs_live_after_the_earlier_cells_is_kept_and_reset_puts_the_baked_one_back(
    site, context_factory
):
    with serving(site) as base:
        context = context_factory(service_workers="block")
        page = context.new_page()
        page.goto(base + "cells.html")
        second = page.locator('[data-code-cell="2"]')
        second.locator(".code-cell-edit").click()
        editor = second.locator(".cm-content")
        expect(editor).to_be_visible()
        editor.fill("print(x * 100)\nx + 1")
        second.locator(".code-cell-run").click()
        expect(second.locator(".code-cell-status")).to_have_text(
            "Showing a live result, computed by Python in your browser.", timeout=120000
        )
        expect(second.locator(".cell-stdout")).to_have_text("600\n")
        expect(second.locator(".cell-text")).to_have_text("7")
        page.reload()  # the edit is kept with the learner's progress
        expect(page.locator('[data-code-cell="2"] .cm-content')).to_have_text("print(x * 100)x + 1")
        expect(page.locator('[data-code-cell="2"] .cell-stdout')).to_have_text("42\n")  # the baked output still
        page.locator('[data-code-cell="2"] .code-cell-reset').click()
        expect(page.locator('[data-code-cell="2"] .cm-content')).to_have_text("print(x * 7)")
        expect(page.locator('[data-code-cell="2"] .cell-stdout')).to_have_text("42\n")
        page.reload()
        expect(page.locator('[data-code-cell="2"] .code-cell-input pre')).to_have_text("print(x * 7)\n")


def test_when_live_python_cannot_load_the_cell_says_why_and_keeps_its_baked_output(site, context_factory):
    with serving(site) as base:
        context = context_factory(service_workers="block")
        context.route("**/pyodide.mjs", lambda route: route.abort())
        page = context.new_page()
        page.goto(base + "cells.html")
        second = page.locator('[data-code-cell="2"]')
        second.locator(".code-cell-run").click()
        expect(second.locator(".code-cell-status")).to_have_text(
            "Live Python is unavailable: the Python runtime could not be reached (you may be offline, or its server "
            "is blocked); the results shown are still the ones computed when the page was built.",
            timeout=120000,
        )
        expect(second.locator(".cell-stdout")).to_have_text("42\n")
