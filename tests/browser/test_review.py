"""A learner works through the review fixture in headless Chromium: commit, reveal, score, tally, storage."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from helpers import FIXTURES, copy_course, serving
from playwright.sync_api import expect

from coursegen.cli import main as cli_main

pytestmark = pytest.mark.browser
KEY = "coursegen:course:path:/"  # the fixture has no id: served at the root, its progress is kept under "/"
REVIEW = "check-dough.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The review fixture course, built once for this module."""
    root = copy_course(FIXTURES / "review", tmp_path_factory.mktemp("review") / "course")
    assert cli_main(["--root", str(root), "build"]) == 0
    with serving(root / "site") as base:
        yield base


def open_review(page, base, name=REVIEW):
    page.goto(base + name)
    page.wait_for_selector("html[data-review=ready]")


def question(page, kind):
    return page.locator(f"section[data-kind={kind}]")


def summary(page):
    return page.locator("[data-tally-summary]").inner_text()


def answer_recall(page, score, text="about fifty degrees"):
    recall = question(page, "recall")
    recall.locator("textarea").fill(text)
    recall.locator(".question-reveal").click()
    recall.locator(f"[data-score={score}]").click()


def test_the_reveal_stays_locked_until_the_learner_commits(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site)
    recall = question(page, "recall")
    reveal, answer = recall.locator(".question-reveal"), recall.locator("[data-answer]")
    assert reveal.is_disabled() and answer.is_hidden()
    assert recall.locator(".question-score").is_hidden()
    recall.locator("textarea").fill("   ")
    assert reveal.is_disabled()
    recall.locator("textarea").fill("it dies")
    assert reveal.is_enabled()
    recall.locator("textarea").fill("")
    recall.locator(".question-aloud input").check()
    assert reveal.is_enabled() and answer.is_hidden()
    reveal.click()
    assert answer.is_visible() and answer.get_attribute("open") is not None
    assert "50 °C" in answer.inner_text()
    assert recall.locator("[data-score]").count() == 3 and reveal.is_hidden()
    assert recall.locator(".question-answer-body").evaluate("el => el === document.activeElement")
    watch.assert_clean()


def test_self_scores_update_the_tally_and_its_revisit_links_resolve(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site)
    assert summary(page).startswith("0 of 4 answered")
    answer_recall(page, "no")
    explain = question(page, "explain")
    explain.locator(".question-aloud input").check()
    explain.locator(".question-reveal").click()
    explain.locator("[data-score=partly]").click()
    assert summary(page).startswith("2 of 4 answered: 0 yes, 1 partly, 1 no.")
    assert "Next review tomorrow" in question(page, "recall").locator(".question-next").inner_text()
    # the announcement lands a frame later (it is cleared first so a repeat is read again)
    expect(page.locator("body > [role=status]")).to_have_text(re.compile(r"Scored partly\. Next review"))
    rows = page.locator("[data-tally-table] tbody tr").all_inner_texts()
    assert [r.split("\t")[0] for r in rows] == [
        "Lesson 1 · Yeast",
        "Lesson 2 · Gluten",
        "Topic: fermentation",
        "Topic: kneading",
    ]
    assert any(r.startswith("Lesson 1 · Yeast\t0\t1\t1\t1") for r in rows), rows
    assert any(r.startswith("Topic: kneading\t0\t1\t0\t1") for r in rows), rows
    links = page.locator("[data-tally-revisit] a")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert hrefs == ["yeast.html", "yeast.html#temperature", "gluten.html"]
    assert page.locator("[data-tally-revisit] li li").inner_text() == "Section: Temperature"
    for href in hrefs:
        page.goto(site + href)
        anchor = href.partition("#")[2]
        assert page.locator("h1").is_visible() and (not anchor or page.locator(f"#{anchor}").count() == 1)
    watch.assert_clean()


