"""Reading YAML with ruamel.yaml: the values course files have always had (YAML 1.1 as PyYAML read it), and lines."""

from __future__ import annotations

import pytest

from coursegen import yamlio
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


@pytest.mark.skipif(yamlio.CParser is None, reason="ruamel.yaml.clib is not installed: only the pure reader runs")
def test_the_fast_reader_gives_the_pure_readers_data_and_lines_or_leaves_the_text_to_it():
    from helpers import REPO

    texts = [(REPO / "course.yaml").read_text()] + [p.read_text() for p in sorted(REPO.glob("widgets/*/spec.yaml"))]
    texts += [p.read_text() for p in sorted(REPO.glob("templates/messages/*.yaml"))]  # {placeholders}: 100+ braces
    texts += [" " * 100 + "a: 1\n", "a: [" + "{}, " * 70 + "]\n"]  # deep to the count, shallow to YAML
    texts += [
        p.read_text().split("---\n")[1] for p in sorted(REPO.glob("lessons/*.md")) + sorted(REPO.glob("reviews/*.md"))
    ]
    texts += ["a: yes\nb: 017\nc: 1e-9\nd: [1, {e: f}]\n", "when: 2026-12-01\n", "x: !!float 3\n"]
    for text in texts:
        fast = yamlio._fast_load(text)
        loader = yamlio._LineLoader(text)
        pure = loader.get_single_data()
        loader.dispose()
        assert fast is not None and fast[0] == pure, text[:60]
        if isinstance(pure, yamlio.LineDict):
            assert (fast[0].line, fast[0].lines) == (pure.line, pure.lines)
    for deep in ("a: " + "[" * 65 + "]" * 65 + "\n", "{a: " * 65 + "b" + "}" * 65 + "\n", "[" * 1_000_000):
        assert yamlio._fast_load(deep) is None  # too deep for the C composer: the pure reader takes it
    for nested in ("- " * 100_000 + "x\n", "? " * 100_000 + "x\n"):  # the C composer would crash on these
        assert yamlio._fast_load(nested) is None
        with pytest.raises(YamlError):
            load_yaml(nested)
    assert yamlio._fast_load("a: *b\n") is None  # refused: the pure reader says why, at its line
    assert yamlio._fast_load("a: 1\u2028b: 2\n") is None  # line breaks the two read differently


@pytest.mark.parametrize(
    "text, line, hint",
    [
        (
            "title: Ratio: two to one\nsummary: x\n",
            1,
            "holds ': ', which YAML reads as a new key: put it in quotes",
        ),
        ("units:\n  - slug: a\n    title: Part: one\n", 3, "put it in quotes"),
        ("title: A\n  summary: x\n", 2, "out of step with the lines above it"),
        ("units:\n  - slug: a\n   part: b\n", 3, "the keys of one mapping start in the same column"),
        ("a:\n  - x\n  -\ty\n", 3, "use spaces"),
        ("a:\n\tb: 1\n", 2, "use spaces"),
        ('title: "A" b\n', 1, "put the whole value inside the quotes"),
        ("summary: [a, b\n", 2, "is not closed"),
    ],
)
def test_a_parser_error_comes_with_a_hint_in_plain_words(text, line, hint):
    with pytest.raises(YamlError) as caught:
        load_yaml(text)
    assert caught.value.line == line
    assert hint in caught.value.hint


def test_a_yaml_hint_reaches_the_author_with_the_message(mini_course, capsys):
    from helpers import run_cli

    config = mini_course / "course.yaml"
    config.write_text(config.read_text().replace("title: Mini course", "title: Mini course: part one"))
    status, _, err = run_cli(capsys, "--root", mini_course, "check")
    assert status == 1
    assert err.splitlines()[:2] == [
        "course.yaml:1: malformed YAML: mapping values are not allowed here",
        "    hint: the value on this line holds ': ', which YAML reads as a new key: put it in quotes, "
        'as in title: "Ratio: two to one"',
    ]
