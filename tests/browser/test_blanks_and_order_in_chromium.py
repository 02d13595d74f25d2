"""Fill-in-the-blanks and ordering questions in headless Chromium: right, wrong and partly right answers,
keyboard-only and pointer ordering, the tally and the schedule afterwards, the no-JS study sheet, axe, touch
targets and a phone's width in both schemes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from helpers import FIXTURES, copy_course, serving
from playwright.sync_api import expect
from test_a11y import serious_violations

from coursegen.cli import main as cli_main

pytestmark = pytest.mark.browser
KEY = "coursegen:course:path:/"
PAGE = "practice.html"
STEPS = ["Mix", "Knead", "Rest", "Bake"]
CODE = ["def ready(hours):", "if hours > 2:", 'return "yes"', 'return "no"']
LEVELS = [0, 1, 2, 1]
REVIEW = """---
title: Practise the steps
summary: Blanks and ordering.
---

:::: blanks {lessons: [1], topic: fermentation, case: insensitive, id: yeast-gaps}
Name what yeast takes in and what it gives out.

Yeast feeds on [[sugar|sugars]] and gives off [[gas|carbon dioxide]].
::::

:::: order {lessons: [2], topic: kneading, id: loaf-steps}
Put the steps of a loaf in order.

1. Mix
2. Knead
3. Rest
4. Bake

::: explanation
The net forms before it rests.
:::
::::

:::: order {lessons: [2], id: ready-function}
Arrange the function.

