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


MAX_INT_DIGITS = 100


class RefusedYaml(yaml.MarkedYAMLError):
    """YAML that parses but that the build refuses: aliases, duplicate keys, endless integers."""


def _refuse(node, message: str):
    return RefusedYaml(problem=message, problem_mark=node.start_mark)


class _LineMixin:
    def construct_object(self, node, deep=False):
        # A node met twice is an alias ('*name'). A few lines of aliases to aliases stand for
        # billions of values ("billion laughs"); course files have no need of them.
        if node in self.constructed_objects or node in self.recursive_objects:
            raise _refuse(node, "YAML anchors and aliases ('&name', '*name') are not supported; write the value out")
        return super().construct_object(node, deep)

    def construct_mapping(self, node, deep=False):
        merges = any(k.tag == "tag:yaml.org,2002:merge" for k, _ in node.value)
        mapping = LineDict(super().construct_mapping(node, deep=True))
        mapping.line = node.start_mark.line + 1
        mapping.lines = {}
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key = self.constructed_objects[key_node]
                if key in mapping.lines and not merges:
                    above = key_node.start_mark.line + 1 - mapping.lines[key]
                    raise _refuse(key_node, f"duplicate key '{key}': it is also set {above} "
                                            f"line{'s' if above > 1 else ''} above")
                mapping.lines[key] = key_node.start_mark.line + 1
        return mapping

    def construct_yaml_int(self, node):
        # Python refuses to read or print integers of more than 4300 digits; no course needs 100.
        if len(node.value) > MAX_INT_DIGITS:
            raise _refuse(node, f"integer '{node.value[:20]}…' has more than {MAX_INT_DIGITS} digits")
        return super().construct_yaml_int(node)


class _LineLoader(_LineMixin, yaml.SafeLoader):
    pass


class _FastLineLoader(_LineMixin, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """libyaml's loader (several times faster); errors are re-read by _LineLoader for its wording."""


for _loader in (_LineLoader, _FastLineLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _loader.construct_mapping)
    _loader.add_constructor("tag:yaml.org,2002:int", _loader.construct_yaml_int)


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
    try:  # the fast loader first; on a YAML error the pure-Python one below gives the usual message
        return _load(text, _FastLineLoader, first_line)
    except yaml.YAMLError:
        pass
    try:
        return _load(text, _LineLoader, first_line)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = (mark.line if mark else 0) + first_line
        raise YamlError(line, f"malformed YAML: {err.problem or err.context}") from None
    except yaml.YAMLError as err:
        raise YamlError(first_line, f"malformed YAML: {err}") from None


def _load(text: str, loader, first_line: int):
    """Return the document read by `loader`; what the build refuses raises YamlError, other YAML errors pass."""
    try:
        data = yaml.load(text, Loader=loader)  # noqa: S506 - SafeLoader subclasses
        _shift(data, first_line - 1)
    except RefusedYaml as err:
        raise YamlError(err.problem_mark.line + first_line, err.problem) from None
    except RecursionError:
        raise YamlError(first_line, "YAML nested too deeply") from None
    return data


def _shift(data, offset: int) -> None:
    """Move every recorded line by `offset` (front matter starts below the file's first line)."""
    if isinstance(data, LineDict):
        data.line += offset
        data.lines = {k: v + offset for k, v in data.lines.items()}
    children = data.values() if isinstance(data, dict) else data if isinstance(data, list) else ()
    for child in children:
        _shift(child, offset)
