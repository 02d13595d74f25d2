"""The course's bibliography: course.yaml's `bibliography:` .bib files, read with pybtex into plain Works.

Only the facts an entry gives are kept (authors, year, title, where it appeared and at which volume,
issue and pages, a version, a URL, a note): a field the entry lacks stays out of every citation and
reference, nothing is made up. A .bib outside the course, missing or malformed is a problem at its line
(course.yaml's, or the entry's).
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from coursegen.errors import Problems
from coursegen.memo import remembered
from coursegen.paths import OUTSIDE_HINT, inside_course

# Where a work appeared, in the order an entry's fields are looked at: the first one it has is shown.
VENUE_FIELDS = ("journal", "booktitle", "institution", "school", "organization", "publisher", "howpublished")
SYNTAX_LINE = re.compile(r"\s*in line (\d+)")


@dataclass(frozen=True)
class Work:
    """One entry of the bibliography, its fields as plain text."""

    key: str
    kind: str  # the BibTeX entry type: article, techreport, misc, …
    authors: tuple[str, ...] = ()  # last names ("von" parts included), in order
    full_authors: tuple[str, ...] = ()  # as the entry writes them: "Sebastian Raschka"
    year: str = ""
    title: str = ""
    venue: str = ""
    volume: str = ""  # of a journal, with its `number` (issue) and `pages`: "37(4), 531–551"
    number: str = ""
    pages: str = ""
    version: str = ""
    url: str = ""
    note: str = ""


@dataclass(frozen=True)
class Bibliography:
    """Every work of the course's .bib files by key, and a digest of their texts (a parse input)."""

    works: dict[str, Work]
    digest: str = ""
    files: tuple[str, ...] = ()
    failed: bool = False  # a .bib could not be read: an unknown key may be one of its works


EMPTY = Bibliography({})


def read_bibliography(root: Path, entries, read, problems: Problems, memo=None) -> Bibliography:
    """Return the works of every .bib file course.yaml names (`entries`: (path, line) pairs), reporting
    files outside the course, missing, unreadable or malformed; `read` is the load stage's text reader, and
    `memo` keeps each text's works for the next build (a large .bib takes pybtex a while)."""
    works: dict[str, Work] = {}
    texts = []
    before = len(problems.items)
    for name, line in entries:
        text = _bib_text(root, name, line, read, problems)
        if text is None:
            continue
        texts.append((name, text))
        works_of, found = remembered(memo, "bibliography", (name, text), functools.partial(_parsed, text, name))
        problems.items.extend(found)
        for key, work in works_of.items():
            if key in works:
                problems.error(name, _entry_line(text, key), f"citation key '{key}' is defined in two .bib files")
            works.setdefault(key, work)
    digest = hashlib.sha256(repr(texts).encode()).hexdigest() if texts else ""
    failed = len(problems.items) > before
    return Bibliography(dict(sorted(works.items())), digest, tuple(name for name, _ in texts), failed)


def _bib_text(root: Path, name: str, line: int, read, problems: Problems) -> str | None:
    """Return one .bib file's text, or None with a problem at its line of course.yaml."""
    if inside_course(root, name) is None:
        problems.error("course.yaml", line, f"bibliography '{name}' is outside the course", OUTSIDE_HINT)
        return None
    file = root / name
    if not file.is_file():
        problems.error(
            "course.yaml",
            line,
            f"bibliography '{name}' not found",
            "name a .bib file of the course, e.g. references.bib",
        )
        return None
    return read(file, name, problems)


def _parsed(text: str, name: str) -> tuple[dict[str, Work], tuple]:
    """Return one .bib text's works and the problems reading it met."""
    found = Problems()
    return parse_bib(text, name, found), tuple(found.items)


def parse_bib(text: str, name: str, problems: Problems) -> dict[str, Work]:
    """Return the works of one .bib text, or none with a problem at the malformed entry's line."""
    from pybtex.database import BibliographyDataError, parse_string
    from pybtex.scanner import PybtexSyntaxError

    try:
        data = parse_string(text, "bibtex")
    except PybtexSyntaxError as err:
        line = _unclosed_entry(text) or _entry_start(text, err.lineno)
        message = SYNTAX_LINE.sub("", str(err.args[0] if err.args else err)).strip()
        noticed = f" (noticed at line {err.lineno})" if err.lineno != line else ""
        problems.error(
            name,
            line,
            f"malformed BibTeX entry: {message}{noticed}",
            "an entry reads @type{key, field = {value}, …}; check its braces, quotes and commas",
        )
        return {}
    except BibliographyDataError as err:  # a key given twice
        key = str(err).rsplit(":", 1)[-1].strip()
        problems.error(name, _entry_line(text, key, nth=1), f"BibTeX entry '{key}' is defined twice")
        return {}
    return {key: _work(key, entry) for key, entry in data.entries.items()}


def _work(key: str, entry) -> Work:
    """Return a Work of a pybtex entry, its LaTeX (braces, accents) made plain text."""
    fields = {name.lower(): _plain(value, dashes=name.lower() != "url") for name, value in entry.fields.items()}
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    return Work(
        key=key,
        kind=entry.type.lower(),
        authors=tuple(_plain(" ".join(p.prelast_names + p.last_names)) for p in people),
        full_authors=tuple(
            _plain(" ".join(p.first_names + p.middle_names + p.prelast_names + p.last_names)) for p in people
        ),
        year=fields.get("year", ""),
        title=fields.get("title", ""),
        venue=next((fields[f] for f in VENUE_FIELDS if fields.get(f)), ""),
        volume=fields.get("volume", ""),
        number=fields.get("number", ""),
        pages=fields.get("pages", ""),
        version=fields.get("version", ""),
        url=fields.get("url", ""),
        note=fields.get("note", ""),
    )


def _plain(latex: str, dashes: bool = True) -> str:
    """Return a BibTeX value as text: `{K3}` → K3, `\\"o` → ö, with latexcodec, pybtex's own decoder (pybtex's rich
    text parser took 136 s of CPU for a .bib of 2,000 entries on the loaded 2-core machine; this, 0.7 s), and
    TeX's dashes, `--` → – and `---` → — (Newton--Raphson, 531--551), which latexcodec makes only when it runs."""
    if "\\" in latex:
        import codecs

        import latexcodec  # noqa: F401 - registers the "ulatex" codec

        latex = codecs.decode(latex, "ulatex")  # type: ignore[call-overload]  # a text codec: str to str
    text = " ".join(latex.replace("{", "").replace("}", "").split())
    return text.replace("---", "\u2014").replace("--", "\u2013") if dashes else text


def _unclosed_entry(text: str) -> int | None:
    """Return the line of the first entry whose braces are still open where the next entry starts (or at the
    end): pybtex, reading on for the missing brace, gives up lines later."""
    depth, start = 0, None
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("@"):
            if depth > 0:
                return start
            depth, start = 0, number
        depth += line.count("{") - line.count("}")
    return start if depth > 0 else None


def _entry_start(text: str, lineno: int) -> int:
    """Return the line of the `@` that starts the entry holding line `lineno` (pybtex names where it gave up)."""
    lines = text.split("\n")[: max(lineno, 1)]
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].lstrip().startswith("@"):
            return index + 1
    return max(lineno, 1)


def _entry_line(text: str, key: str, nth: int = 0) -> int:
    """Return the line of the nth entry whose key is `key`, or 1."""
    found = [
        number
        for number, line in enumerate(text.split("\n"), 1)
        if re.match(r"\s*@\w+\s*[{(]\s*" + re.escape(key) + r"\s*,", line)
    ]
    return found[min(nth, len(found) - 1)] if found else 1
