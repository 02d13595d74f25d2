"""The review session in Chromium: with questions due, the course map offers it; it asks them one at a
time, interleaved across the course, schedules each answer as the review pages do, and leads back."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from helpers import FIXTURES, copy_course, serving
from playwright.sync_api import expect
from test_a11y import serious_violations

from coursegen.cli import main as cli_main

pytestmark = pytest.mark.browser
KEY = "coursegen:course:path:/"  # as test_review.py: the fixture has no id and is served at the root


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = copy_course(FIXTURES / "review", tmp_path_factory.mktemp("session") / "course")
    assert cli_main(["--root", str(root), "build"]) == 0
    with serving(root / "site") as base:
        yield base


def answer_every_question(page, url: str) -> None:
    """Answer every question of a page (the first option of a choice), so each gets a schedule."""
    page.goto(url)
    page.wait_for_selector("html[data-review=ready]")
    for section in page.locator("section[data-kind]").all():
        answer(section)


def answer(section) -> None:
    if section.get_attribute("data-kind") == "choice":
        section.locator("li[data-option='0'] > .choice-option").click()
        return
    section.locator(".question-aloud input").check()
    section.locator(".question-reveal").click()
    section.locator("[data-score=yes]").click()


def stored(page) -> dict:
    return json.loads(page.evaluate("key => localStorage.getItem(key)", KEY))["questions"]


def test_with_questions_due_the_map_offers_a_session_that_asks_them_one_at_a_time(site, context_factory):
    context = context_factory(bypass_csp=True)  # axe is injected as a script, which the pages' CSP refuses
    page = context.new_page()
    answer_every_question(page, site + "yeast.html")
    answer_every_question(page, site + "check-dough.html")
    page.goto(site + "index.html")
    page.wait_for_selector("html[data-review=ready]")
    expect(page.locator("[data-course-next]")).not_to_contain_text("Questions are due")  # nothing due yet
    due = sorted(stored(page))
    later = context.new_page()
    now = datetime.now(UTC) + timedelta(days=400)  # every answer's first interval has passed
    later.clock.install(time=now)
    later.goto(site + "index.html")
    later.wait_for_selector("html[data-review=ready]")
    offer = later.locator("[data-course-next]")
    expect(offer).to_have_text(f"Questions are due: Review {len(due)} questions now")
    offer.locator("a").click()
    later.wait_for_url("**/review-session.html")
    progress = later.locator("[data-session-progress]")
    asked = []
    for number in range(1, len(due) + 1):
        expect(progress).to_have_text(f"Question {number} of {len(due)}")
        question = later.locator("[data-session-question] section[data-question]")
        expect(question).to_have_count(1)  # one at a time
        expect(question.locator("[data-answer]")).to_be_hidden()  # asked afresh
        expect(later.locator("[data-session-next]")).to_be_hidden()  # until it is answered
        asked.append(question.get_attribute("data-question"))
        if number == 1:
            assert serious_violations(later) == []
        answer(question)
        expect(question.locator(".question-next")).to_contain_text("Next review")
        later.locator("[data-session-next]").click()
    expect(later.locator("[data-session-status]")).to_have_text(f"Done: you reviewed {len(due)} questions.")
    units = [next(key.split("/")[0] for key in due if key.split("/", 1)[1] == name) for name in asked]
    assert sorted(units) == sorted(key.split("/")[0] for key in due)
    assert units[0] != units[1], f"interleaved across units: {units}"
    for key, record in stored(later).items():  # each answered again and scheduled after the session's now
        assert datetime.fromisoformat(record["card"]["due"].replace("Z", "+00:00")) > now, key
    later.locator("[data-session-back]").click()
    later.wait_for_url("**/index.html")
    later.wait_for_selector("html[data-review=ready]")
    expect(later.locator("[data-course-next]")).not_to_contain_text("Questions are due")
    expect(later.locator("[data-due]")).to_be_hidden()


def test_without_anything_due_the_session_says_so_and_without_javascript_it_leads_to_the_map(site, context_factory):
    page = context_factory().new_page()
    page.goto(site + "review-session.html")
    expect(page.locator("[data-session-status]")).to_contain_text("Nothing is due for review")
    plain = context_factory(java_script_enabled=False).new_page()
    plain.goto(site + "review-session.html")
    expect(plain.locator("[data-session-status]")).to_contain_text("needs JavaScript")
    expect(plain.locator("[data-session-back]")).to_have_attribute("href", "index.html")