def test_the_tally_says_plainly_when_nothing_needs_revisiting(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site)
    answer_recall(page, "yes")
    assert "Nothing needs revisiting" in summary(page)
    assert page.locator("[data-tally-revisit]").inner_text().startswith("Nothing to revisit")
    watch.assert_clean()


def test_a_choice_locks_on_the_first_pick_marks_it_and_explains(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site)
    choice = question(page, "choice")
    assert choice.locator("[data-answer]").is_hidden()
    wrong = choice.locator("li:not([data-option='0']) > .choice-option").first
    wrong_number = wrong.get_attribute("data-choose")
    wrong.click()
    assert all(b.is_disabled() for b in choice.locator(".choice-option").all())
    assert choice.locator(f"li[data-option='{wrong_number}']").get_attribute("class") == "is-chosen is-wrong"
    assert "is-right" in choice.locator("li[data-option='0']").get_attribute("class")
    assert choice.locator("[data-answer]").is_visible()
    assert choice.locator(f"[data-feedback='{wrong_number}']").get_attribute("class") == "is-chosen"
    assert "resting is what makes it easy to shape" in choice.locator(".choice-explanation").inner_text()
    assert summary(page).startswith("1 of 4 answered: 0 yes, 0 partly, 1 no.")
    watch.assert_clean()


def test_choice_options_keep_one_shuffled_order_per_learner(site, context_factory):
    page = context_factory().new_page()
    open_review(page, site)
    order = question(page, "choice").locator("[data-option]").evaluate_all("els => els.map(e => e.dataset.option)")
    assert sorted(order) == ["0", "1", "2", "3"]
    page.reload()
    page.wait_for_selector("html[data-review=ready]")
    again = question(page, "choice").locator("[data-option]").evaluate_all("els => els.map(e => e.dataset.option)")
    assert again == order
    orders = set()
    for seed in ("a", "b", "c"):
        other = context_factory().new_page()
        other.add_init_script(
            f"localStorage.setItem({json.dumps(KEY)}, JSON.stringify("
            f"{{format: 'coursegen-progress', version: 1, seed: '{seed}'}}))"
        )
        open_review(other, site)
        orders.add(
            tuple(
                question(other, "choice").locator("[data-option]").evaluate_all("els => els.map(e => e.dataset.option)")
            )
        )
    assert len(orders) > 1


def test_progress_survives_a_reload(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site)
    answer_recall(page, "partly", text="It stops near 50 °C <b>not bold</b>")
    question(page, "choice").locator("li[data-option='0'] > .choice-option").click()
    page.reload()
    page.wait_for_selector("html[data-review=ready]")
    recall = question(page, "recall")
    assert recall.locator("textarea").input_value() == "It stops near 50 °C <b>not bold</b>"
    assert recall.locator("b").count() == 0
    assert recall.locator("[data-answer]").is_visible()
    assert recall.locator("[data-score=partly]").get_attribute("aria-pressed") == "true"
    assert question(page, "choice").locator(".choice-option").first.is_disabled()
    assert summary(page).startswith("2 of 4 answered: 1 yes, 1 partly, 0 no.")
    watch.assert_clean()


def test_export_then_reset_then_import_restores_progress(site, page_and_watch, tmp_path):
    page, watch = page_and_watch
    open_review(page, site)
    answer_recall(page, "no")
    with page.expect_download() as download:
        page.locator("[data-tally-export]").click()
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.name == "bread-basics-progress.json"
    assert json.loads(saved.read_text())["questions"]
    page.locator("[data-tally-reset]").click()
    page.locator("[data-tally-reset-confirm]").click()
    assert summary(page).startswith("0 of 4 answered")
    assert question(page, "recall").locator("textarea").input_value() == ""
    page.locator("[data-tally-import]").set_input_files(str(saved))
    expect(page.locator("[data-tally-status]")).to_contain_text("imported")
    assert summary(page).startswith("1 of 4 answered: 0 yes, 0 partly, 1 no.")
    assert question(page, "recall").locator("textarea").input_value() == "about fifty degrees"
    page.reload()
    page.wait_for_selector("html[data-review=ready]")
    assert summary(page).startswith("1 of 4 answered")
    watch.assert_clean()


