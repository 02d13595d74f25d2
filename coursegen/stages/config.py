"""course.yaml: the one configuration file, validated into frozen dataclasses."""

from __future__ import annotations

import keyword
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from coursegen.author_code import Limits, parse_limits
from coursegen.errors import Problems, did_you_mean
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
# `id:` keys the learners' progress in their browsers (templates/assets/progress.js): plain characters only,
# so it reads the same in a storage key, a JSON export and a page's data block.
COURSE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
# `language:` names the catalogue file (templates/messages/<language>.yaml) and the pages' lang: only a
# well-formed BCP 47 tag (RFC 5646, section 2.1, without the grandfathered forms) of at most 35 characters
# (its section 4.4.1) gets through: letters, digits and hyphens, so never a path.
LANGUAGE_TAG = re.compile(
    r"^(?:[A-Za-z]{2,3}(?:-[A-Za-z]{3}){0,3}|[A-Za-z]{4,8})"  # language, extended language subtags
    r"(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|[0-9]{3}))?"  # script, region
    r"(?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*"  # variants
    r"(?:-[0-9A-WY-Za-wy-z](?:-[A-Za-z0-9]{2,8})+)*(?:-x(?:-[A-Za-z0-9]{1,8})+)?$"  # extensions, private use
)
LANGUAGE_LENGTH = 35


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
    id: str = ""  # the course's identity for learners' stored progress; "" derives it from the site's address
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
    bibliography: tuple[tuple[str, int], ...] = ()  # the .bib files' paths in the course, with their lines
    citations: str = "author-year"  # how citations read: "author-year" or "numbered" (features/citations/)


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
        "id": str,
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
        "bibliography": (list, str),
        "citations": str,
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
        id=_course_id(top, data, path, problems),
        description=top.get("description", ""),
        base_url=base_url.rstrip("/") + "/" if base_url else "",
        language=_language(top, data, path, problems),
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
        bibliography=_bibliography(top, data, path, problems),
        citations=_citation_style(top, data, path, problems),
    )


def _course_id(top: dict, data: LineDict, path: str, problems: Problems) -> str:
    """Return `id:`, the course's identity for stored progress, or "" (with a problem) when it is not a plain token."""
    course_id = top.get("id", "")
    if "id" in top and not COURSE_ID.match(course_id):
        problems.error(
            path,
            data.line_of("id"),
            f"id {course_id!r} must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
            "for example: id: bread-basics-2026 (once published, keep it: learners' progress is stored under it)",
        )
        return ""
    return course_id


