"""course.yaml's `id:`: the course's identity in learners' browsers (its progress is stored under it)."""

from __future__ import annotations

import pytest

from coursegen.errors import Problems
from coursegen.stages.config import parse_config

UNITS = "units:\n  - slug: first\n"


def parse(text: str) -> tuple[object, list[str]]:
    """Parse a course.yaml; return the configuration and each problem as `line: message | hint`."""
    problems = Problems()
    config = parse_config(text, problems)
    return config, [f"{p.line}: {p.message} | {p.hint}" for p in problems.items]


def test_a_course_without_an_id_has_none_and_no_problem():
    config, found = parse("title: Bread\n" + UNITS)
    assert found == []
    assert config.id == ""


@pytest.mark.parametrize("course_id", ["bread-basics-2026", "3f2b9c1e-7d4a-4f0e-9b8a-2c6d5e4f3a1b", "a", "A.b_c-9"])
def test_an_id_of_plain_characters_is_kept_as_written(course_id):
    config, found = parse(f'title: Bread\nid: "{course_id}"\n' + UNITS)
    assert found == []
    assert config.id == course_id


def test_the_id_does_not_change_with_the_title():
    first, _ = parse("title: Bread\nid: bread-1\n" + UNITS)
    renamed, _ = parse("title: Bread, corrected\nid: bread-1\n" + UNITS)
    assert first.id == renamed.id == "bread-1"


@pytest.mark.parametrize(
    "written, shown",
    [
        ('""', "''"),
        ('"has space"', "'has space'"),
        ('"../up"', "'../up'"),
        ('"-leading"', "'-leading'"),
        ('"a:b"', "'a:b'"),
        ('"' + "x" * 65 + '"', repr("x" * 65)),
    ],
    ids=["empty", "space", "path", "leading hyphen", "colon", "too long"],
)
def test_an_id_that_is_not_a_plain_token_is_an_error_at_its_line(written, shown):
    config, found = parse(f"title: Bread\ndescription: A course.\nid: {written}\n" + UNITS)
    assert found == [
        f"3: id {shown} must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit | "
        "for example: id: bread-basics-2026 (once published, keep it: learners' progress is stored under it)"
    ]
    assert config.id == ""


def test_an_id_that_is_not_text_is_a_type_error_at_its_line():
    _, found = parse("title: Bread\nid: [1, 2]\n" + UNITS)
    assert len(found) == 1 and found[0].startswith("2: ") and "'id'" in found[0]