def test_an_import_of_a_file_that_is_not_progress_changes_nothing(site, page_and_watch, tmp_path):
    page, watch = page_and_watch
    open_review(page, site)
    answer_recall(page, "yes")
    bogus = tmp_path / "other.json"
    bogus.write_text('{"format": "something-else"}')
    page.locator("[data-tally-import]").set_input_files(str(bogus))
    expect(page.locator("[data-tally-status]")).to_contain_text("nothing changed")
    assert summary(page).startswith("1 of 4 answered")
    watch.assert_clean()


@pytest.mark.parametrize(
    "stored",
    [
        "{not json",
        json.dumps({"format": "coursegen-progress", "version": 0, "questions": {}}),
        json.dumps([1, 2, 3]),
        json.dumps(
            {
                "format": "coursegen-progress",
                "version": 1,
                "visited": "yes",
                "reviews": [1],
                "questions": {
                    "check-dough/which-step-mainly-lets-shaped-dough": {
                        "choice": "two",
                        "score": "maybe",
                        "url": "javascript:alert(1)",
                        "card": {"due": "never"},
                    },
                    "check-dough/above-roughly-which-temperature-does-yeast": {"text": 42, "revealed": "yes"},
                },
            }
        ),
    ],
    ids=["corrupt JSON", "older format", "not an object", "malformed fields"],
)
def test_stored_progress_that_is_corrupt_or_old_leaves_a_working_page(stored, site, page_and_watch):
    page, watch = page_and_watch
    page.add_init_script(f"localStorage.setItem({json.dumps(KEY)}, {json.dumps(stored)})")
    open_review(page, site)
    assert summary(page).startswith("0 of 4 answered")
    assert question(page, "recall").locator("[data-answer]").is_hidden()
    answer_recall(page, "yes")
    assert summary(page).startswith("1 of 4 answered: 1 yes")
    saved = json.loads(page.evaluate("key => localStorage.getItem(key)", KEY))
    assert saved["format"] == "coursegen-progress" and saved["version"] == 1
    watch.assert_clean()


def tab_to(page, locator, limit=60):
    """Press Tab until `locator` has focus (fails if it is not reachable by keyboard)."""
    for _ in range(limit):
        if locator.evaluate("el => el === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{locator} is not reachable with Tab")


def test_a_keyboard_alone_answers_one_question_of_each_kind(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site)
    recall, explain, choice, excerpt = (question(page, k) for k in ("recall", "explain", "choice", "excerpt"))
    tab_to(page, recall.locator("textarea"))
    page.keyboard.type("It dies near fifty degrees")
    tab_to(page, recall.locator(".question-reveal"))
    assert recall.locator(".question-reveal").evaluate("el => getComputedStyle(el).outlineStyle") != "none"
    page.keyboard.press("Enter")
    tab_to(page, recall.locator("[data-score=yes]"))
    page.keyboard.press("Enter")
    tab_to(page, explain.locator(".question-aloud input"))
    page.keyboard.press("Space")
    tab_to(page, explain.locator(".question-reveal"))
    page.keyboard.press("Enter")
    tab_to(page, explain.locator("[data-score=partly]"))
    page.keyboard.press("Space")
    tab_to(page, choice.locator(".choice-option").first)
    page.keyboard.press("Enter")
    tab_to(page, excerpt.locator("textarea"))
    page.keyboard.type("Warmth")
    tab_to(page, excerpt.locator(".question-reveal"))
    page.keyboard.press("Enter")
    tab_to(page, excerpt.locator("[data-score=no]"))
    page.keyboard.press("Enter")
    assert summary(page).startswith("4 of 4 answered")
    assert page.locator("body > [role=status][aria-live=polite]").count() == 1
    watch.assert_clean()


