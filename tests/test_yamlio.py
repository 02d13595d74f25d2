"""Reading YAML with ruamel.yaml: the values course files have always had (YAML 1.1 as PyYAML read it), and lines."""

from __future__ import annotations

import pytest

from coursegen.yamlio import LineDict, YamlError, load_yaml


@pytest.mark.parametrize(
    "text, value",
    [
        ("yes", True),
        ("On", True),
        ("no", False),
        ("off", False),
        ("y", "y"),
        ("n", "n"),
        ("1e-9", "1e-9"),
        ("1.0e-9", 1.0e-9),
        ("017", 15),
        ("0x1F", 31),
        ("1_000", 1000),
        ("~", None),
        ("2026-12-01", __import__("datetime").date(2026, 12, 1)),
        ("'017'", "017"),
    ],
)
def test_scalars_read_as_course_files_always_read_them(text, value):
    assert load_yaml(f"key: {text}\n")["key"] == value


def test_mappings_are_plain_dicts_that_know_their_lines_shifted_to_the_file():
    data = load_yaml("title: A\n\nunits:\n  - slug: a\n    part: B\n", first_line=2)
    assert type(data) is LineDict and type(data["units"]) is list
    assert (data.line, data.line_of("title"), data.line_of("units")) == (2, 2, 4)
    assert (data["units"][0].line, data["units"][0].line_of("part")) == (5, 6)


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("a: [1\n", 2, "malformed YAML: expected ',' or ']', but got '<stream end>'"),
        ("  a: 1\nb: 2\n", 2, "malformed YAML: expected '<document start>', but found '<block mapping start>'"),
        ("a: &x 1\nb: *x\n", 1, "YAML anchors and aliases ('&name', '*name') are not supported; write the value out"),
        ("a: 1\nb: 2\na: 3\n", 3, "duplicate key 'a': it is also set 2 lines above"),
        ("? [a]\n: 1\n", 1, "malformed YAML: found unhashable key"),
        (
            "a: !!python/object/apply:os.system [ls]\n",
            1,
            "malformed YAML: could not determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.system'",
        ),
        ("a:\n\tb: 1\n", 2, "YAML indentation uses a tab; indent with spaces"),
        (
            "a: \x07\n",
            1,
            "malformed YAML: unacceptable character #x0007: special characters are not allowed\n"
            '  in "<unicode string>", position 3',
        ),
    ],
)
def test_what_is_refused_is_a_message_at_its_line(text, line, message):
    with pytest.raises(YamlError) as raised:
        load_yaml(text)
    assert (raised.value.line, raised.value.message) == (line, message)