def slug_from(name: str) -> str:
    """Return the slug course.yaml would accept for a file's slug `name`: accents dropped (NFC or NFD
    alike), lowercase, other characters hyphens ('Café Noir' -> 'cafe-noir')."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return "-".join(re.findall(r"[a-z0-9]+", plain)) or "unit"


def language_tag(text: str) -> bool:
    """Return whether `text` is a well-formed BCP 47 language tag coursegen accepts (see LANGUAGE_TAG)."""
    return len(text) <= LANGUAGE_LENGTH and LANGUAGE_TAG.match(text) is not None


def _language(top: dict, data, path: str, problems: Problems) -> str:
    """Return `language:` (default 'en'); a POSIX locale name such as 'de_DE' falls back to its language,
    with a warning; anything else that is no language tag is an error (and the pages stay English)."""
    language = top.get("language", "en")
    if language_tag(language):
        return language
    line = data.line_of("language")
    shown = repr(language) if len(language) <= 40 else repr(language[:40]) + "…"
    if language_tag(language.replace("_", "-")):
        primary = language.split("_")[0].lower()
        problems.warning(
            path,
            line,
            f"language {shown} is not a BCP 47 tag: the pages use {primary!r}",
            f"write {language.replace('_', '-')!r}, with a hyphen",
        )
        return primary
    problems.error(
        path,
        line,
        f"language {shown} is not a language tag",
        "write a BCP 47 tag such as 'en', 'fr' or 'pt-BR': letters, digits and hyphens, "
        f"at most {LANGUAGE_LENGTH} characters",
    )
    return "en"


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


def _bibliography(top: dict, data: LineDict, path: str, problems: Problems) -> tuple[tuple[str, int], ...]:
    """Return `bibliography:` as (path, line) pairs of .bib files (the citations feature checks that each is
    inside the course, following symbolic links, when it reads them)."""
    entries = top.get("bibliography", [])
    entries = [entries] if isinstance(entries, str) else entries
    line = data.line_of("bibliography") if isinstance(data, LineDict) and "bibliography" in data else 1
    good = []
    for entry in entries:
        if not isinstance(entry, str) or not entry.endswith(".bib"):
            problems.error(
                path,
                line,
                f"bibliography {entry!r} must name a .bib file",
                "for example: bibliography: [references.bib]",
            )
        else:
            good.append((entry, line))
    return tuple(good)


CITATION_STYLES = ("author-year", "numbered")


def _citation_style(top: dict, data: LineDict, path: str, problems: Problems) -> str:
    """Return `citations:`, the citation style, reporting a style that is neither of the two."""
    chosen = top.get("citations", CITATION_STYLES[0])
    if chosen not in CITATION_STYLES:
        problems.error(
            path,
            data.line_of("citations"),
            f"citations must be 'author-year' or 'numbered', found {chosen!r}",
            did_you_mean(chosen, CITATION_STYLES) or "author-year gives (Knuth, 1984); numbered gives [1]",
        )
        return CITATION_STYLES[0]
    return chosen


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
        if found := csp_problem(directive, sources):
            problems.error(path, data.line_of(directive), *found)
            continue
        good.append((directive, tuple(sources)))
    return tuple(good)


def csp_problem(directive: str, sources: list) -> tuple[str, str] | None:
    """Return (message, hint) for the first of `sources` that `directive` may not allow, or None: the
    rules for course.yaml's `csp:` and a course extension's csp() alike."""
    bad = [s for s in sources if not isinstance(s, str) or not CSP_SOURCE.match(s)]
    if bad:
        return (
            f"CSP {directive} source {bad[0]!r} is not an allowed source",
            "give origins or folders such as https://example.org or https://example.org/media/",
        )
    unsafe = [(s, why) for s in sources if (why := csp_refusal(directive, s))]
    if unsafe:
        return (
            f"CSP {directive} source {unsafe[0][0]!r} is refused: {unsafe[0][1]}",
            "name the https origin or folder it comes from, such as https://cdn.example.org/lib/",
        )
    return None


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


MAX_TEXT_BYTES = 5 * 1024 * 1024  # a source, course.yaml, a catalogue: far beyond any lesson (docs/authoring.md)
# A notebook stores its outputs (images in base64) beside its text; the build ignores them, and the notebook
# reader bounds them per cell with a message that says which cell (stages/notebook.py).
MAX_NOTEBOOK_BYTES = 100 * 1024 * 1024
SIGNATURES = (  # the first bytes of files that are no text, mistaken for one by their name
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (or a Word or OpenDocument file)"),
)
UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")


def read_text(file: Path, shown: str, problems: Problems) -> str | None:
    """Return a file's text, or None (with a problem) when it cannot be read, is larger than
    MAX_TEXT_BYTES, or is not UTF-8 (saying what it seems to be instead: UTF-16, an image, …)."""
    limit = MAX_NOTEBOOK_BYTES if file.suffix == ".ipynb" else MAX_TEXT_BYTES
    try:
        with file.open("rb") as opened:
            data = opened.read(limit + 1)
    except OSError as err:
        problems.error(shown, 1, f"cannot read '{shown}': {err.strerror or err}")
        return None
    if len(data) > limit:
        problems.error(
            shown,
            1,
            f"file is larger than {limit // (1024 * 1024)} MB, the most a text file of a course may be",
            "clear its stored outputs (Jupyter: Edit → Clear Outputs of All Cells), or split it"
            if file.suffix == ".ipynb"
            else "split it into several files; put data the course's Python reads in its package, not in a page",
        )
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        problems.error(shown, data[: err.start].count(b"\n") + 1, *_not_utf8(data, err.start))
        return None
    if "\x00" in text:  # valid UTF-8, but no text file holds one: UTF-16 without its mark, or a binary file
        problems.error(shown, text[: text.index("\x00")].count("\n") + 1, *_not_utf8(data, data.index(b"\x00")))
        return None
    return text


def _not_utf8(data: bytes, at: int) -> tuple[str, str]:
    """Return the message and hint for bytes that are not UTF-8: what they look like, where that is plain."""
    kind = next((name for start, name in SIGNATURES if data.startswith(start)), "")
    if kind:
        return f"file is {kind}, not UTF-8 text", "give the file the name its kind has (an image: .png, …)"
    if data.startswith(UTF16_MARKS) or (len(data) > 1 and b"\x00" in data[:2]):
        return "file is not UTF-8: it looks like UTF-16", "save it as UTF-8"
    return f"file is not UTF-8 (byte 0x{data[at]:02x} at offset {at})", "save the file as UTF-8"