def test_the_course_map_marks_visits_and_done_reviews_and_counts_questions_due(site, context_factory):
    context = context_factory()
    page = context.new_page()
    page.goto(site + "yeast.html")
    page.wait_for_selector("html[data-review=ready]")
    open_review(page, site)
    answer_recall(page, "yes")
    explain = question(page, "explain")
    explain.locator(".question-aloud input").check()
    explain.locator(".question-reveal").click()
    explain.locator("[data-score=no]").click()
    question(page, "choice").locator("li[data-option='0'] > .choice-option").click()
    excerpt = question(page, "excerpt")
    excerpt.locator(".question-aloud input").check()
    excerpt.locator(".question-reveal").click()
    excerpt.locator("[data-score=partly]").click()
    assert page.locator("[data-progress-map] [data-unit=yeast] .progress-visited").inner_text() == "visited"
    assert page.locator("[data-progress-map] [data-unit=gluten] .progress-visited").count() == 0
    page.goto(site + "index.html")
    page.wait_for_selector("html[data-review=ready]")
    assert page.locator("[data-unit=yeast] .progress-visited").inner_text() == "visited"
    assert page.locator("[data-unit=check-dough] .progress-visited").inner_text() == "done"
    assert page.locator("[data-unit=gluten] .progress-visited").count() == 0
    expect(page.locator("[data-due]")).to_be_hidden()  # nothing due: no empty box
    # the lesson's own questions are not answered yet: it is the next unit to do
    expect(page.locator("[data-course-next]")).to_have_text("Continue with Lesson 1 · Yeast")
    later = context.new_page()
    later.clock.install(time=datetime.now(UTC) + timedelta(days=1, hours=1))
    later.goto(site + "index.html")
    later.wait_for_selector("html[data-review=ready]")
    assert later.locator("[data-due-count]").inner_text() == "1 question is due for review."
    link = later.locator("[data-due-list] a")
    assert link.get_attribute("href") == "check-dough.html#q-explain-to-a-friend-why-kneaded"
    link.click()
    later.wait_for_selector("html[data-review=ready]")
    # asked afresh: last time's commitment, model answer and score do not greet the learner
    due = later.locator("#q-explain-to-a-friend-why-kneaded")
    expect(due.locator("[data-answer]")).to_be_hidden()
    expect(due.locator(".question-aloud input")).not_to_be_checked()
    expect(due.locator(".question-reveal")).to_be_visible()
    expect(due.locator(".question-again")).to_be_hidden()
    due.locator(".question-aloud input").check()
    due.locator(".question-reveal").click()
    due.locator("[data-score=yes]").click()
    expect(due.locator(".question-next")).to_contain_text("Next review")


def test_a_new_learner_is_told_where_to_start_and_done_units_are_marked(site, context_factory):
    page = context_factory().new_page()
    page.goto(site + "index.html")
    page.wait_for_selector("html[data-review=ready]")
    start = page.locator("[data-course-next]")
    expect(start).to_have_text("Start with Lesson 1 · Yeast")
    expect(page.locator("[data-due]")).to_be_hidden()
    start.locator("a").click()
    page.wait_for_selector("html[data-review=ready]")
    for item in page.locator("section[data-kind] .question-aloud input").all():  # every question of the lesson
        section = item.locator("xpath=ancestor::section[@data-kind][1]")
        item.check()
        section.locator(".question-reveal").click()
        section.locator("[data-score=partly]").click()
    page.goto(site + "gluten.html")  # no questions: reading it is doing it
    page.goto(site + "index.html")
    page.wait_for_selector("html[data-review=ready]")
    expect(page.locator("[data-unit=yeast] .progress-visited")).to_have_text("done")
    expect(page.locator("[data-unit=gluten] .progress-visited")).to_have_text("done")
    expect(page.locator("[data-course-next]")).to_have_text("Continue with Review 3 · Check the dough")
    expect(page.locator("[data-course-next] a")).to_have_attribute("href", "check-dough.html")


