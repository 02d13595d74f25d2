"""course.yaml: the one configuration file, validated into frozen dataclasses."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path

from coursegen.author_code import Limits, parse_limits
from coursegen.errors import Problems
from coursegen.paths import climbs_out
from coursegen.schema import Schema, blank, check
from coursegen.yamlio import LineDict, YamlError, load_yaml

CONFIG_NAME = "course.yaml"
UNIT_KINDS = ("lesson", "review")
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# base_url reaches the Content-Security-Policy (where ';', ',' and spaces separate its parts) and
# <base href>: only a host, an optional port and a path of plain URL characters get through.
BASE_URL = re.compile(
    r"^https?://(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?"
    r"(?:/[A-Za-z0-9._~!$&()*+=:@%/-]*)?$"
)
PORT = re.compile(r"^https?://(?:\[[^\]]*\]|[^/:]*)(?::(\d+))?")  # of a base_url that BASE_URL matched


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
class PythonConfig:
    """The course's own Python package: a folder in the course root, imported by this name."""

    package: str = "kernels"


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
    limits: Limits = field(default_factory=Limits)  # what each call of the course's own Python may use
    python: PythonConfig = field(default_factory=PythonConfig)
    extensions: tuple[str, ...] = ()  # the course's own extensions: module names or .py files in the course
    callouts: tuple[tuple[str, str], ...] = ()  # extra `::: name` callouts: (name, default title)
    csp: tuple[tuple[str, tuple[str, ...]], ...] = ()  # extra allowed sources: (directive, sources)
    messages: tuple[tuple[str, object, int], ...] = ()  # UI text overrides: (key, text, line); theme/messages.py
    language_line: int = 1  # where `language:` stands, for the warning about a language without a catalogue


CSP_DIRECTIVES = (
    "default-src",
    "script-src",
    "style-src",
    "img-src",
    "font-src",
    "connect-src",
    "media-src",
    "frame-src",
    "worker-src",
    "manifest-src",
)
CSP_SOURCE = re.compile(
    r"^(?:https?://(?:\*\.)?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?::\d+)?(?:/[^\s;,'*]*)?|https?:|data:|blob:|'self')$"
)
# Sources that would let a page run code the course did not ship, refused per directive. A script
# (or worker: default-src stands in for both where they are unset) may come only from a named https
# origin or folder: a data: or blob: address is itself the script, a bare scheme or a wildcard
# admits any host's, and plain http lets anyone on the way swap it. A frame or a stylesheet may not
# be written into its address either (a data: or blob: frame can pass for the site's own page).
CODE_DIRECTIVES = ("default-src", "script-src", "worker-src")
NO_INLINE_DIRECTIVES = ("frame-src", "style-src")


def csp_refusal(directive: str, source: str) -> str:
    """Return why `source` may not widen `directive` (a source CSP_SOURCE already matched), or ''."""
    if directive == "worker-src" and source == "blob:":  # the policy has it already: the widgets' worker is one
        return ""
    code = directive in CODE_DIRECTIVES
    runs = "run" if code else "show"
    if source in ("data:", "blob:") and (code or directive in NO_INLINE_DIRECTIVES):
        return f"a {source} address is its own content, so the page would {runs} whatever it holds"
    if source in ("https:", "http:") and (code or directive in NO_INLINE_DIRECTIVES):
        return f"it allows every host on the web, so the page would {runs} anything from anywhere"
    if code and "://*." in source:
        return "a wildcard allows every subdomain, so the page would run scripts from hosts no one checked"
    if code and source.startswith("http://"):
        return "a script sent over plain http can be replaced on its way"
    return ""


PYTHON = Schema("python", {"package": str})
PYODIDE = Schema("pyodide", {"source": str, "version": str, "path": str, "integrity": str})
THEME = Schema(
    "theme", {"accent": str, "accent_dark": str, "extra_css": list, "extra_js": list, "logo": str, "favicon": str}
)
CSP = Schema("csp", {directive: (str, list) for directive in CSP_DIRECTIVES}, noun="CSP directive", located=False)
TOP = Schema(
    CONFIG_NAME,
    {
        "title": str,
        "description": str,
        "base_url": str,
        "language": str,
        "units": list,
        "pyodide": PYODIDE,
        "theme": THEME,
        "python": PYTHON,
        "extensions": list,
        "callouts": (list, dict),
        "csp": CSP,
        "limits": dict,
        "messages": dict,
    },
    required={"title": "title: My course"},
)
UNIT = Schema(
    "a unit",
    {"slug": str, "part": str, "title": str, "kind": str, "upcoming": bool, "topics": list},
    required={"slug": "slug: first-steps"},
)
HEX_COLOUR = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")


