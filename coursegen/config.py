"""course.yaml: the one configuration file, validated into frozen dataclasses."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import Problems, did_you_mean
from .paths import climbs_out
from .yamlio import LineDict, YamlError, load_yaml

CONFIG_NAME = "course.yaml"
UNIT_KINDS = ("lesson", "review")
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# base_url reaches the Content-Security-Policy (where ';', ',' and spaces separate its parts) and
# <base href>: only a host, an optional port and a path of plain URL characters get through.
BASE_URL = re.compile(r"^https?://(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?"
                      r"(?:/[A-Za-z0-9._~!$&()*+=:@%/-]*)?$")


@dataclass(frozen=True)
class UnitConfig:
    """One entry of `units:`: a written unit (by slug) or an upcoming one (title only)."""

    slug: str
    line: int
    part: str = ""
    title: str = ""
    kind: str = "lesson"
    upcoming: bool = False
    topics: tuple[str, ...] = ()  # short labels listed under the unit on the progress map


@dataclass(frozen=True)
class PyodideConfig:
    """Where widgets load Pyodide from: the pinned CDN or a self-hosted copy."""

    source: str = "cdn"  # "cdn" or "local"
    version: str = "314.0.7"
    path: str = "node_modules/pyodide"  # local distribution, relative to the course root
    integrity: str = ""  # SRI hash of pyodide.mjs (the loader the widget worker imports); see docs/widgets.md


@dataclass(frozen=True)
class CourseConfig:
    """The validated contents of course.yaml."""

    title: str
    description: str = ""
    base_url: str = ""
    language: str = "en"
    units: tuple[UnitConfig, ...] = ()
    pyodide: PyodideConfig = field(default_factory=PyodideConfig)
    theme: dict = field(default_factory=dict)


TOP_KEYS = {"title": str, "description": str, "base_url": str, "language": str,
            "units": list, "pyodide": dict, "theme": dict}
UNIT_KEYS = {"slug": str, "part": str, "title": str, "kind": str, "upcoming": bool, "topics": list}
PYODIDE_KEYS = {"source": str, "version": str, "path": str, "integrity": str}
THEME_KEYS = {"accent": str}


def check_mapping(data, schema: dict, path: str, problems: Problems, what: str) -> dict:
    """Report unknown keys and wrongly typed values; return the keys that passed."""
    if not isinstance(data, dict):
        problems.error(path, getattr(data, "line", 1), f"{what} must be a mapping of keys to values")
        return {}
    good = {}
    for key, value in data.items():
        line = data.line_of(key) if isinstance(data, LineDict) else 1
        if key not in schema:
            near = did_you_mean(key, schema)
            problems.error(path, line, f"unknown key '{key}' in {what}",
                           (near + " " if near else "") + "allowed keys: " + ", ".join(schema))
        elif not isinstance(value, schema[key]) or (schema[key] is int and isinstance(value, bool)):
            problems.error(path, line, f"'{key}' in {what} must be a {schema[key].__name__}, "
                                       f"found {type(value).__name__} {value!r}")
        else:
            good[key] = value
    return good


def parse_config(text: str, problems: Problems, path: str = CONFIG_NAME) -> CourseConfig | None:
    """Return the validated configuration, or None when it is too broken to use."""
    try:
        data = load_yaml(text)
    except YamlError as err:
        problems.error(path, err.line, err.message)
        return None
    top = check_mapping(data if data is not None else LineDict(), TOP_KEYS, path, problems, CONFIG_NAME)
    if "title" not in top:
        problems.error(path, 1, "course.yaml has no 'title'", "add a line such as: title: My course")
    entries = data.get("units", []) if isinstance(data, dict) else []
    units = tuple(_parse_units(entries, path, problems))
    if not units and isinstance(entries, list):  # units that are no list: check_mapping said so at their line
        problems.error(path, 1, "course.yaml lists no units", "add a 'units:' list of lesson and review slugs")
    base_url = top.get("base_url", "")
    if base_url and not re.match(r"^https?://", base_url):
        problems.error(path, data.line_of("base_url"), f"base_url must start with http:// or https://, found {base_url!r}")
    elif base_url and not BASE_URL.match(base_url):
        problems.error(path, data.line_of("base_url"), f"base_url {base_url!r} is not a plain http(s) address",
                       "write a host and an optional path, such as https://example.org/course/; "
                       "no spaces, quotes, ';', ',', '?' or '#'")
    pyodide = check_mapping(top.get("pyodide", LineDict()), PYODIDE_KEYS, path, problems, "pyodide")
    if pyodide.get("source", "cdn") not in ("cdn", "local"):
        problems.error(path, top["pyodide"].line_of("source"),
                       f"pyodide source must be 'cdn' or 'local', found {pyodide['source']!r}")
    if climbs_out(pyodide.get("path", "")):  # by name only: node_modules may well be a link elsewhere
        problems.error(path, top["pyodide"].line_of("path"), f"pyodide path {pyodide['path']!r} is outside the course",
                       "name a folder inside the course, such as node_modules/pyodide")
    theme = check_mapping(top.get("theme", LineDict()), THEME_KEYS, path, problems, "theme")
    return CourseConfig(title=top.get("title", ""), description=top.get("description", ""),
                        base_url=base_url.rstrip("/") + "/" if base_url else "",
                        language=top.get("language", "en"), units=units,
                        pyodide=PyodideConfig(**pyodide), theme=theme)


def _parse_units(entries, path: str, problems: Problems):
    """Yield UnitConfig for each well-formed entry of `units:`, reporting the rest."""
    if not isinstance(entries, list):  # reported by check_mapping
        return
    seen: dict[str, int] = {}
    for entry in entries:
        if isinstance(entry, str):
            entry = LineDict(slug=entry)
            entry.lines = {}
        good = check_mapping(entry, UNIT_KEYS, path, problems, "a unit")
        line = getattr(entry, "line", 1)
        slug = good.get("slug", "")
        if not slug:
            problems.error(path, line, "a unit has no 'slug'", "every unit needs a slug such as: slug: kda")
            continue
        if not SLUG.match(slug):
            problems.error(path, line, f"slug {slug!r} must be lowercase letters, digits and single hyphens")
            continue
        if slug in seen:
            problems.error(path, line, f"unit '{slug}' is listed twice", f"first listed at line {seen[slug]}")
            continue
        seen[slug] = line
        kind = good.get("kind", "lesson")
        if kind not in UNIT_KINDS:
            problems.error(path, line, f"unit kind must be 'lesson' or 'review', found {kind!r}")
        topics = good.pop("topics", [])
        if not all(isinstance(t, str) and t.strip() for t in topics):
            problems.error(path, entry.line_of("topics"), f"'topics' of unit '{slug}' must be a list of short texts")
        yield UnitConfig(line=line, topics=tuple(t for t in topics if isinstance(t, str)), **good)


def load_config(root: Path, problems: Problems, read=None) -> CourseConfig | None:
    """Read and validate course.yaml under `root` (`read` as `read_text`, e.g. a caching reader)."""
    file = root / CONFIG_NAME
    if not file.is_file():
        problems.error(CONFIG_NAME, 1, "no course.yaml found", f"create one in {root}")
        return None
    return parse_config((read or read_text)(file, CONFIG_NAME, problems) or "", problems)


def read_text(file: Path, shown: str, problems: Problems) -> str | None:
    """Return a file's text, or None (with a problem) when it cannot be read or is not UTF-8."""
    try:
        data = file.read_bytes()
    except OSError as err:
        problems.error(shown, 1, f"cannot read '{shown}': {err.strerror or err}")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        problems.error(shown, line, f"file is not UTF-8 (byte 0x{data[err.start]:02x} "
                                    f"at offset {err.start})", "save the file as UTF-8")
        return None
