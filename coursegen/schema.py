"""One checker for the mappings authors write: course.yaml and its parts, front matter, block
attributes, widget specs and exercise checks.

A Schema names the keys a mapping may hold and the type of each (a nested Schema for a mapping
inside it), the keys it must have, and how messages name the mapping and its keys. `check`
reports every problem at its line, in one wording everywhere, and returns what passed:

    unknown key 'titel' in course.yaml            hint: did you mean 'title'? known keys are: …
    key 'units' in course.yaml must be a list, found 5
    course.yaml has no 'title'                    hint: add a line such as: title: My course
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import Problems, did_you_mean
from .yamlio import LineDict


@dataclass(frozen=True)
class Schema:
    """What a mapping may hold, and how messages name it."""

    what: str  # the mapping, in messages: "course.yaml", "a unit", "front matter", "block attributes"
    keys: dict  # key → a type, a tuple of types (`object`: any value) or a Schema (a mapping checked in turn)
    required: dict = field(default_factory=dict)  # key → an example line for the hint ("title: My course")
    noun: str = "key"  # what its keys are called: "key", "front-matter key", "attribute"
    located: bool = True  # messages about a key end "in <what>" (False where the noun says it already)
    hints: dict = field(default_factory=dict)  # key → a hint for a value of the wrong type

    def key_name(self, key) -> str:
        """Return how messages name one key: "key 'units' in course.yaml", "attribute 'caption'"."""
        return f"{self.noun} '{key}'" + (f" in {self.what}" if self.located else "")


def check(data, schema: Schema, path: str, problems: Problems, line: int = 1) -> LineDict:
    """Report unknown keys, values of the wrong type and missing required keys; return the keys that
    passed (nested mappings checked by their own Schema) as a LineDict with `data`'s lines.

    `line` is where the mapping starts: problems with it as a whole go there, and so does every
    problem when `data` knows no lines of its own."""
    good = LineDict()
    good.line, good.lines = getattr(data, "line", line), dict(getattr(data, "lines", {}))
    if not isinstance(data, dict):
        problems.error(path, line, f"{schema.what} must be a mapping of keys to values, found {shown(data)}")
        return good
    for key, value in data.items():
        at = data.line_of(key) if isinstance(data, LineDict) else line
        kind = schema.keys.get(key)
        if kind is None:
            near = did_you_mean(key, schema.keys)
            problems.error(
                path,
                at,
                f"unknown {schema.key_name(key)}",
                (near + " " if near else "") + f"known {schema.noun}s are: " + ", ".join(schema.keys),
            )
        elif not fits(value, kind):
            problems.error(
                path,
                at,
                f"{schema.key_name(key)} must be {type_names(kind)}, found {value!r}",
                schema.hints.get(key, ""),
            )
        else:
            good[key] = check(value, kind, path, problems, at) if isinstance(kind, Schema) else value
    for key, example in schema.required.items():
        if blank(good.get(key)):
            problems.error(path, line, f"{schema.what} has no '{key}'", f"add a line such as: {example}")
    return good


def fits(value, kind) -> bool:
    """Return whether `value` has the type `kind` allows; true and false are not numbers here."""
    kinds = tuple(dict if isinstance(k, Schema) else k for k in _alternatives(kind))
    if isinstance(value, bool) and bool not in kinds and object not in kinds:
        return False
    return isinstance(value, kinds)


def type_names(kind) -> str:
    """Return the allowed types in words: 'a list', 'an int or float'."""
    names = ["dict" if isinstance(k, Schema) else k.__name__ for k in _alternatives(kind)]
    return ("an " if names[0][0] in "aeiou" else "a ") + " or ".join(names)


def _alternatives(kind) -> tuple:
    return kind if isinstance(kind, tuple) else (kind,)


def shown(value, width: int = 60) -> str:
    """Return `repr(value)`, cut short: a whole file that is no mapping may be long."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def blank(value) -> bool:
    """Return whether a required value is missing: absent, or text with nothing in it."""
    return value is None or (isinstance(value, str) and not value.strip())