def parse_config(
    text: str, problems: Problems, path: str = CONFIG_NAME, require_units: bool = True
) -> CourseConfig | None:
    """Return the validated configuration, or None when it is too broken to use.

    `require_units=False` accepts a course with no units yet (for `new`, which adds the first)."""
    try:
        data = load_yaml(text)
    except YamlError as err:
        problems.error(path, err.line, err.message, err.hint)
        return None
    if isinstance(data, dict) and "units" in data and data["units"] is None:
        data["units"] = []  # `units:` with nothing under it yet: a course with no units
    top = check(data if data is not None else LineDict(), TOP, path, problems)
    entries = data.get("units", []) if isinstance(data, dict) else []
    units = tuple(_parse_units(entries, path, problems))
    if not units and require_units and isinstance(entries, list):  # units that are no list: check said so at their line
        problems.error(path, 1, "course.yaml lists no units", "add a 'units:' list of lesson and review slugs")
    base_url = top.get("base_url", "")
    if base_url and not re.match(r"^https?://", base_url):
        problems.error(
            path, data.line_of("base_url"), f"base_url must start with http:// or https://, found {base_url!r}"
        )
    elif base_url and not BASE_URL.match(base_url):
        problems.error(
            path,
            data.line_of("base_url"),
            f"base_url {base_url!r} is not a plain http(s) address",
            "write a host and an optional path, such as https://example.org/course/; "
            "no spaces, quotes, ';', ',', '?' or '#'",
        )
    elif base_url and (port := _port(base_url)) and not 0 < int(port) <= 65535:
        problems.error(
            path,
            data.line_of("base_url"),
            f"base_url {base_url!r} has port {port}, which no address can have",
            "ports run from 1 to 65535; leave the port out for the usual one (443 for https)",
        )
    pyodide = top.get("pyodide", LineDict())
    if pyodide.get("source", "cdn") not in ("cdn", "local"):
        problems.error(
            path, pyodide.line_of("source"), f"pyodide source must be 'cdn' or 'local', found {pyodide['source']!r}"
        )
    if climbs_out(pyodide.get("path", "")):  # by name only: node_modules may well be a link elsewhere
        problems.error(
            path,
            pyodide.line_of("path"),
            f"pyodide path {pyodide['path']!r} is outside the course",
            "name a folder inside the course, such as node_modules/pyodide",
        )
    theme = top.get("theme", LineDict())
    for key in ("accent", "accent_dark"):
        if key in theme and not HEX_COLOUR.match(theme[key]):
            problems.error(
                path, theme.line_of(key), f"theme {key} must be a colour such as '#1f5fbf', found {theme.pop(key)!r}"
            )
    for key in ("extra_css", "extra_js"):
        if key in theme and not all(isinstance(item, str) and item for item in theme[key]):
            problems.error(path, theme.line_of(key), f"theme {key} must list file paths, found {theme.pop(key)!r}")
    python = top.get("python", LineDict())
    package = python.get("package", PythonConfig.package)
    if not package.isidentifier() or keyword.iskeyword(package):
        problems.error(
            path,
            python.line_of("package"),
            f"python package must be a Python name such as 'kernels', found {package!r}",
            "it is the name of a folder in the course, imported as `import <name>`",
        )
        python.pop("package")
    return CourseConfig(
        title=top.get("title", ""),
        description=top.get("description", ""),
        base_url=base_url.rstrip("/") + "/" if base_url else "",
        language=top.get("language", "en"),
        units=units,
        pyodide=PyodideConfig(**pyodide),
        theme=dict(theme),
        python=PythonConfig(**python),
        limits=parse_limits(top.get("limits", LineDict()), path, problems),
        extensions=_extensions(top, data, path, problems),
        callouts=_callouts(top, data, path, problems),
        csp=_csp_sources(top, path, problems),
        messages=_messages(top),
        language_line=data.line_of("language") if isinstance(data, LineDict) and "language" in data else 1,
    )


def _messages(top: LineDict) -> tuple[tuple[str, object, int], ...]:
    """Return `messages:` as (key, text, line), checked against the catalogue later (theme/messages.py)."""
    entries = top.get("messages", LineDict())
    return tuple((str(key), text, entries.line_of(key)) for key, text in entries.items())