```python
def ready(hours):
    if hours > 2:
        return "yes"
    return "no"
```
::::
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The review fixture course plus a review of blanks and ordering questions, built once."""
    root = copy_course(FIXTURES / "review", tmp_path_factory.mktemp("kinds") / "course")
    config = root / "course.yaml"
    config.write_text(
        config.read_text().replace("  - slug: check-dough\n", "  - slug: check-dough\n  - slug: practice\n")
    )
    (root / "reviews" / "04-practice.md").write_text(REVIEW)
    assert cli_main(["--root", str(root), "build"]) == 0
    with serving(root / "site") as base:
        yield base


def open_review(page, base):
    page.goto(base + PAGE)
    page.wait_for_selector("html[data-review=ready]")


def stored(page) -> dict:
    return json.loads(page.evaluate("key => localStorage.getItem(key)", KEY))["questions"]


def days_until(due: str) -> int:
    return round((datetime.fromisoformat(due.replace("Z", "+00:00")) - datetime.now(UTC)) / timedelta(days=1))


def summary(page) -> str:
    return page.locator("[data-tally-summary]").inner_text()


def blanks(page):
    return page.locator("section[data-kind=blanks]")


def shown(question) -> list[str]:
    return [text.strip() for text in question.locator(".order-item .order-text").all_inner_texts()]


def levels(question) -> list[int]:
    return [
        int(level) for level in question.locator(".order-item").evaluate_all("els => els.map(e => e.dataset.level)")
    ]


def arrange_by_keyboard(page, question, wanted: list[str], indents: list[int] | None = None) -> None:
    """Put the lines in the wanted order with keys only: focus a line, Space, arrows, Space."""
    for target, text in enumerate(wanted):
        now = shown(question)
        at = now.index(text, target)
        question.locator(".order-grab").nth(at).focus()
        page.keyboard.press("Space")
        for _ in range(at - target):
            page.keyboard.press("ArrowUp")
        for _ in range(indents[target] if indents else 0):
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Space")
    assert shown(question) == wanted


@pytest.mark.parametrize(
    "typed,score,marks,days",
    [
        (["Sugars", " carbon   dioxide "], "yes", ["right", "right"], 3),
        (["sugar", "oxygen"], "partly", ["right", "not right"], 2),
        (["salt", ""], "no", ["not right", "not right"], 1),
    ],
    ids=["right", "partly right", "wrong"],
)
def test_checking_the_blanks_marks_each_scores_the_question_and_schedules_it(
    typed, score, marks, days, site, page_and_watch
):
    page, watch = page_and_watch
    open_review(page, site)
    question = blanks(page)
    check = question.locator(".blanks-check")
    expect(question.locator("[data-answer]")).to_be_hidden()
    expect(check).to_be_disabled()
    for box, text in zip(question.locator("input[data-blank]").all(), typed, strict=True):
        box.fill(text)
    check.click()
    expect(question.locator(f"[data-score={score}]")).to_have_attribute("aria-pressed", "true")
    assert [m.strip().split(" ", 1)[1] for m in question.locator(".blanks-mark").all_inner_texts()] == marks
    expect(question.locator("[data-answer]")).to_be_visible()
    assert "also accepted: sugars" in question.locator("[data-answer]").inner_text()
    assert summary(page).startswith(f"1 of 3 answered: {int(score == 'yes')} yes, {int(score == 'partly')} partly")
    expect(question.locator(".question-next")).not_to_be_empty()
    record = stored(page)["practice/yeast-gaps"]
    assert record["score"] == score and record["blanks"] == typed and days_until(record["card"]["due"]) == days
    page.reload()
    page.wait_for_selector("html[data-review=ready]")
    expect(blanks(page).locator("input[data-blank]").first).to_have_value(typed[0])
    expect(blanks(page).locator(f"[data-score={score}]")).to_have_attribute("aria-pressed", "true")
    watch.assert_clean()


def test_steps_are_put_in_order_with_the_keyboard_alone_and_each_move_is_announced(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site)
    question = page.locator("#q-loaf-steps")
    start = shown(question)
    assert sorted(start) == sorted(STEPS) and start != STEPS
    first = question.locator(".order-grab").nth(start.index("Mix"))
    first.focus()
    page.keyboard.press("Space")
    expect(first).to_have_attribute("aria-pressed", "true")
    expect(page.locator("[role=status][aria-live=polite].visually-hidden")).to_contain_text("Picked up line")
    page.keyboard.press("Escape")
    arrange_by_keyboard(page, question, STEPS)
    expect(page.locator("[role=status][aria-live=polite].visually-hidden")).to_contain_text("Put down at line")
    question.locator(".order-check").focus()
    page.keyboard.press("Enter")
    expect(question.locator("[data-score=yes]")).to_have_attribute("aria-pressed", "true")
    assert question.locator(".order-mark").all_inner_texts() == ["✓ in place"] * 4
    assert "The net forms before it rests." in question.locator("[data-answer]").inner_text()
    record = stored(page)["practice/loaf-steps"]
    assert record["score"] == "yes" and days_until(record["card"]["due"]) == 3
    assert [STEPS[line] for line in record["order"]] == STEPS
    watch.assert_clean()


def test_a_wrong_order_scores_no_and_answering_again_starts_from_the_shuffle(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site)
    question = page.locator("#q-loaf-steps")
    start = shown(question)
    arrange_by_keyboard(page, question, ["Bake", "Mix", "Knead", "Rest"])
    question.locator(".order-check").click()
    expect(question.locator("[data-score=no]")).to_have_attribute("aria-pressed", "true")
    assert question.locator(".order-mark").all_inner_texts() == ["✗ not in place"] * 4
    assert summary(page).startswith("1 of 3 answered: 0 yes, 0 partly, 1 no.")
    assert days_until(stored(page)["practice/loaf-steps"]["card"]["due"]) == 1
    question.locator(".question-again").click()
    assert shown(question) == start
    expect(question.locator("[data-answer]")).to_be_hidden()
    watch.assert_clean()


def test_parsons_lines_are_indented_by_keyboard_and_a_wrong_indent_is_partly_right(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site)
    question = page.locator("#q-ready-function")
    arrange_by_keyboard(page, question, CODE)  # right order, every line flush left
    question.locator(".order-check").click()
    expect(question.locator("[data-score=partly]")).to_have_attribute("aria-pressed", "true")
    assert question.locator(".order-mark").all_inner_texts() == ["✓ in place"] + ["✗ not in place"] * 3
    assert days_until(stored(page)["practice/ready-function"]["card"]["due"]) == 2
    question.locator(".question-again").click()
    arrange_by_keyboard(page, question, CODE, LEVELS)
    assert levels(question) == LEVELS
    question.locator(".order-check").click()
    expect(question.locator("[data-score=yes]")).to_have_attribute("aria-pressed", "true")
    assert summary(page).startswith("1 of 3 answered: 1 yes")
    page.reload()
    page.wait_for_selector("html[data-review=ready]")
    assert shown(page.locator("#q-ready-function")) == CODE and levels(page.locator("#q-ready-function")) == LEVELS
    watch.assert_clean()


def test_a_pointer_drags_a_line_to_another_place_and_sideways_to_indent_it(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site)
    question = page.locator("#q-ready-function")
    start = shown(question)
    question.locator(".order-items").scroll_into_view_if_needed()  # the mouse moves in the viewport
    last = question.locator(".order-grab").nth(len(start) - 1).bounding_box()
    first = question.locator(".order-grab").nth(0).bounding_box()
    page.mouse.move(last["x"] + 20, last["y"] + last["height"] / 2)
    page.mouse.down()
    for step in range(1, 11):  # up over every other line, and two indent levels to the right
        page.mouse.move(last["x"] + 20 + 4.8 * step, last["y"] + (first["y"] - 10 - last["y"]) * step / 10)
    page.mouse.up()
    assert shown(question) == [start[-1], *start[:-1]], (start, shown(question))
    assert levels(question)[0] == 2
    assert stored(page)["practice/ready-function"]["levels"][0] == 2
    expect(question.locator(".order-grab").first).to_have_attribute("aria-pressed", "false")  # a drag is no pick
    watch.assert_clean()


def test_the_toolbar_moves_the_picked_line_for_touch(site, context_factory):
    page = context_factory(has_touch=True, viewport={"width": 390, "height": 844}).new_page()
    open_review(page, site)
    question = page.locator("#q-ready-function")
    start = shown(question)
    question.locator(".order-grab").nth(1).tap()
    question.locator(".order-up").tap()
    question.locator(".order-indent").tap()
    assert shown(question) == [start[1], start[0], *start[2:]] and levels(question)[0] == 1


def test_without_javascript_the_page_shows_the_gaps_the_shuffled_lines_and_the_answers_closed(site, context_factory):
    page = context_factory(java_script_enabled=False).new_page()
    page.goto(site + PAGE)
    expect(blanks(page).locator("input[data-blank]")).to_have_count(2)
    steps = page.locator("#q-loaf-steps")
    assert sorted(shown_plain(steps)) == sorted(STEPS) and shown_plain(steps) != STEPS
    for question in page.locator("section[data-question]").all():
        answer = question.locator("details[data-answer]")
        expect(answer).to_have_count(1)
        assert answer.get_attribute("open") is None
        answer.locator("summary").click()
    assert blanks(page).locator(".blanks-key li").all_inner_texts() == [
        "sugar (also accepted: sugars)",
        "gas (also accepted: carbon dioxide)",
    ]
    assert steps.locator(".order-key li").all_inner_texts() == STEPS
    assert 'return "yes"' in page.locator("#q-ready-function [data-answer] pre").inner_text()
    expect(page.locator(".blanks-check, .order-check")).to_have_count(0)


def shown_plain(question) -> list[str]:
    return [text.strip() for text in question.locator(".order-item").all_inner_texts()]


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
def test_axe_finds_no_serious_violation_and_every_control_is_a_24_px_target(width, theme, site, context_factory):
    context = context_factory(viewport={"width": width, "height": 844}, color_scheme=theme, bypass_csp=True)
    page = context.new_page()
    open_review(page, site)
    assert serious_violations(page) == []
    blanks(page).locator("input[data-blank]").first.fill("sugar")
    blanks(page).locator(".blanks-check").click()
    page.locator("#q-loaf-steps .order-grab").first.click()  # picked: the toolbar is live
    page.locator("#q-ready-function .order-check").click()
    assert serious_violations(page) == []
    small = page.evaluate(
        """() => [...document.querySelectorAll('section[data-question] :is(button, input, summary)')]
        .filter(e => e.offsetParent !== null)
        .map(e => [e.className || e.tagName, e.getBoundingClientRect()])
        .filter(([, r]) => r.width < 24 || r.height < 24).map(([name, r]) => `${name} ${r.width}x${r.height}`)"""
    )
    assert small == []
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")


def test_a_question_due_again_is_asked_afresh_and_the_course_map_counts_it(site, context_factory):
    context = context_factory()
    page = context.new_page()
    open_review(page, site)
    for box, text in zip(blanks(page).locator("input[data-blank]").all(), ["salt", "air"], strict=True):
        box.fill(text)
    blanks(page).locator(".blanks-check").click()
    steps = page.locator("#q-loaf-steps")
    start = shown(steps)
    arrange_by_keyboard(page, steps, ["Bake", "Mix", "Knead", "Rest"])
    steps.locator(".order-check").click()
    expect(steps.locator("[data-score=no]")).to_have_attribute("aria-pressed", "true")
    page.wait_for_function(  # both scores have their schedule
        "key => Object.values(JSON.parse(localStorage.getItem(key)).questions).filter(r => r.card).length === 2",
        arg=KEY,
    )
    later = context.new_page()
    later.clock.install(time=datetime.now(UTC) + timedelta(days=1, hours=1))
    later.goto(site + "index.html")
    later.wait_for_selector("html[data-review=ready]")
    assert later.locator("[data-due-count]").inner_text() == "2 questions are due for review."
    assert sorted(later.locator("[data-due-list] a").all_inner_texts()) == [  # the blanks' instruction, not its gaps
        "Name what yeast takes in and what it gives out.",
        "Put the steps of a loaf in order.",
    ]
    open_review(later, site)
    expect(blanks(later).locator("input[data-blank]").first).to_have_value("")
    expect(blanks(later).locator("[data-answer]")).to_be_hidden()
    expect(blanks(later).locator(".blanks-check")).to_be_visible()
    assert shown(later.locator("#q-loaf-steps")) == start
    expect(later.locator("#q-loaf-steps [data-answer]")).to_be_hidden()
    assert summary(later).startswith("0 of 3 answered")
