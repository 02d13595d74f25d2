"""YAML loading that remembers where every mapping key was written, for error messages."""
from __future__ import annotations

import yaml


class LineDict(dict):
    """A dict from YAML that knows the 1-based line of itself (`line`) and of each key (`lines`)."""

    line: int = 1
    lines: dict

    def line_of(self, key) -> int:
        """Return the line where `key` was written, or the mapping's own line."""
        return self.lines.get(key, self.line)


class _LineMixin:
    def construct_mapping(self, node, deep=False):
        mapping = LineDict(super().construct_mapping(node, deep=True))
        mapping.line = node.start_mark.line + 1
        mapping.lines = {self.construct_object(k, deep=True): k.start_mark.line + 1
                         for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
        return mapping


class _LineLoader(_LineMixin, yaml.SafeLoader):
    pass


class _FastLineLoader(_LineMixin, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """libyaml's loader (several times faster); errors are re-read by _LineLoader for its wording."""


for _loader in (_LineLoader, _FastLineLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _loader.construct_mapping)


class YamlError(ValueError):
    """Malformed YAML, with the 1-based line where the parser gave up."""

    def __init__(self, line: int, message: str):
        self.line, self.message = line, message
        super().__init__(f"{line}: {message}")


def load_yaml(text: str, first_line: int = 1):
    """Return the parsed document (mappings as LineDict), lines offset so `first_line` is line 1."""
    if "\t" in text:
        for number, row in enumerate(text.splitlines(), first_line):
            if "\t" in row[: len(row) - len(row.lstrip())]:
                raise YamlError(number, "YAML indentation uses a tab; indent with spaces")
    try:  # the fast loader first; on any error the pure-Python one below gives the usual message
        data = yaml.load(text, Loader=_FastLineLoader)  # noqa: S506 - SafeLoader subclass
        _shift(data, first_line - 1)
        return data
    except yaml.YAMLError:
        pass
    try:
        data = yaml.load(text, Loader=_LineLoader)  # noqa: S506 - SafeLoader subclass
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = (mark.line if mark else 0) + first_line
        raise YamlError(line, f"malformed YAML: {err.problem or err.context}") from None
    except yaml.YAMLError as err:
        raise YamlError(first_line, f"malformed YAML: {err}") from None
    _shift(data, first_line - 1)
    return data


def _shift(data, offset: int) -> None:
    """Move every recorded line by `offset` (front matter starts below the file's first line)."""
    if isinstance(data, LineDict):
        data.line += offset
        data.lines = {k: v + offset for k, v in data.lines.items()}
    children = data.values() if isinstance(data, dict) else data if isinstance(data, list) else ()
    for child in children:
        _shift(child, offset)
