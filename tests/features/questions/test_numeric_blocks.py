"""Select-all choices and numeric questions: what the build bakes, and every malformed block located."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import FIXTURES, copy_course, read_yaml, run_cli
from question_support import render
from test_question_errors import edit

CASES = read_yaml((Path(__file__).parent / "bad_numeric.yaml").read_text())


@pytest.fixture
def numeric_course(tmp_path) -> Path:
    return copy_course(FIXTURES / "numeric", tmp_path / "numeric")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_a_broken_numeric_or_select_all_block_is_reported_at_its_line(case, numeric_course, capsys):
    edit(numeric_course, case)
    status, _, err = run_cli(capsys, "--root", numeric_course, "build")
    assert status == 1 and "Traceback" not in err
    lines = err.splitlines()
    assert any(line.startswith(case["expect"]) for line in lines), err
    if "hint" in case:
        assert any(case["hint"] in line for line in lines if line.strip().startswith("hint:")), err
    assert not (numeric_course / "site").exists()


def test_the_fixture_bakes_kernel_answers_and_seeded_variants_the_same_every_build(numeric_course, capsys):
    assert run_cli(capsys, "--root", numeric_course, "build")[0] == 0
    page = (numeric_course / "site" / "check-numbers.html").read_text()
    blocks = [json.loads(b) for b in re.findall(r"<script type=\"application/json\" data-numeric>(.*?)</script>", page)]
    water, salt, variants = blocks
    assert water == {
        "units": ["g", "grams"],
        "variants": [
            {"answer": 350.0, "shown": "350\u00a0g", "limit": 0.5, "limit_text": "0.5", "close": 17.5, "vars": {}}
        ],
    }
    assert salt["variants"][0]["shown"] == "20.0\u00a0g" and salt["units"] == ["g"]
    assert len(variants["variants"]) == 6
    for variant in variants["variants"]:  # each answer is the kernel's for the variant's own numbers
        flour, percent = int(variant["vars"]["flour"]), int(variant["vars"]["percent"])
        assert variant["answer"] == flour * percent / 100 and variant["limit"] == pytest.approx(variant["answer"] / 100)
    first = variants["variants"][0]["vars"]
    assert f'data-var="flour">{first["flour"]}<' in page and f'data-var="percent">{first["percent"]}<' in page
    again = numeric_course.parent / "again"
    assert run_cli(capsys, "--root", numeric_course, "build", "--out", again)[0] == 0
    assert (again / "check-numbers.html").read_text() == page


def test_a_choice_with_several_right_options_is_select_all_and_keeps_each_explanation():
    html, env = render(
        ":::: choice {lessons: [1]}\nWhich rise?\n\n- [x] Bread\n  It has yeast.\n- [x] Buns\n- [ ] Crackers\n::::\n"
    )
    assert not env["problems"].items
    assert '<p class="question-kind">Choose all that apply · lesson 1</p>' in html
    assert '<ul class="choice-options" data-options="" data-multiple="">' in html
    assert html.count("data-correct") == 2 and "<p>It has yeast.</p>" in html
    assert "More than one option is right" in html


def test_a_numeric_answer_written_as_text_is_read_and_its_tolerance_printed_without_round_off():
    html, env = render(":::: numeric {lessons: [1], answer: 1e-3, tolerance: 1e-4, unit: kg}\nHow much?\n::::\n")
    assert not env["problems"].items
    data = json.loads(re.search(r"data-numeric>(.*?)</script>", html).group(1))
    assert data["variants"][0] == {
        "answer": 0.001,
        "shown": "1e-3\u00a0kg",
        "limit": 0.0001,
        "limit_text": "0.0001",
        "vars": {},
    }
    assert "The answer is 1e-3\u00a0kg; answers within 0.0001 of it count as right." in html


@pytest.mark.parametrize(
    ("answer", "tolerance", "text"),
    [("88.72", "", "0.005"), ("3", "", "0.5"), ("0.1", "", "0.05"), ("1200", "2.5%", "2.5%"), ("7", "0.1", "0.1")],
)
def test_without_a_tolerance_an_answer_is_right_to_its_last_printed_digit(answer, tolerance, text):
    extra = f", tolerance: {tolerance}" if tolerance else ""
    html, env = render(f":::: numeric {{lessons: [1], answer: {answer}{extra}}}\nHow much?\n::::\n")
    assert not env["problems"].items
    assert f"answers within {text} of it" in html
