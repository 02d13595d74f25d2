"""Learners' progress is kept under the course's identity, never its title (#42), in headless Chromium.

The identity is course.yaml's `id:`, else the site root's URL path: a corrected title keeps the progress, two
courses with one title on one origin keep theirs apart, a record kept under the title by an older coursegen
moves over, another course's export is refused, and storage that cannot save is said once.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES, copy_course, serving
from playwright.sync_api import expect

from coursegen.cli import main as cli_main

pytestmark = pytest.mark.browser
TITLE = "Bread basics"
REVIEW = "check-dough.html"
ROOT_KEY = "coursegen:course:path:/"  # the fixture served at the origin's root, without an id
OTHER_COURSE = "That file holds another course's progress, so it was not imported; nothing changed."
UNSAVED = (
    "This browser cannot save your progress (its storage is full or switched off): what you answer and score "
    "here lasts only while this page is open."
)


def build(root: Path, title: str = TITLE, course_id: str = "") -> Path:
    """Build the review fixture (with another title, an id) in `root`, copied on first use; return its site."""
    if not root.exists():
        copy_course(FIXTURES / "review", root)
    config = root / "course.yaml"
    lines = [line for line in config.read_text().splitlines() if not line.startswith(("title:", "id:"))]
    head = [f"title: {json.dumps(title)}"] + ([f"id: {course_id}"] if course_id else [])
    config.write_text("\n".join(head + lines) + "\n")
    assert cli_main(["--root", str(root), "build"]) == 0
    return root / "site"


def open_review(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("html[data-review=ready]")


def summary(page) -> str:
    return page.locator("[data-tally-summary]").inner_text()


def answer_recall(page, score: str = "no") -> None:
    recall = page.locator("section[data-kind=recall]")
    recall.locator("textarea").fill("about fifty degrees")
    recall.locator(".question-reveal").click()
    recall.locator(f"[data-score={score}]").click()


def stored(page) -> dict:
    """Every localStorage item of the page's origin."""
    return page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")


@pytest.mark.parametrize("course_id", ["", "bread-basics-1"], ids=["by its address", "by its id"])
def test_a_corrected_title_keeps_the_learners_progress(course_id, tmp_path, page_and_watch):
    page, watch = page_and_watch
    site = build(tmp_path / "course", course_id=course_id)
    with serving(site) as base:
        open_review(page, base + REVIEW)
        answer_recall(page)
        assert summary(page).startswith("1 of 4 answered")
        build(tmp_path / "course", title="Bread basics, second edition", course_id=course_id)
        open_review(page, base + REVIEW)
        assert page.title().endswith("Bread basics, second edition")  # the new build is the one served
        assert summary(page).startswith("1 of 4 answered: 0 yes, 0 partly, 1 no.")
        expect(page.locator("section[data-kind=recall] textarea")).to_have_value("about fifty degrees")
    watch.assert_clean()


def test_two_courses_with_one_title_at_two_paths_of_one_origin_keep_their_own_progress(tmp_path, page_and_watch):
    page, watch = page_and_watch
    site = build(tmp_path / "course")
    shutil.copytree(site, tmp_path / "pages" / "bread")
    shutil.copytree(site, tmp_path / "pages" / "bread-again")
    with serving(tmp_path / "pages") as base:
        open_review(page, base + "bread/" + REVIEW)
        answer_recall(page)
        open_review(page, base + "bread-again/" + REVIEW)
        assert summary(page).startswith("0 of 4 answered")
        answer_recall(page, "yes")
        open_review(page, base + "bread/" + REVIEW)
        assert summary(page).startswith("1 of 4 answered: 0 yes, 0 partly, 1 no.")
        keys = sorted(key for key in stored(page) if key.startswith("coursegen:course:"))
        assert keys == ["coursegen:course:path:/bread-again/", "coursegen:course:path:/bread/"]
    watch.assert_clean()


# What an older coursegen kept for the fixture: one recall answered "partly", under the course title.
TITLE_KEYED = json.dumps(
    {
        "format": "coursegen-progress",
        "version": 1,
        "course": TITLE,
        "seed": "abc",
        "visited": {"yeast": True},
        "reviews": {},
        "questions": {"check-dough/above-roughly-which-temperature-does-yeast": {"text": "hot", "score": "partly"}},
    }
)


