"""`check`: every problem at once as `path:line[:col]: message`; warnings; --strict; a fuzzed build."""

from __future__ import annotations

import re
import shutil

import pytest
from helpers import FIXTURES, copy_course, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coursegen.errors import ContentError
from coursegen.pipeline import build_site

LOCATED = re.compile(r"^[\w./-]+:\d+(:\d+)?: \S")


def write_second(root, body: str) -> None:
    (root / "lessons" / "02-second.md").write_text("---\ntitle: Second lesson\n---\n\n" + body)


def test_a_repeated_heading_is_a_warning_and_an_error_under_strict(mini_course, capsys):
    write_second(mini_course, "## Details\n\nOne.\n\n## Details\n\nTwo.\n")
    status, out, err = run_cli(capsys, "--root", mini_course, "check")
    assert status == 0 and out.startswith("ok:")
    expected = (
        "lessons/02-second.md:9: warning: heading 'Details' repeats the anchor '#details' of the heading at line 5"
    )
    assert expected in err.splitlines()
    assert "this one becomes '#details-1'" in err
    status, _, err = run_cli(capsys, "--root", mini_course, "check", "--strict")
    assert status == 1 and "lessons/02-second.md:9: warning: heading 'Details' repeats" in err


def test_different_headings_are_not_reported(mini_course, capsys):
    write_second(mini_course, "## Details\n\nOne.\n\n## More details\n\nTwo.\n")
    status, _, err = run_cli(capsys, "--root", mini_course, "check", "--strict")
    assert status == 0, err


def test_check_reports_columns_for_inline_roles_and_everything_sorted(mini_course, capsys):
    write_second(mini_course, "## Details\n\nA {calc}`overflw.X` and {calc}`overflow.BF16_MX`.\n\n![x](nope.png)\n")
    (mini_course / "lessons" / "01-first.md").write_text("---\ntitel: First\n---\n\nText.\n")
    status, _, err = run_cli(capsys, "--root", mini_course, "check")
    located = [line for line in err.splitlines() if LOCATED.match(line)]
    assert status == 1
    places = [(line.split(":")[0], int(line.split(":")[1])) for line in located]
    assert places == sorted(places) and places[0] == ("lessons/01-first.md", 2)
    assert any(line.startswith("lessons/01-first.md:2: unknown front-matter key 'titel'") for line in located)
    assert "lessons/02-second.md:7:3: unknown name 'overflw' in {calc}" in located
    assert "lessons/02-second.md:7:25: module 'overflow' has no 'BF16_MX'" in located
    assert any(line.startswith("lessons/02-second.md:9: image 'nope.png' not found") for line in located)
    assert not (mini_course / "site").exists()


# ---- fuzz: whatever the sources say, the build succeeds or reports located problems --------

FRAGMENTS = st.sampled_from(
    [
        "## A heading\n",
        "### Sub\n",
        "Plain words.\n",
        "::: note\nInside.\n:::\n",
        "::: notte\n",
        ":::\n",
        "::::\n",
        ":::: recall {lessons: [1]}\nQ?\n\n::: answer\nA.\n:::\n::::\n",
        ":::: choice\n- [x] a\n- [x] b\n::::\n",
        "{calc}`overflow.BF16_MAX_LOG | .2f | = 88.72`\n",
        "{calc}`1/0`\n",
        "{calc}`kda.`\n",
        "{calc}`'a' * 9`\n",
        "{calc}`overflow.BF16_MAX | sci:99`\n",
        "{nope}`x`\n",
        "[link](01-first.md#a-table-and-math)\n",
        "[bad](01-frist.md)\n",
        "[anchor](#nowhere)\n",
        "![img](x.png)\n",
        "$x^2$\n",
        "$\\frac{$\n",
        "$$\n\\alpah\n$$\n",
        "| a | b |\n|---|---|\n| 1 | 2 |\n",
        "```text {caption: [x}\nbox\n```\n",
        "```widget nope a=1\n```\n",
        "```widget overflow-slider g_min=9\n```\n",
        "```python\nprint(1)\n```\n",
        "[^1]\n\n[^1]: note\n",
        "\t- tab\n",
        "- [ ] task\n",
        "<div>html</div>\n",
        "---\n",
        "\x00",
        "\ufeff",
        "\u202e",
        "# Top heading\n",
    ]
)
FRONT_KEYS = st.sampled_from(["title", "summary", "kicker", "lede", "draft", "number", "template", "titel", "x"])
FRONT_VALUES = st.one_of(
    st.text(max_size=12),
    st.integers(-3, 9),
    st.booleans(),
    st.just("[unclosed"),
    st.just("{a: 1}"),
    st.just("lesson-x.html"),
)
CONFIG_EDITS = st.sampled_from(
    [
        ("", ""),
        ("title: Mini course", "title: [Mini"),
        ("  - slug: check\n", ""),
        ("  - slug: check\n", "  - slug: check\n  - slug: check\n"),
        ("description:", "descripton:"),
        ("    part: Part one\n", "\tpart: Part one\n"),
        ("upcoming: true", "upcoming: maybe"),
        ("units:", "units: 3\nunits2:"),
        ("base_url: https://example.org/mini/", "base_url: ftp://x"),
        ("slug: first", "slug: First!"),
    ]
)


@pytest.fixture(scope="module")
def fuzz_course(tmp_path_factory):
    return copy_course(FIXTURES / "mini", tmp_path_factory.mktemp("fuzz") / "mini")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.lists(FRAGMENTS, max_size=12).map("\n".join),
    front=st.dictionaries(FRONT_KEYS, FRONT_VALUES, max_size=4),
    config_edit=CONFIG_EDITS,
    noise=st.text(max_size=20),
)
def test_any_sources_build_or_report_located_problems(fuzz_course, body, front, config_edit, noise):
    root = fuzz_course
    saved = {p: p.read_bytes() for p in (root / "course.yaml", root / "lessons" / "02-second.md")}
    try:
        config = (root / "course.yaml").read_text()
        (root / "course.yaml").write_text(config.replace(*config_edit, 1) if config_edit[0] else config)
        lines = "".join(f"{key}: {value}\n" for key, value in front.items())
        (root / "lessons" / "02-second.md").write_text(f"---\n{lines}---\n\n{body}\n{noise}\n")
        try:
            result = build_site(root)
        except ContentError as err:
            assert err.problems
            for problem in err.problems:
                assert problem.line >= 1 and problem.message.strip(), problem
                assert LOCATED.match(problem.format().splitlines()[0]), problem.format()
        else:
            assert "index.html" in result.outputs
    finally:
        for path, data in saved.items():
            path.write_bytes(data)
        shutil.rmtree(root / "site", ignore_errors=True)