def test_reset_this_page_asks_before_clearing(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site)
    answer_recall(page, "yes")
    page.locator("[data-tally-reset]").click()
    expect(page.locator("[data-tally-reset-cancel]")).to_be_focused()
    page.locator("[data-tally-reset-cancel]").click()
    expect(page.locator("[data-tally-status]")).to_have_text("Nothing was cleared.")
    assert summary(page).startswith("1 of 4 answered")
    expect(page.locator("[data-tally-reset]")).to_be_focused()
    page.locator("[data-tally-reset]").click()
    page.locator("[data-tally-reset-confirm]").click()
    assert summary(page).startswith("0 of 4 answered")
    watch.assert_clean()


def test_progress_found_corrupt_is_reported_and_the_damaged_copy_kept_for_saving(site, page_and_watch, tmp_path):
    page, watch = page_and_watch
    page.add_init_script(
        f"if (!sessionStorage.getItem('seeded')) {{ sessionStorage.setItem('seeded', '1');"
        f' localStorage.setItem({json.dumps(KEY)}, \'{{"format": "coursegen-progress", trunc\'); }}'
    )
    open_review(page, site)
    note = page.get_by_role("alert", name="Progress could not be read")
    expect(note).to_contain_text("could not be read, so it starts afresh")
    assert (
        page.evaluate("key => localStorage.getItem(key + ':corrupt')", KEY) == '{"format": "coursegen-progress", trunc'
    )
    with page.expect_download() as download:
        note.get_by_role("button", name="Save the damaged copy").click()
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.read_text() == '{"format": "coursegen-progress", trunc'
    answer_recall(page, "yes")  # the page works on a fresh copy
    page.reload()
    page.wait_for_selector("html[data-review=ready]")
    expect(note).to_be_visible()  # still said until dismissed
    note.get_by_role("button", name="Dismiss").click()
    expect(note).to_have_count(0)
    page.reload()
    page.wait_for_selector("html[data-review=ready]")
    expect(page.get_by_role("alert")).to_have_count(0)
    assert summary(page).startswith("1 of 4 answered")
    watch.assert_clean()


def test_without_javascript_a_review_is_a_readable_study_sheet(site, context_factory):
    page = context_factory(java_script_enabled=False).new_page()
    page.goto(site + REVIEW)
    for kind in ("recall", "explain", "choice", "excerpt"):
        block = question(page, kind)
        assert block.locator(".question-prompt").is_visible()
        assert block.locator("details[data-answer]").is_visible()
        assert block.locator("details[data-answer]").get_attribute("open") is None
    assert page.locator("textarea").count() == 0
    assert question(page, "choice").locator("[data-option]").count() == 4
    page.locator("section[data-kind=choice] details summary").click()
    assert "Correct: Resting after kneading" in question(page, "choice").locator("[data-correct]").inner_text()
    assert page.locator("[data-tally-actions]").is_hidden()
    assert page.locator(".tally-sections a").count() == 2
    assert page.locator("[data-progress-map] .progress-unit.is-next").inner_text().startswith("→ Lesson 4")


def test_a_question_at_the_end_of_a_lesson_gets_its_own_tally(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site, "yeast.html")
    assert summary(page).startswith("0 of 1 answered")
    answer_recall(page, "partly")
    assert [a.get_attribute("href") for a in page.locator("[data-tally-revisit] a").all()] == [
        "yeast.html",
        "yeast.html#feeding",
    ]
    watch.assert_clean()


def test_an_explain_question_offers_a_timer_of_its_suggested_length(site, page_and_watch):
    page, watch = page_and_watch
    page.clock.install()
    open_review(page, site)
    explain = question(page, "explain")
    start = explain.locator(".question-timer-start")
    assert start.inner_text() == "Start a 45 s timer"
    start.click()
    page.clock.run_for(10_000)
    assert explain.locator(".question-timer").inner_text() == "35 s"
    page.clock.run_for(36_000)
    assert explain.locator(".question-timer").inner_text() == "Time"
    assert page.locator("body > [role=status]").inner_text() == "Time is up."
    watch.assert_clean()
