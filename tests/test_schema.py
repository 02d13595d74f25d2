"""The one schema checker: unknown keys with a suggestion, wrong types, required keys, nested mappings, lines."""

from __future__ import annotations

from coursegen.errors import Problems
from coursegen.schema import Schema, check
from coursegen.yamlio import load_yaml

INNER = Schema("pyodide", {"source": str, "version": str})
OUTER = Schema(
    "course.yaml",
    {"title": str, "units": list, "count": int, "ratio": (int, float), "any": object, "pyodide": INNER},
    required={"title": "title: My course"},
)


def run(text: str, schema: Schema = OUTER, line: int = 1) -> tuple[dict, list[str]]:
    """Check a YAML document; return what passed and each problem as `line: message | hint`."""
    problems = Problems()
    good = check(load_yaml(text), schema, "course.yaml", problems, line)
    return good, [f"{p.line}: {p.message} | {p.hint}" for p in problems.items]


def test_a_good_mapping_passes_whole_with_its_lines():
    good, found = run("title: Tides\nunits: [a]\npyodide:\n  source: cdn\n")
    assert found == []
    assert good == {"title": "Tides", "units": ["a"], "pyodide": {"source": "cdn"}}
    assert good.line_of("units") == 2 and good["pyodide"].line_of("source") == 4


def test_an_unknown_key_is_reported_at_its_line_with_the_nearest_known_one():
    good, found = run("title: Tides\ntitel: x\n")
    assert found == [
        "2: unknown key 'titel' in course.yaml | did you mean 'title'? "
        "known keys are: title, units, count, ratio, any, pyodide"
    ]
    assert good == {"title": "Tides"}


def test_an_unknown_key_far_from_every_known_one_gets_the_list_alone():
    assert run("title: Tides\nzzzz: 1\n")[1] == [
        "2: unknown key 'zzzz' in course.yaml | known keys are: title, units, count, ratio, any, pyodide"
    ]


def test_a_value_of_the_wrong_type_is_left_out_and_named_with_its_type():
    good, found = run("title: Tides\nunits: 5\nratio: x\n")
    assert found == [
        "2: key 'units' in course.yaml must be a list, found 5 | ",
        "3: key 'ratio' in course.yaml must be an int or float, found 'x' | ",
    ]
    assert good == {"title": "Tides"}


def test_true_and_false_are_not_numbers_but_object_takes_anything():
    good, found = run("title: Tides\ncount: true\nratio: false\nany: true\n")
    assert [f.split(" | ")[0] for f in found] == [
        "2: key 'count' in course.yaml must be an int, found True",
        "3: key 'ratio' in course.yaml must be an int or float, found False",
    ]
    assert good == {"title": "Tides", "any": True}


def test_a_required_key_missing_or_blank_or_of_the_wrong_type_is_reported_at_the_mapping_line():
    for text in ("units: []\n", "title: '  '\n", "title: [x]\n"):
        found = run(text, line=3)[1]
        assert "3: course.yaml has no 'title' | add a line such as: title: My course" in found, text


def test_a_nested_mapping_is_checked_by_its_own_schema():
    good, found = run("title: Tides\npyodide:\n  sorce: cdn\n  version: 1\n")
    assert found == [
        "3: unknown key 'sorce' in pyodide | did you mean 'source'? known keys are: source, version",
        "4: key 'version' in pyodide must be a str, found 1 | ",
    ]
    assert good == {"title": "Tides", "pyodide": {}}


def test_a_nested_value_that_is_no_mapping_is_a_type_problem():
    assert run("title: Tides\npyodide: [cdn]\n")[1] == [
        "2: key 'pyodide' in course.yaml must be a dict, found ['cdn'] | "
    ]


def test_a_document_that_is_no_mapping_is_reported_once_at_the_given_line():
    good, found = run("- a\n- b\n", line=2)
    assert found == ["2: course.yaml must be a mapping of keys to values, found ['a', 'b'] | "]
    assert good == {}
    long = run("[" + ", ".join(["word"] * 100) + "]")[1][0]
    assert "…" in long and len(long) < 140  # a long document is cut short in the message


def test_nouns_without_a_place_and_hints_for_a_wrong_type():
    attrs = Schema(
        "block attributes",
        {"caption": str, "seconds": int},
        noun="attribute",
        located=False,
        hints={"seconds": "write a whole number"},
    )
    problems = Problems()
    good = check({"captoin": "A", "seconds": "ten"}, attrs, "lessons/a.md", problems, line=12)
    assert [p.format() for p in problems.items] == [
        "lessons/a.md:12: unknown attribute 'captoin'\n    hint: did you mean 'caption'? "
        "known attributes are: caption, seconds",
        "lessons/a.md:12: attribute 'seconds' must be an int, found 'ten'\n    hint: write a whole number",
    ]
    assert good == {} and good.line == 12
