"""YAML loading that remembers where every mapping key was written, for error messages.

Reading and round-trip editing (`coursegen new`, scaffold.py) use the one library, ruamel.yaml.
Reading takes its safe loader, which gives plain dicts and lists, rather than the round-trip one,
whose comment-keeping maps and scalar types would reach pages, messages and caches, and which is
slower still; the composed nodes carry each key's line all the same.
"""

from __future__ import annotations

import re
from collections.abc import Hashable

from ruamel.yaml.composer import Composer
from ruamel.yaml.constructor import ConstructorError, SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent, StreamEndEvent
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.parser import Parser
from ruamel.yaml.reader import Reader
from ruamel.yaml.resolver import BaseResolver, implicit_resolvers
from ruamel.yaml.scanner import Scanner

try:  # ruamel.yaml.clib: libyaml's parser in C, eight times faster on front matter
    from ruamel.yaml.cyaml import CParser
except ImportError:  # not built for this Python: the pure reader alone
    CParser = None

TOKEN_TUPLE = re.compile(r"\(('[^']*'),\)")
BOOL, FLOAT = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:float"


class LineDict(dict):
    """A dict from YAML that knows the 1-based line of itself (`line`) and of each key (`lines`)."""

    line: int = 1
    lines: dict

    def line_of(self, key) -> int:
        """Return the line where `key` was written, or the mapping's own line."""
        return self.lines.get(key, self.line)


MAX_INT_DIGITS = 100
SURROGATE = re.compile("[\ud800-\udfff]")


class RefusedYaml(MarkedYAMLError):
    """YAML that parses but that the build refuses: aliases, duplicate keys, endless integers."""


def _refuse(node, message: str):
    return RefusedYaml(problem=message, problem_mark=node.start_mark)


class _Resolver(BaseResolver):
    """YAML 1.1 as course files have always been read (by PyYAML): `yes`, `on` are true and `017` is
    octal, but `y`, `n` stay text and so does `1e-9` (a float needs its dot), where ruamel's own 1.1
    rules read those as a boolean and a number."""

    processing_version = (1, 1)  # for the constructor's octal and base-60 integers


for _versions, _tag, _regexp, _first in implicit_resolvers:
    if (1, 1) in _versions and _tag not in (BOOL, FLOAT):
        _Resolver.add_implicit_resolver_base(_tag, _regexp, _first)
_Resolver.add_implicit_resolver_base(
    BOOL,
    re.compile(
        r"""^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE
                                                      |on|On|ON|off|Off|OFF)$""",
        re.X,
    ),
    list("yYnNtTfFoO"),
)
_Resolver.add_implicit_resolver_base(
    FLOAT,
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                                                       |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                                                       |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                                                       |[-+]?\.(?:inf|Inf|INF)
                                                       |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)


