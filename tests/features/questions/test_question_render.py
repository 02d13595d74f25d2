"""Question blocks render as a study sheet, and each becomes a Question record with a stable id."""

from __future__ import annotations

from pathlib import Path

import pytest
from markdown_it.utils import read_fixture_file
from question_support import render

FIXTURES = Path(__file__).parent / "fixtures" / "render.md"


@pytest.mark.parametrize(
    "line,title,source,expected", read_fixture_file(FIXTURES), ids=[case[1] for case in read_fixture_file(FIXTURES)]
)
def test_a_question_block_renders_as_its_fixture_says(line, title, source, expected):
    html, env = render(source)
    assert not env["problems"].items
    assert html == expected


RECALL = """:::: recall {lessons: [2], topic: KDA, revisit: gluten#kneading}
Name the three steps, in order.

::: answer
Mix, knead, rest.
:::
::::
"""


def test_a_question_is_recorded_with_its_lessons_topic_and_revisit_target():
    _, env = render(RECALL)
    [question] = env["questions"]
    assert (question.id, question.kind, question.lessons, question.topic) == (
        "name-the-three-steps-in-order",
        "recall",
        (2,),
        "KDA",
    )
    assert question.revisit_url == "gluten.html#kneading" and question.line == 1
    assert question.prompt == "Name the three steps, in order."


def test_the_revisit_target_is_handed_to_the_link_check():
    _, env = render(RECALL)
    assert [(link.slug, link.anchor, link.line) for link in env["links"]] == [("gluten", "kneading", 1)]


def test_a_question_id_survives_edits_elsewhere_on_the_page():
    _, before = render(RECALL)
    _, after = render("## A new section\n\nSome new prose above.\n\n" + RECALL + "\nMore text below.\n")
    assert before["questions"][0].id == after["questions"][0].id


def test_questions_with_the_same_opening_words_get_numbered_ids_and_an_explicit_id_wins():
    _, env = render(RECALL + "\n" + RECALL + "\n" + RECALL.replace("{lessons: [2],", "{id: steps, lessons: [2],"))
    assert [q.id for q in env["questions"]] == [
        "name-the-three-steps-in-order",
        "name-the-three-steps-in-order-2",
        "steps",
    ]


def test_a_question_in_a_lesson_draws_on_that_lesson_by_default():
    _, env = render(RECALL.replace("lessons: [2], ", ""), path="lessons/01-yeast.md")
    assert env["questions"][0].lessons == (1,) and not env["problems"].items


def test_a_link_inside_a_choice_option_resolves_in_the_option_and_in_its_feedback():
    html, env = render(""":::: choice {lessons: [1]}
Where is feeding explained?

- [x] In [the yeast lesson](../lessons/01-yeast.md#feeding)
- [ ] Nowhere
::::
""")
    assert html.count('href="yeast.html#feeding"') == 2 and not env["problems"].items


def test_a_bracketed_x_inside_a_prompt_stays_text():
    html, env = render(RECALL.replace("Name the three steps", "Name the [x] three steps"))
    assert "Name the [x] three steps" in html and not env["problems"].items
