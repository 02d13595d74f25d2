"""Fuzzing front matter, course.yaml, `{calc}` expressions and widget fence parameters through whole builds.

Whatever the author writes, a build ends within a bound, with exit status 0, or 1 and every problem
located at `path:line`; never a traceback, and a failed build leaves site/ as it was.
"""

from __future__ import annotations

import time

import pytest
from helpers import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

BOUND = 20  # seconds: the mini course's limit is 2 s per call of author code
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

NAMES = st.sampled_from(
    [
        "overflow.BF16_MAX",
        "overflow.BF16_MAX_LOG",
        "kda.TILE",
        "math.pi",
        "math.e",
        "math.inf",
        "math.nan",
        "overflw.BF16_MAX",
        "overflow._check",
        "sizes",
        "math",
        "__import__",
    ]
)
NUMBERS = st.one_of(
    st.integers(-(10**6), 10**6),
    st.integers(),
    st.floats(allow_nan=False).map(repr),
    st.sampled_from(["1e308", "1e-320", "0", "0.0", "10**400", "2**10000", "'text'", "[1, 2]"]),
)
CALLS = st.sampled_from(
    [
        "overflow.largest_safe_tile({})",
        "overflow.analyse({}, 16)",
        "math.factorial({})",
        "math.sqrt({})",
        "math.log({})",
        "overflow.reciprocal_profile_bf16(-5, {})",
        "sizes.kda_state({}, 2, 2)",
    ]
)


def expressions():
    """Return a strategy of {calc} expressions: literals, names, arithmetic, calls, subscripts, nesting."""
    leaf = st.one_of(NUMBERS.map(str), NAMES)

    def extend(inner):
        operator = st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "<<", "and"])
        return st.one_of(
            st.tuples(inner, operator, inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            inner.map(lambda e: f"-{e}"),
            st.tuples(CALLS, st.one_of(st.integers(-20, 3000).map(str), inner)).map(lambda t: t[0].format(t[1])),
            st.tuples(inner, st.sampled_from(["['fits']", "[0]", ".max()", ".item()", ".shape"])).map("".join),
        )

    return st.recursive(leaf, extend, max_leaves=8)


ROLES = st.tuples(
    expressions(),
    st.sampled_from(["", " | .2f", " | sci:3", " | ,d", " | .2q", " | d nats", " | sci:0"]),
    st.sampled_from(["", " | = 1", " | = 88.72", " | = ∞", " | = abc"]),
).map("".join)

VALUES = st.one_of(
    st.integers().map(str),
    st.floats().map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e309", "-0", "4.0", "0x10", "", "'", "16 16", "=", "é"]),
    st.sampled_from(["-5", "-2.5", "-10", "-1", "4", "8", "32", "64", "16", "128"]),
)  # valid ones too
WORDS = st.one_of(
    st.tuples(st.sampled_from(["g_min", "tile", "T", "nope", "g_min", "tile"]), VALUES).map(lambda t: f"{t[0]}={t[1]}"),
    st.sampled_from(["tile", "=5", "g_min==-5", '"tile=8"']),
)
FENCES = st.tuples(
    st.sampled_from(["overflow-slider", "kda-chunkwise", "overflow-slidr", ""]), st.lists(WORDS, max_size=4)
).map(lambda t: " ".join([t[0], *t[1]]))


# YAML values as an author might type them, and as they should never break the build
YAML_VALUES = st.one_of(
    st.text(max_size=12),
    st.integers().map(str),
    st.floats().map(repr),
    st.sampled_from(
        [
            "true",
            "no",
            "~",
            "[]",
            "{}",
            "[1, [2, [3]]]",
            "{a: 1, a: 2}",
            "*ref",
            "&ref x",
            "[",
            "{",
            "|",
            ">-",
            "'",
            '"',
            "- item",
            ": :",
            "!!python/object/apply:os.system [ls]",
            "!!binary aGk=",
            "\ufeff",
            "\ue000x\ue001",
            "9" * 5000,
            "2026-13-45",
            "0x1F",
            ".nan",
            "-.inf",
            "@x",
            "`tick`",
            "%TAG",
        ]
    ),
)
YAML_LINES = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "title",
                "summary",
                "kicker",
                "lede",
                "draft",
                "number",
                "template",
                "titel",
                "units",
                "pyodide",
                "theme",
                "limits",
                "python",
                "csp",
                "callouts",
                "extensions",
                "base_url",
                "language",
                "- slug",
                "  part",
                "",
                "a b",
                "  - x",
                "? complex",
            ]
        ),
        YAML_VALUES,
    ).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    max_size=5,
)


def build_with(course: tuple, capsys, text: str, file: str = "lessons/02-second.md", whole: bool = False) -> None:
    """Put `text` into lesson 2 (or write it as all of `file`), build, and check the outcome is a
    success or located problems."""
    mini_course, original = course
    before = {p: p.read_bytes() for p in (mini_course / "site").rglob("*") if p.is_file()}
    (mini_course / file).write_text(text if whole else original.replace("Text.", text))
    started = time.perf_counter()
    status, _, err = run_cli(capsys, "--root", mini_course, "build")
    assert time.perf_counter() - started < BOUND
    assert "Traceback" not in err, err
    if status == 0:
        return
    assert status == 1, err
    problems = [line for line in err.splitlines() if line and not line.startswith(" ")][:-1]  # last: the count
    assert problems and all(line.split(":")[0] and line.split(":")[1].isdigit() for line in problems), err
    assert {p: p.read_bytes() for p in (mini_course / "site").rglob("*") if p.is_file()} == before


@pytest.fixture
def built_mini(mini_course, capsys) -> tuple:
    """The mini course, built once, and its lesson 2 as it was (each example edits it afresh)."""
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    return mini_course, (mini_course / "lessons" / "02-second.md").read_text()


@pytest.fixture
def config_text(built_mini) -> str:
    """The mini course's course.yaml as it was (each example writes it afresh)."""
    return (built_mini[0] / "course.yaml").read_text()


@SETTINGS
@given(role=ROLES)
def test_any_calc_role_builds_or_is_a_located_problem(built_mini, capsys, role):
    build_with(built_mini, capsys, "Value {calc}`" + role.replace("`", "'") + "`.")


@SETTINGS
@given(info=FENCES)
def test_any_widget_fence_builds_or_is_a_located_problem(built_mini, capsys, info):
    build_with(built_mini, capsys, "```widget " + info.replace("`", "'") + "\n```")


@SETTINGS
@given(lines=YAML_LINES, keep_title=st.booleans())
def test_any_front_matter_builds_or_is_a_located_problem(built_mini, capsys, lines, keep_title):
    head = (["title: Second lesson"] if keep_title else []) + lines
    build_with(built_mini, capsys, "---\n" + "\n".join(head) + "\n---\n\n## Details\n\nText.\n", whole=True)


@SETTINGS
@given(lines=YAML_LINES, where=st.sampled_from(["end", "units", "top"]))
def test_any_course_yaml_builds_or_is_a_located_problem(built_mini, config_text, capsys, lines, where):
    config = config_text
    added = "\n".join(lines)
    if where == "end":
        config = config + added + "\n"
    elif where == "units":
        config = config.replace("units:\n", "units:\n" + "".join(f"  - {line}\n" for line in lines), 1)
    else:
        config = added + "\n" + config
    build_with(built_mini, capsys, config, file="course.yaml", whole=True)
