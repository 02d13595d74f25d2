"""Live Python that does not arrive, in Chromium: every request for the Pyodide runtime hangs (a CDN that drops
requests silently). A widget marks its result pending while its controls ask for another, and widgets, exercises
and code cells each say in one sentence that the runtime is not arriving, long before a boot's time limit, while
the results baked into the page stay.

The stall limit is python-client.js's STALL_MS (10 s); the tests shorten it through its documented hook,
`globalThis.coursegenStallMs`, so they wait for a sentence and never for a clock.
"""

from __future__ import annotations

import re
import shutil

import pytest
from helpers import FIXTURES, copy_course, run_cli, serving
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
FIGURE = "#widget-square"
NOT_ARRIVING = re.compile(r"^Python has not arrived after \d+ seconds")
LESSON = """---
title: Stalls
---

## A cell

```{code-cell} python
print(6 * 7)
```

## An exercise

:::: exercise {id: double}
Write `double(x)`, which returns twice `x`.

```python starter
def double(x):
    ...
```

```python solution
def double(x):
    return 2 * x
```

```yaml checks
function: double
cases:
  - {name: two, args: [2]}
```
::::
"""


class _NoCapture:
    def readouterr(self):
        return type("Captured", (), {"out": "", "err": ""})()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The live fixture course (npm Pyodide, self-hosted) with a page holding a code cell and an exercise."""
    course = copy_course(FIXTURES / "live", tmp_path_factory.mktemp("stall") / "course")
    shutil.copytree(FIXTURES / "live" / "tally", course / "tally")
    (course / "lessons" / "03-stalls.md").write_text(LESSON)
    yaml = course / "course.yaml"
    yaml.write_text(yaml.read_text() + "  - slug: stalls\n")
    status, _, err = run_cli(_NoCapture(), "--root", course, "build")
    assert status == 0, err
    return course / "site"


@pytest.fixture
def hanging(site, context_factory, page_and_watch):
    """Open a page of the site whose Pyodide requests never get an answer; yield (page, watch, hung URLs)."""
    watch_class = type(page_and_watch[1])
    with serving(site) as base:

        def open_(name: str):
            context = context_factory(service_workers="block")
            context.add_init_script("globalThis.coursegenStallMs = 1500")
            page = context.new_page()
            watch = watch_class(page)
            hung = []
            page.route("**/pyodide/**", lambda route: hung.append(route.request.url))  # never fulfilled
            page.goto(base + name)
            return page, watch, hung

        yield open_


def test_a_widget_marks_its_result_pending_and_says_when_python_is_not_arriving(hanging):
    page, watch, hung = hanging("square.html")
    expect(page.locator(f"{FIGURE}[data-widget-ready]")).to_have_count(1)
    result, note = page.locator(f"{FIGURE} [data-widget-result]"), page.locator(f"{FIGURE} .widget-pending")
    shown = page.locator(f"{FIGURE} [data-out=text]")
    expect(shown).to_have_text("3 squared is 9")
    expect(result).not_to_have_attribute("data-pending", "")
    box = page.locator(f"{FIGURE} input[type=number][name=x]")
    box.fill("2.5")  # off the baked grid: only live Python can answer
    box.press("Enter")
    expect(result).to_have_attribute("data-pending", "")
    expect(note).to_have_text("Not yet computed for these values: the result shown is for the previous ones.")
    expect(note).to_have_attribute("role", "status")
    expect(note).to_be_visible()
    status = page.locator(f"{FIGURE} [data-live-status]")
    expect(status).to_have_text(NOT_ARRIVING, timeout=60000)
    assert hung, "no request for the runtime was made"
    expect(shown).to_have_text("3 squared is 9")  # the baked result stays, still marked as not the one asked for
    expect(result).to_have_attribute("data-pending", "")
    page.locator(f"{FIGURE}-x").fill("4")  # back on the baked grid: answered at once, no longer pending
    expect(shown).to_have_text("4 squared is 16")
    expect(result).not_to_have_attribute("data-pending", "")
    expect(note).to_have_text("")
    watch.assert_clean()


def test_an_exercise_says_when_python_is_not_arriving(hanging):
    page, watch, _ = hanging("stalls.html")
    question = page.locator("#q-double")
    question.locator(".exercise-run").click()
    expect(question.locator(".exercise-status")).to_have_text(NOT_ARRIVING, timeout=60000)
    watch.assert_clean()


def test_a_code_cell_says_when_python_is_not_arriving_and_keeps_its_baked_output(hanging):
    page, watch, _ = hanging("stalls.html")
    cell = page.locator('[data-code-cell="1"]')
    cell.locator(".code-cell-run").click()
    expect(cell.locator(".code-cell-status")).to_have_text(NOT_ARRIVING, timeout=60000)
    expect(cell.locator(".cell-stdout")).to_have_text("42\n")
    watch.assert_clean()
