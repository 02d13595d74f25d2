"""The options of a MyST directive fence, shared by every feature that reads one.

A directive (```` ```{figure} path ````) may start its body with option lines, `:name: fig-basins`,
or with a YAML block between two `---` lines; the rest is its content. `read_directive` splits a
fence into those parts and keeps each option's line, so a feature can report a bad option where it
stands. Only syntax lives here: which options a directive takes is the directive's business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from coursegen.yamlio import YamlError, load_yaml

OPTION_LINE = re.compile(r"^:([A-Za-z][\w-]*):(?:\s+(.*?))?\s*$")


@dataclass(frozen=True)
class Option:
    """One option's text and its 1-based line in the page."""

    value: str
    line: int


@dataclass(frozen=True)
class Directive:
    """A directive fence: its name, argument (the rest of the first line), options, and content."""

    name: str
    argument: str
    line: int  # the fence's opening line
    options: dict[str, Option] = field(default_factory=dict)
    body: str = ""
    body_line: int = 0  # the line of the content's first line
    problems: tuple[tuple[int, str, str], ...] = ()  # (line, message, hint) of options it could not read


def read_directive(info: str, content: str, line: int) -> Directive:
    """Return the directive of a fence with this info string (`{name} argument`), content and opening line."""
    head, _, argument = info.strip().partition(" ")
    name = head[1:-1] if head.startswith("{") and head.endswith("}") else head
    lines = content.split("\n")
    if lines and lines[0].strip() == "---":
        return _yaml_options(name, argument.strip(), line, lines)
    options: dict[str, Option] = {}
    at = 0
    while at < len(lines) and (found := OPTION_LINE.match(lines[at].strip())):
        options[found.group(1)] = Option(found.group(2) or "", line + 1 + at)
        at += 1
    body, body_line = _body(lines, at, line)
    return Directive(name, argument.strip(), line, options, body, body_line)


def _yaml_options(name: str, argument: str, line: int, lines: list[str]) -> Directive:
    """Read options written as a YAML block between `---` lines at the top of the content."""
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        problem = (line + 1, "the options' '---' block is never closed", "end it with a line '---'")
        return Directive(name, argument, line, {}, "", line + 1, (problem,))
    options: dict[str, Option] = {}
    problems: tuple = ()
    try:
        data = load_yaml("\n".join(lines[1:end]), first_line=line + 2)
    except YamlError as err:
        data, problems = None, ((err.line, err.message, err.hint or ""),)
    if data is not None and not isinstance(data, dict):
        problems = ((line + 2, "the options' '---' block is not a mapping", "write 'name: value' lines"),)
    elif isinstance(data, dict):
        for key, value in data.items():
            where = data.line_of(key) if hasattr(data, "line_of") else line + 2
            options[str(key)] = Option("" if value is None else str(value), where or line + 2)
    body, body_line = _body(lines, end + 1, line)
    return Directive(name, argument, line, options, body, body_line, problems)


def _body(lines: list[str], at: int, line: int) -> tuple[str, int]:
    """Return the content after the options (a blank line after them is not content) and its first line."""
    if at < len(lines) and not lines[at].strip() and at > 0:
        at += 1
    return "\n".join(lines[at:]).strip("\n"), line + 1 + at