def _port(base_url: str) -> str:
    """Return the port a base_url names, as written, or ''."""
    found = PORT.match(base_url)
    return (found.group(1) or "") if found else ""


def _extensions(top: dict, data: LineDict, path: str, problems: Problems) -> tuple[str, ...]:
    """Return `extensions:` (module names or .py files), reporting entries of the wrong kind."""
    entries = top.get("extensions", [])
    if not all(isinstance(e, str) and e.strip() for e in entries):
        problems.error(
            path,
            data.line_of("extensions"),
            f"'extensions' must list module names or .py files, found {entries!r}",
            "for example: extensions: [extensions/glossary.py]",
        )
        return ()
    return tuple(entries)


def _callouts(top: dict, data: LineDict, path: str, problems: Problems) -> tuple[tuple[str, str], ...]:
    """Return extra callouts as (name, title): `[warning, tip]`, or `{warning: "Watch out"}` with titles."""
    entries = top.get("callouts", [])
    pairs = list(entries.items()) if isinstance(entries, dict) else [(e, None) for e in entries]
    good = []
    for name, title in pairs:
        if not isinstance(name, str) or not SLUG.match(name) or not isinstance(title, (str, type(None))):
            problems.error(
                path,
                data.line_of("callouts"),
                f"callout {name!r} must be a lowercase name such as 'warning' (with an optional title)",
            )
            continue
        good.append((name, title or name.replace("-", " ").capitalize()))
    return tuple(good)


def _csp_sources(top: dict, path: str, problems: Problems) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Return `csp:` as (directive, sources): extra sources the pages may load from, checked one by one."""
    data = top.get("csp", LineDict())  # its directives: checked by the CSP schema
    good = []
    for directive, sources in data.items():
        sources = [sources] if isinstance(sources, str) else sources
        bad = [s for s in sources if not isinstance(s, str) or not CSP_SOURCE.match(s)]
        if bad:
            problems.error(
                path,
                data.line_of(directive),
                f"CSP {directive} source {bad[0]!r} is not an allowed source",
                "give origins or folders such as https://example.org or https://example.org/media/",
            )
            continue
        unsafe = [(s, why) for s in sources if (why := csp_refusal(directive, s))]
        if unsafe:
            source, why = unsafe[0]
            problems.error(
                path,
                data.line_of(directive),
                f"CSP {directive} source {source!r} is refused: {why}",
                "name the https origin or folder it comes from, such as https://cdn.example.org/lib/",
            )
            continue
        good.append((directive, tuple(sources)))
    return tuple(good)


def _parse_units(entries, path: str, problems: Problems):
    """Yield UnitConfig for each well-formed entry of `units:`, reporting the rest."""
    if not isinstance(entries, list):  # reported by check
        return
    seen: dict[str, int] = {}
    for entry in entries:
        if isinstance(entry, str):
            entry = LineDict(slug=entry)
            entry.lines = {}
        line = getattr(entry, "line", 1)
        good = check(entry, UNIT, path, problems, line)
        slug = good.get("slug", "")
        if blank(slug):  # reported by check
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
            problems.error(path, good.line_of("topics"), f"'topics' of unit '{slug}' must be a list of short texts")
        yield UnitConfig(line=line, topics=tuple(t for t in topics if isinstance(t, str)), **dict(good))


def load_config(root: Path, problems: Problems, read=None, require_units: bool = True) -> CourseConfig | None:
    """Read and validate course.yaml under `root` (`read` as `read_text`, e.g. a caching reader)."""
    file = root / CONFIG_NAME
    if not file.is_file():
        problems.error(
            CONFIG_NAME, 1, "no course.yaml found", f"create one in {root}, or start a course with: coursegen init"
        )
        return None
    return parse_config((read or read_text)(file, CONFIG_NAME, problems) or "", problems, require_units=require_units)


def config_line(root: Path, key: str, indented: bool = False) -> int:
    """Return the line of course.yaml where `key` (e.g. 'pyodide:') starts, or 1; `indented` finds
    it under a mapping too."""
    try:
        lines = (root / CONFIG_NAME).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 1
    return next(
        (number for number, row in enumerate(lines, 1) if (row.lstrip() if indented else row).startswith(key)), 1
    )


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
        problems.error(
            shown,
            line,
            f"file is not UTF-8 (byte 0x{data[err.start]:02x} at offset {err.start})",
            "save the file as UTF-8",
        )
        return None
