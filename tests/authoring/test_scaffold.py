"""`new lesson|review "Title"`: the next numbered source from a skeleton, listed in course.yaml."""

from __future__ import annotations

import difflib

import pytest
from helpers import run_cli

from coursegen.authoring.scaffold import slugify
from coursegen.pipeline import build_site


def added_and_removed(before: str, after: str) -> tuple[list[str], list[str]]:
    diff = list(difflib.ndiff(before.splitlines(), after.splitlines()))
    return [d[2:] for d in diff if d.startswith("+ ")], [d[2:] for d in diff if d.startswith("- ")]


def test_new_lesson_creates_the_next_file_and_appends_the_unit_keeping_comments(mini_course, capsys):
    config = mini_course / "course.yaml"
    config.write_text("# The mini course, with a comment to keep.\n" + config.read_text())
    before = config.read_text()
    status, out, err = run_cli(capsys, "--root", mini_course, "new", "lesson", "Gates and floors", "--part", "Part two")
    assert status == 0, err
    assert out.strip() == "created lessons/05-gates-and-floors.md (lesson 5) and listed it in course.yaml"
    added, removed = added_and_removed(before, config.read_text())
    assert added == ["  - slug: gates-and-floors", "    part: Part two"] and removed == []
    text = (mini_course / "lessons" / "05-gates-and-floors.md").read_text()
    assert text.startswith('---\ntitle: "Gates and floors"\n')
    assert "gates-and-floors.html" in build_site(mini_course).outputs


def test_new_lesson_for_an_upcoming_unit_takes_its_place(mini_course, capsys):
    status, out, _ = run_cli(capsys, "--root", mini_course, "new", "lesson", "Later, for real", "--slug", "later")
    assert status == 0 and out.startswith("created lessons/04-later.md (lesson 4)")
    config = (mini_course / "course.yaml").read_text()
    assert "Still to come" not in config and "upcoming" not in config
    assert "later.html" in build_site(mini_course).outputs


def test_new_review_draws_its_questions_from_the_unit_before_it(mini_course, capsys):
    status, _out, err = run_cli(capsys, "--root", mini_course, "new", "review", "Review two")
    assert status == 0, err
    text = (mini_course / "reviews" / "05-review-two.md").read_text()
    assert ":::: recall {lessons: [3]" in text and ":::: choice {lessons: [3]}" in text
    assert "review-two.html" in build_site(mini_course).outputs


def test_the_skeletons_pass_check_with_no_warnings(mini_course, capsys):
    run_cli(capsys, "--root", mini_course, "new", "lesson", "A lesson")
    run_cli(capsys, "--root", mini_course, "new", "review", "A review")
    status, _out, err = run_cli(capsys, "--root", mini_course, "check", "--strict")
    assert status == 0, err
    page = build_site(mini_course).outputs["a-lesson.html"].decode()
    assert '<span class="calc" data-calc="math.sqrt(2)">1.414</span>' in page  # neutral: no course's names


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["lesson", "Second lesson", "--slug", "second"],
            "lessons/02-second.md:1: unit 'second' already has a source file",
        ),
        (["lesson", "!!!"], "course.yaml:1: cannot make a slug from '!!!'"),
        (["lesson", "   "], "course.yaml:1: the new unit needs a title"),
    ],
)
def test_new_refuses_what_it_cannot_create(mini_course, capsys, args, message):
    before = (mini_course / "course.yaml").read_text()
    status, _, err = run_cli(capsys, "--root", mini_course, "new", *args)
    assert status == 1 and err.startswith(message), err
    assert (mini_course / "course.yaml").read_text() == before


def test_a_review_with_nothing_before_it_is_refused(tmp_path, capsys):
    (tmp_path / "course.yaml").write_text("title: Empty\nunits:\n  - slug: soon\n    title: Soon\n    upcoming: true\n")
    status, _, err = run_cli(capsys, "--root", tmp_path, "new", "review", "Soon", "--slug", "soon")
    assert status == 1 and "a review needs a lesson before it to draw its questions from" in err
    assert not (tmp_path / "reviews").exists()


@pytest.mark.parametrize(
    "title, slug",
    [
        ("Chunkwise KDA", "chunkwise-kda"),
        ("Café au lait, 2nd edition", "cafe-au-lait-2nd-edition"),
        ("  Gated -- MLA!  ", "gated-mla"),
    ],
)
def test_slugs_are_made_from_titles(title, slug):
    assert slugify(title) == slug


def test_new_never_writes_through_a_course_yaml_linked_from_outside(mini_course, tmp_path, capsys):
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text((mini_course / "course.yaml").read_text())
    (mini_course / "course.yaml").unlink()
    (mini_course / "course.yaml").symlink_to(outside)
    before = outside.read_text()
    status, _, err = run_cli(capsys, "--root", mini_course, "new", "lesson", "Fresh start")
    assert status == 1
    assert err.startswith("course.yaml:1: 'course.yaml' is outside the course")
    assert outside.read_text() == before
    assert not list((mini_course / "lessons").glob("*fresh-start*"))


def test_a_title_too_long_for_a_file_name_is_refused_with_a_shorter_slug_suggested(mini_course, capsys):
    before = (mini_course / "course.yaml").read_text()
    status, _, err = run_cli(capsys, "--root", mini_course, "new", "lesson", "Long " * 80)
    assert status == 1 and "Traceback" not in err
    assert err.startswith(
        "coursegen new: the slug made from the title is 399 characters long; a unit's slug may have at most 80\n"
    ), err
    suggested = err.split("--slug ")[1].split()[0]
    assert len(suggested) <= 80 and suggested.startswith("long-long") and not suggested.endswith("-")
    assert (mini_course / "course.yaml").read_text() == before
    assert run_cli(capsys, "--root", mini_course, "new", "lesson", "Long " * 80, "--slug", suggested)[0] == 0


def test_a_slug_option_that_is_no_slug_is_blamed_not_the_title(mini_course, capsys):
    status, _, err = run_cli(capsys, "--root", mini_course, "new", "lesson", "A/B testing", "--slug", "a/b")
    assert status == 1
    assert err.startswith("coursegen new: --slug 'a/b' is not a slug: use lowercase letters, digits and single hyphens")
    assert "hint: for example --slug a-b" in err and "A/B testing" not in err
    assert not list((mini_course / "lessons").glob("*a-b*"))


def test_new_lesson_notebook_makes_a_jupyter_notebook_that_builds_and_passes_strict_check(mini_course, capsys):
    import nbformat

    status, out, err = run_cli(capsys, "--root", mini_course, "new", "lesson", "Newton steps", "--notebook")
    assert status == 0, err
    assert out.strip() == "created lessons/05-newton-steps.ipynb (lesson 5) and listed it in course.yaml"
    notebook = nbformat.read(mini_course / "lessons" / "05-newton-steps.ipynb", as_version=nbformat.NO_CONVERT)
    nbformat.validate(notebook)
    kinds = [cell.cell_type for cell in notebook.cells]
    assert kinds[:4] == ["raw", "markdown", "markdown", "code"] and set(kinds[4:]) == {"markdown"}
    assert notebook.cells[0].source.startswith('---\ntitle: "Newton steps"\n')
    assert run_cli(capsys, "--root", mini_course, "check", "--strict")[0] == 0
    page = build_site(mini_course).outputs["newton-steps.html"].decode()
    assert "sum(steps)" in page and "The idea in one picture" in page
    status, _out, err = run_cli(capsys, "--root", mini_course, "new", "lesson", "Newton steps", "--notebook")
    assert status == 1 and "lessons/05-newton-steps.ipynb:1: unit 'newton-steps' already has a source file" in err
