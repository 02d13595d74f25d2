"""Select-all choices and numeric answers (issue 44) in headless Chromium: right, wrong and partly right answers,
the tally and the schedule afterwards, variants drawn anew for a spaced review, a decimal comma, and no JavaScript."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from helpers import FIXTURES, copy_course, serving
from playwright.sync_api import expect

from coursegen.cli import main as cli_main

pytestmark = pytest.mark.browser
KEY = "coursegen:course:path:/"
REVIEW = "check-numbers.html"


def build_and_serve(tmp_path_factory, language: str = ""):
    root = copy_course(FIXTURES / "numeric", tmp_path_factory.mktemp("numeric") / "course")
    if language:
        config = root / "course.yaml"
        config.write_text(config.read_text() + f"language: {language}\n")
    assert cli_main(["--root", str(root), "build"]) == 0
    return serving(root / "site")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with build_and_serve(tmp_path_factory) as base:
        yield base


def open_review(page, base):
    page.goto(base + REVIEW)
    page.wait_for_selector("html[data-review=ready]")


def summary(page):
    return page.locator("[data-tally-summary]").inner_text()


def select_all(page):
    return page.locator("section[data-kind=choice]")


def numeric(page, n=0):
    return page.locator("section[data-kind=numeric]").nth(n)


def stored(page, question):
    data = json.loads(page.evaluate(f"localStorage.getItem({KEY!r})"))
    return data["questions"][f"check-numbers/{question}"]


def pick(choice, *texts):
    for text in texts:
        choice.locator(".choice-option", has_text=text).click()


@pytest.mark.parametrize(
    ("picked", "score", "verdict"),
    [
        (("tightens the gluten", "slows the yeast"), "yes", "All right"),
        (("tightens the gluten", "adds water"), "partly", "Partly right"),
        (("crust brown",), "no", "Not right"),
    ],
)
def test_a_select_all_choice_scores_right_partly_and_wrong_and_marks_every_option(
    site, page_and_watch, picked, score, verdict
):
    page, watch = page_and_watch
    open_review(page, site)
    choice = select_all(page)
    check = choice.locator(".choice-check")
    assert check.is_disabled() and choice.locator("[data-answer]").is_hidden()  # commit before the reveal
    pick(choice, *picked)
    assert choice.locator(".choice-option[aria-pressed=true]").count() == len(picked)
    check.click()
    assert choice.locator(".choice-result").inner_text().startswith(verdict)
    assert all(b.is_disabled() for b in choice.locator(".choice-option").all())
    assert choice.locator("[data-answer]").is_visible()
    assert "large effects" in choice.locator(".choice-explanation").inner_text()
    gluten = choice.locator("li", has=page.locator(".choice-option", has_text="tightens the gluten"))
    yeast = choice.locator("li", has=page.locator(".choice-option", has_text="slows the yeast"))
    assert "is-right" in gluten.get_attribute("class") and "is-right" in yeast.get_attribute("class")
    if score == "partly":
        assert "Correct answer, not chosen" in yeast.inner_text()
        water = choice.locator("li", has=page.locator(".choice-option", has_text="adds water"))
        assert "is-wrong" in water.get_attribute("class") and "Your choice, not right" in water.inner_text()
    record = stored(page, "which-of-these-does-salt-do")
    assert record["score"] == score and len(record["choices"]) == len(picked)
    expect(choice.locator(".question-next")).to_have_text(re.compile(r"Next review"))
    assert datetime.fromisoformat(stored(page, "which-of-these-does-salt-do")["card"]["due"]) > datetime.now(UTC)
    counts = {"yes": "1 yes, 0 partly, 0 no", "partly": "0 yes, 1 partly, 0 no", "no": "0 yes, 0 partly, 1 no"}
    assert summary(page).startswith(f"1 of 4 answered: {counts[score]}.")
    watch.assert_clean()


def test_a_select_all_answer_survives_a_reload_and_answer_again_unlocks_it(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site)
    choice = select_all(page)
    pick(choice, "slows the yeast")
    choice.locator(".choice-check").click()
    page.reload()
    page.wait_for_selector("html[data-review=ready]")
    choice = select_all(page)
    assert choice.locator(".choice-result").inner_text().startswith("Partly right")
    assert choice.locator(".choice-option[aria-pressed=true]").count() == 1
    choice.locator(".question-again").click()
    assert choice.locator(".choice-option[aria-pressed=true]").count() == 0
    assert not choice.locator(".choice-option").first.is_disabled() and summary(page).startswith("0 of 4")
    watch.assert_clean()


@pytest.mark.parametrize(
    ("typed", "score", "verdict"),
    [
        ("350 g", "yes", "Right: the answer is 350\u00a0g."),
        ("3.5e2", "yes", "Right"),
        ("350.4 grams", "yes", "Right"),
        ("340", "partly", "Close, but outside the tolerance"),
        ("100", "no", "Not right: the answer is 350\u00a0g."),
    ],
)
def test_a_numeric_answer_is_checked_against_the_kernels_number(site, page_and_watch, typed, score, verdict):
    page, watch = page_and_watch
    open_review(page, site)
    water = numeric(page)
    assert water.locator("[data-answer]").is_hidden()
    assert water.locator(".question-reveal").is_disabled()
    assert water.locator("label").first.inner_text() == "Your answer, in g"
    water.locator("input").fill(typed)
    water.locator("input").press("Enter")
    expect(water.locator(".numeric-result")).to_have_text(re.compile("^" + re.escape(verdict)))
    assert water.locator("[data-answer]").is_visible()
    assert "answers within 0.5 of it count as right" in water.locator("[data-numeric-expected]").inner_text()
    assert water.locator("input").get_attribute("readonly") is not None
    record = stored(page, "how-many-grams-of-water-does")
    assert record["score"] == score and record["text"] == typed and "due" in record["card"]
    assert summary(page).startswith("1 of 4 answered")
    rows = page.locator("[data-tally-table] tbody tr").all_inner_texts()
    assert any(r.startswith("Topic: water\t") for r in rows), rows
    expect(water.locator(".question-next")).to_have_text(re.compile(r"Next review"))
    watch.assert_clean()


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("350 kg", "“kg” is not a unit this question knows; give the answer in g, grams."),
        ("three hundred", "“three hundred” is not a number this page can read"),
        ("0,35", "is not a number this page can read; write it as, for example, 0.001 / 1e-3."),
    ],
)
def test_an_answer_the_page_cannot_read_is_not_scored(site, page_and_watch, typed, message):
    page, watch = page_and_watch
    open_review(page, site)
    water = numeric(page)
    water.locator("input").fill(typed)
    water.locator(".question-reveal").click()
    expect(water.locator(".numeric-status")).to_contain_text(message)
    assert water.locator("input").get_attribute("aria-invalid") == "true"
    assert water.locator("[data-answer]").is_hidden() and summary(page).startswith("0 of 4")
    watch.assert_clean()


def test_a_french_course_reads_a_decimal_comma(tmp_path_factory, page_and_watch):
    page, watch = page_and_watch
    with build_and_serve(tmp_path_factory, "fr") as base:
        open_review(page, base)
        salt = numeric(page, 1)
        salt.locator("input").fill("19,6 g")
        salt.locator(".question-reveal").click()
        expect(salt.locator(".numeric-result")).to_have_text(re.compile(r"^Juste : la réponse est 20\.0"))
    watch.assert_clean()


def test_a_variant_shows_its_numbers_checks_them_and_a_due_review_draws_new_ones(site, page_and_watch):
    page, watch = page_and_watch
    open_review(page, site)
    question = page.locator("#q-variant-water")
    flour, percent = (int(question.locator(f"[data-var={name}]").inner_text()) for name in ("flour", "percent"))
    question.locator("input").fill(f"{flour * percent / 100} g")
    question.locator(".question-reveal").click()
    expect(question.locator(".numeric-result")).to_have_text(re.compile(r"^Right"))
    first = stored(page, "variant-water")
    # the card falls due: the next visit asks afresh, with the next variant's numbers
    first["card"]["due"] = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    page.evaluate(
        """([key, record]) => { const data = JSON.parse(localStorage.getItem(key));
        data.questions["check-numbers/variant-water"] = record; localStorage.setItem(key, JSON.stringify(data)); }""",
        [KEY, first],
    )
    open_review(page, site)
    question = page.locator("#q-variant-water")
    again = [int(question.locator(f"[data-var={name}]").inner_text()) for name in ("flour", "percent")]
    assert again != [flour, percent] and question.locator("input").input_value() == ""
    data = json.loads(question.locator("[data-numeric]").text_content())
    wanted = next(
        v["answer"] for v in data["variants"] if v["vars"] == {"flour": str(again[0]), "percent": str(again[1])}
    )
    question.locator("input").fill(str(wanted + 100))
    question.locator(".question-reveal").click()
    expect(question.locator(".numeric-result")).to_have_text(re.compile(r"^Not right"))
    assert stored(page, "variant-water")["variant"] != first["variant"]
    watch.assert_clean()


def test_without_javascript_numeric_and_select_all_questions_are_a_study_sheet(site, context_factory):
    page = context_factory(java_script_enabled=False).new_page()
    page.goto(site + REVIEW)
    choice = select_all(page)
    assert "More than one option is right" in choice.inner_text()
    assert choice.locator("details[data-answer]").get_attribute("open") is None
    water = numeric(page)
    assert water.locator("input").count() == 0
    water.locator("details summary").click()
    assert "The answer is 350\u00a0g" in water.locator("details").inner_text()
    variant = page.locator("#q-variant-water")
    assert variant.locator("[data-var=flour]").inner_text().isdigit()
    assert "The answer is" in variant.locator("[data-numeric-expected]").text_content()


def test_a_keyboard_alone_answers_both_kinds(site, page_and_watch):
    from test_review import tab_to

    page, watch = page_and_watch
    open_review(page, site)
    choice = select_all(page)
    tab_to(page, choice.locator(".choice-option").first)
    page.keyboard.press("Space")
    assert choice.locator(".choice-option").first.get_attribute("aria-pressed") == "true"
    tab_to(page, choice.locator(".choice-check"))
    page.keyboard.press("Enter")
    water = numeric(page)
    tab_to(page, water.locator("input"))
    page.keyboard.type("350")
    page.keyboard.press("Enter")
    expect(water.locator(".numeric-result")).to_have_text(re.compile(r"^Right"))
    assert summary(page).startswith("2 of 4 answered")
    watch.assert_clean()