def test_progress_kept_under_the_title_moves_to_the_course_s_own_key_on_first_load(tmp_path, page_and_watch):
    page, watch = page_and_watch
    site = build(tmp_path / "course")
    with serving(site) as base:
        page.goto(base + "404.html")  # any page of the origin, to write what the older version left there
        page.evaluate(
            "([key, value]) => localStorage.setItem(key, value)", [f"coursegen:progress:{TITLE}", TITLE_KEYED]
        )
        open_review(page, base + REVIEW)
        assert summary(page).startswith("1 of 4 answered: 0 yes, 1 partly, 0 no.")
        expect(page.locator("section[data-kind=recall] textarea")).to_have_value("hot")
        items = stored(page)
        assert f"coursegen:progress:{TITLE}" not in items  # moved, not copied
        moved = json.loads(items[ROOT_KEY])
        assert moved["questions"]["check-dough/above-roughly-which-temperature-does-yeast"]["score"] == "partly"
        assert moved["visited"] == {"yeast": True, "check-dough": True}
        page.reload()
        page.wait_for_selector("html[data-review=ready]")
        assert summary(page).startswith("1 of 4 answered")
    watch.assert_clean()


def test_an_export_of_another_course_is_refused_in_the_catalogue_s_words_and_nothing_changes(tmp_path, page_and_watch):
    page, watch = page_and_watch
    site = build(tmp_path / "course")
    shutil.copytree(site, tmp_path / "pages" / "bread")
    shutil.copytree(site, tmp_path / "pages" / "other")
    with serving(tmp_path / "pages") as base:
        open_review(page, base + "other/" + REVIEW)
        answer_recall(page, "yes")
        with page.expect_download() as download:
            page.locator("[data-tally-export]").click()
        export = tmp_path / "other-progress.json"
        download.value.save_as(export)
        open_review(page, base + "bread/" + REVIEW)
        answer_recall(page, "no")
        before = stored(page)["coursegen:course:path:/bread/"]
        page.locator("[data-tally-import]").set_input_files(str(export))
        expect(page.locator("[data-tally-status]")).to_have_text(OTHER_COURSE)
        assert summary(page).startswith("1 of 4 answered: 0 yes, 0 partly, 1 no.")
        assert stored(page)["coursegen:course:path:/bread/"] == before
    assert json.loads(export.read_text())["identity"] == "path:/other/"  # what told the two apart
    watch.assert_clean()


def test_an_export_from_before_identities_is_accepted_only_with_this_course_s_title(tmp_path, page_and_watch):
    page, watch = page_and_watch
    site = build(tmp_path / "course")
    old = tmp_path / "old.json"
    with serving(site) as base:
        open_review(page, base + REVIEW)
        old.write_text(TITLE_KEYED.replace(TITLE, "Cake basics"))
        page.locator("[data-tally-import]").set_input_files(str(old))
        expect(page.locator("[data-tally-status]")).to_have_text(OTHER_COURSE)
        assert summary(page).startswith("0 of 4 answered")
        old.write_text(TITLE_KEYED)
        page.locator("[data-tally-import]").set_input_files(str(old))
        expect(page.locator("[data-tally-status]")).to_have_text("Progress imported.")
        assert summary(page).startswith("1 of 4 answered: 0 yes, 1 partly, 0 no.")
    watch.assert_clean()


FULL_STORAGE = """Storage.prototype.setItem = function () {
    throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
};"""
# What a browser does when the learner has switched storage off for the site: the getter itself throws.
STORAGE_OFF = """Object.defineProperty(window, "localStorage", {
    get() { throw new DOMException("Access is denied for this document.", "SecurityError"); },
});"""


@pytest.mark.parametrize("refusal", [FULL_STORAGE, STORAGE_OFF], ids=["full", "switched off"])
def test_storage_that_cannot_save_is_said_once_in_a_polite_live_region(refusal, tmp_path, page_and_watch):
    page, watch = page_and_watch
    site = build(tmp_path / "course")
    page.add_init_script(refusal)
    with serving(site) as base:
        open_review(page, base + REVIEW)  # the visit itself cannot be saved
        notice = page.locator("[aria-live=polite] > .progress-notice")
        expect(notice).to_be_visible()
        expect(notice.locator("p")).to_have_text(UNSAVED)
        answer_recall(page)  # more saves fail: still one notice, and the page keeps the answer
        assert summary(page).startswith("1 of 4 answered")
        assert page.locator(".progress-notice").count() == 1
        notice.get_by_role("button", name="Dismiss").click()
        expect(notice).to_have_count(0)
        open_review(page, base + "yeast.html")  # a page without questions says it too
        expect(page.locator("[aria-live=polite] > .progress-notice p")).to_have_text(UNSAVED)
    watch.assert_clean()