class _LineLoader(Reader, Scanner, Parser, Composer, SafeConstructor, _Resolver):
    """ruamel.yaml's safe loader, making LineDicts and refusing what course files have no need of."""

    max_depth = None  # ruamel's composer reads it; RecursionError bounds the depth instead
    comment_handling = None

    def __init__(self, text: str):
        Reader.__init__(self, text, loader=self)
        Scanner.__init__(self, loader=self)
        Parser.__init__(self, loader=self)
        Composer.__init__(self, loader=self)
        SafeConstructor.__init__(self, loader=self)
        _Resolver.__init__(self, loadumper=self)

    def construct_object(self, node, deep=False):
        # A node met twice is an alias ('*name'). A few lines of aliases to aliases stand for
        # billions of values ("billion laughs"); course files have no need of them.
        if node in self.constructed_objects or node in self.recursive_objects:
            raise _refuse(node, "YAML anchors and aliases ('&name', '*name') are not supported; write the value out")
        return super().construct_object(node, deep)

    def construct_yaml_map(self, node):
        # Built in one go (ruamel's own yields an empty dict first, for the recursive structures
        # only aliases make, and reads merged keys twice); then each key's line is recorded.
        merges = any(k.tag == "tag:yaml.org,2002:merge" for k, _ in node.value)
        self.flatten_mapping(node)
        mapping = LineDict()
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):
                raise ConstructorError(
                    "while constructing a mapping", node.start_mark, "found unhashable key", key_node.start_mark
                )
            mapping[key] = self.construct_object(value_node, deep=True)
        mapping.line, mapping.lines = node.start_mark.line + 1, {}
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode):
                key = self.constructed_objects[key_node]
                if key in mapping.lines and not merges:
                    above = key_node.start_mark.line + 1 - mapping.lines[key]
                    raise _refuse(
                        key_node, f"duplicate key '{key}': it is also set {above} line{'s' if above > 1 else ''} above"
                    )
                mapping.lines[key] = key_node.start_mark.line + 1
        return mapping

    def construct_yaml_seq(self, node):
        return self.construct_sequence(node, deep=True)

    def construct_yaml_str(self, node):
        # A "\ud800" escape makes half of a character, which no page can be written with.
        value = super().construct_yaml_str(node)
        if (found := SURROGATE.search(value)) is not None:
            raise _refuse(
                node, f"text holds '\\u{ord(found.group()):04x}', half of a character; write the character itself"
            )
        return value

    def construct_yaml_int(self, node):
        # Python refuses to read or print integers of more than 4300 digits; no course needs 100.
        if len(node.value) > MAX_INT_DIGITS:
            raise _refuse(node, f"integer '{node.value[:20]}…' has more than {MAX_INT_DIGITS} digits")
        return super().construct_yaml_int(node)


_LineLoader.add_constructor("tag:yaml.org,2002:map", _LineLoader.construct_yaml_map)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _LineLoader.construct_yaml_seq)
_LineLoader.add_constructor("tag:yaml.org,2002:int", _LineLoader.construct_yaml_int)
_LineLoader.add_constructor("tag:yaml.org,2002:str", _LineLoader.construct_yaml_str)

# The fast path: the same constructor and resolver over libyaml's parser, for documents nested
# shallowly enough for its recursive composer (C recursion has no RecursionError to stop it).
# Whatever it cannot read is read again by the pure loader, whose messages the catalogue pins.
SHALLOW = 64  # deepest nesting the fast path takes (see _shallow)
# Characters the two parsers may treat differently: what the pure reader refuses, and the line
# breaks other than \n and \r (NEL, U+2028, U+2029).
ODD_CHARACTERS = re.compile(Reader.NON_PRINTABLE.pattern + "|[\x85\u2028\u2029]")

if CParser is not None:

    class _FastLineLoader(CParser, _LineLoader):
        def __init__(self, text: str):
            CParser.__init__(self, text)
            self._parser = self._composer = self
            SafeConstructor.__init__(self, loader=self)
            _Resolver.__init__(self, loadumper=self)


def _fast_load(text: str):
    """Return the document read by libyaml's parser, or None when the pure loader must read it."""
    if CParser is None or ODD_CHARACTERS.search(text) or not _shallow(text):
        return None
    loader = None
    try:
        loader = _FastLineLoader(text)
        return (loader.get_single_data(),)
    except Exception:  # noqa: BLE001 - any problem: the pure loader reads it again and says what it is
        return None
    finally:
        if loader is not None:
            loader.dispose()


def _shallow(text: str) -> bool:
    """Return whether `text` nests at most SHALLOW deep, as the C composer needs.

    Counting brackets, and each line's indent and compact nesting ("- - x", "? ? x", "a: b: c"),
    bounds the depth at no cost. A text that count refuses is measured exactly on libyaml's events:
    its parser keeps a stack of its own, so no input can overflow C's. A message catalogue needs
    that: its `{placeholders}` are brackets to the count, but quoted text to YAML.
    """
    if text.count("[") + text.count("{") <= SHALLOW and all(
        len(row) - len(row.lstrip(" ")) + row.count("- ") + row.count("? ") + row.count(": ") <= SHALLOW
        for row in text.splitlines()
    ):
        return True
    parser, depth = CParser(text), 0
    try:
        while not parser.check_event(StreamEndEvent):
            event = parser.get_event()
            if isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > SHALLOW:
                    return False
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
    except Exception:  # noqa: BLE001 - malformed: the pure loader says where
        return False
    finally:
        parser.dispose()
    return True


class YamlError(ValueError):
    """Malformed YAML, with the 1-based line where the parser gave up and a hint in plain words."""

    def __init__(self, line: int, message: str, hint: str = ""):
        self.line, self.message, self.hint = line, message, hint
        super().__init__(f"{line}: {message}")


def load_yaml(text: str, first_line: int = 1):
    """Return the parsed document (mappings as LineDict), lines offset so `first_line` is line 1."""
    if "\t" in text:
        for number, row in enumerate(text.splitlines(), first_line):
            if "\t" in row[: len(row) - len(row.lstrip())]:
                raise YamlError(number, "YAML indentation uses a tab; indent with spaces", TAB_HINT)
    fast = _fast_load(text)
    if fast is not None:
        _shift(fast[0], first_line - 1)
        return fast[0]
    loader = None
    try:
        loader = _LineLoader(text)  # its reader checks the characters at once
        data = loader.get_single_data()
        _shift(data, first_line - 1)
    except RefusedYaml as err:
        raise YamlError(err.problem_mark.line + first_line, err.problem) from None
    except RecursionError:
        raise YamlError(first_line, "YAML nested too deeply") from None
    except MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = (mark.line if mark else 0) + first_line
        problem = _tidy(err.problem or err.context)
        raise YamlError(line, f"malformed YAML: {problem}", plain_hint(problem, text, line - first_line)) from None
    except YAMLError as err:
        raise YamlError(first_line, f"malformed YAML: {err}") from None
    finally:
        if loader is not None:
            loader.dispose()
    return data


TAB_HINT = "YAML reads tabs as errors: use spaces, both to indent and after a colon"
COMMON_CAUSES = (
    "the usual causes: a line indented differently from the keys beside it, "
    "a value holding ': ' without quotes around it, a tab instead of spaces"
)
QUOTE_EXAMPLE = 'as in title: "Ratio: two to one"'


def plain_hint(problem: str, text: str, index: int) -> str:
    """Return what a parser's `problem` at the 0-based line `index` of `text` most likely means, in plain
    words: a colon in an unquoted value, a line out of step with the ones above it, a tab."""
    rows = text.splitlines()
    row = rows[index] if 0 <= index < len(rows) else ""
    value = row.strip().lstrip("- ").partition(": ")[2]
    if "\t" in row or "'\\t'" in problem:
        return TAB_HINT
    if ": " in value and value[:1] not in "'\"[{":
        return f"the value on this line holds ': ', which YAML reads as a new key: put it in quotes, {QUOTE_EXAMPLE}"
    if "but found '<scalar>'" in problem:
        return "text follows a quoted value: put the whole value inside the quotes"
    if "expected ',' or" in problem:
        return "a [ list ] or { mapping } is not closed: close it on its line, or quote a value that starts with [ or {"
    if problem.startswith(("expected <block end>", "mapping values are not allowed")):
        return (
            "this line is out of step with the lines above it: the keys of one mapping start in the same "
            "column (under a '- ' item, in the column after the '- ')"
        )
    return COMMON_CAUSES


def _tidy(problem: str) -> str:
    """Return a parser message with the token named as PyYAML names it: ruamel.yaml 0.19 writes
    "but found ('<block mapping start>',)" where it means "but found '<block mapping start>'"."""
    return TOKEN_TUPLE.sub(r"\1", problem)


def _shift(data, offset: int) -> None:
    """Move every recorded line by `offset` (front matter starts below the file's first line)."""
    if isinstance(data, LineDict):
        data.line += offset
        data.lines = {k: v + offset for k, v in data.lines.items()}
    children = data.values() if isinstance(data, dict) else data if isinstance(data, list) else ()
    for child in children:
        _shift(child, offset)
