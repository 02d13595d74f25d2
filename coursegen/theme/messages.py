"""The message catalogue: every UI text the default theme puts into pages, in the course's language.

The theme ships `messages/<language>.yaml` files of flat dotted keys; `en.yaml` is the reference,
and every other catalogue has exactly its keys, each with the same `{placeholders}`. A course picks one
with `language:` in course.yaml (`fr-CA` falls back to `fr`; a language with no catalogue is a warning
and the pages use English), overrides single strings with `messages:`, and may ship a whole
catalogue as its own templates/messages/<language>.yaml, which replaces the theme's file as any theme
file does. A key the chosen catalogue lacks keeps its English text.
"""

from __future__ import annotations

import functools
import html
import json
import string
from pathlib import Path

import jinja2
from markupsafe import Markup

from coursegen.errors import Problems, did_you_mean
from coursegen.memo import Memo, remembered
from coursegen.theme import files as theme
from coursegen.yamlio import LineDict, YamlError, load_yaml

FOLDER = "messages"
REFERENCE = "en"
CONFIG_NAME = "course.yaml"


def catalogue_path(root: Path, language: str) -> Path | None:
    """Return the catalogue file for `language` (the course's own first, then the theme's), or None."""
    return theme.find(root, f"{FOLDER}/{language}.yaml")


def shipped_languages(root: Path) -> list[str]:
    """Return the languages with a catalogue, the course's and the theme's together."""
    return sorted({file.stem for folder in theme.folders(root) for file in (folder / FOLDER).glob("*.yaml")})


def chosen_language(root: Path, language: str) -> str | None:
    """Return the catalogue that serves `language`: itself, else its primary subtag ('fr-CA' -> 'fr'), else None."""
    for candidate in (language, language.split("-")[0].lower()):
        if candidate and catalogue_path(root, candidate):
            return candidate
    return None


def placeholders(text: str) -> set[str]:
    """Return the names of the `{name}` fields in a message."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def read_catalogue(file: Path, shown: str, problems: Problems | None = None) -> dict[str, str]:
    """Return a catalogue file's {key: text}; a malformed file or entry is a problem at its line."""
    found = Problems() if problems is None else problems
    data = _catalogue_data(file, shown, found) or LineDict()
    good = {}
    for key, text in data.items():
        if isinstance(key, str) and isinstance(text, str):
            good[key] = text
        else:
            found.error(shown, data.line_of(key), f"message {key!r} must be a text, found {text!r}")
    return good


def _catalogue_data(file: Path, shown: str, problems: Problems) -> LineDict | None:
    """Return a catalogue file's mapping, or None with a problem: not a file, not UTF-8, malformed, not a mapping."""
    from coursegen.stages.config import read_text  # here: the stages import the theme

    if not file.is_file():
        problems.error(shown, 1, f"'{shown}' is a folder, not a message catalogue", "rename or remove it")
        return None
    text = read_text(file, shown, problems)
    if text is None:
        return None
    try:
        data = load_yaml(text)
    except YamlError as err:
        problems.error(shown, err.line, err.message, err.hint)
        return None
    if not isinstance(data, LineDict):
        problems.error(shown, 1, "a message catalogue must map keys to texts", 'for example: tally.title: "Your tally"')
        return None
    return data


def kept_catalogue(file: Path, shown: str, memo: Memo | None = None) -> dict[str, str]:
    """Return read_catalogue(file, shown), kept in `memo` by the file's stamp: a build asks for it for the
    parse rules, the pages, the scripts' module and the search index, and reading it is not cheap."""
    stat = file.stat()
    return remembered(memo, "catalogue", (file, stat.st_mtime_ns, stat.st_size), lambda: read_catalogue(file, shown))


def reference(root: Path, memo: Memo | None = None) -> dict[str, str]:
    """Return the English catalogue: the set of keys every page may use (the theme's), with the texts of
    the course's own en.yaml where it has them (a key it lacks, or a bad one, keeps the theme's text)."""
    english = packaged_english(memo)
    file = catalogue_path(root, REFERENCE)
    if file is None or file.parent.parent == theme.packaged_theme():
        return english
    stat = file.stat()

    def merged() -> dict[str, str]:
        own = read_catalogue(file, REFERENCE)
        return {**english, **{key: text for key, text in own.items() if key in english and _good_text(text)}}

    return remembered(memo, "catalogue", ("reference", file, stat.st_mtime_ns, stat.st_size), merged)


def packaged_english(memo: Memo | None = None) -> dict[str, str]:
    """Return the default theme's English catalogue, for texts made where no course is at hand."""
    return kept_catalogue(theme.packaged_theme() / FOLDER / f"{REFERENCE}.yaml", REFERENCE, memo)


def check_messages(root: Path, config, problems: Problems, memo: Memo | None = None) -> None:
    """Report a language without a catalogue (a warning), each bad `messages:` override and each bad entry
    of the course's own catalogues, English and the chosen language's (errors)."""
    english = packaged_english(memo)
    if chosen_language(root, config.language) is None and config.language.split("-")[0].lower() != REFERENCE:
        problems.warning(
            CONFIG_NAME,
            config.language_line,
            f"no message catalogue for language {config.language!r}: the pages' own texts stay English",
            f"catalogues shipped: {', '.join(shipped_languages(root))}; "
            f"or add templates/{FOLDER}/{config.language}.yaml with the keys of the theme's en.yaml",
        )
    folder = root / theme.COURSE_TEMPLATES / FOLDER
    wanted = {REFERENCE, chosen_language(root, config.language), config.language}
    for own in sorted(folder.glob("*.yaml")) if folder.is_dir() else ():
        if own.stem not in wanted and own.is_file():  # another language's file: not read by this build
            continue
        stat = own.stat()  # checked again only when it or the English one changes (serve: every rebuild asks)
        key = (own, stat.st_mtime_ns, stat.st_size, stat.st_mode, tuple(english.items()))
        problems.items.extend(
            remembered(memo, "catalogue check", key, functools.partial(_catalogue_problems, own, root, english))
        )
    for key, text, line in config.messages:
        _check_message(key, text, english, CONFIG_NAME, line, problems)


def _catalogue_problems(file: Path, root: Path, english: dict[str, str]) -> tuple:
    """Return the problems of a course's own catalogue file, checked as course.yaml's overrides are."""
    found = Problems()
    shown = file.relative_to(root).as_posix()
    data = _catalogue_data(file, shown, found) or LineDict()
    for key, text in data.items():
        _check_message(key, text, english, shown, data.line_of(key), found)
    return tuple(found.items)


CONTROL = {chr(code) for code in (*range(0x20), 0x7F)} - {"\n", "\t"}  # never part of a page's text


def _good_text(text) -> bool:
    """Return whether `text` is a message _check_message accepts (a text of plain placeholders alone)."""
    problems = Problems()
    _check_message("", text, {"": text if isinstance(text, str) else ""}, "", 0, problems)
    return not problems.items


def _check_message(key, text, english: dict[str, str], path: str, line: int, problems: Problems) -> None:
    if key not in english:
        hint = did_you_mean(key, english) or f"the keys are those of the theme's {FOLDER}/{REFERENCE}.yaml"
        problems.error(path, line, f"unknown message {key!r}", hint)
        return
    if not isinstance(text, str):
        problems.error(path, line, f"message {key!r} must be a text, found {text!r}")
        return
    if control := next((c for c in text if c in CONTROL), None):
        problems.error(
            path, line, f"message {key!r} holds the control character U+{ord(control):04X}", "remove it from the text"
        )
        return
    try:
        fields = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(text) if name]
    except ValueError as err:
        problems.error(path, line, f"message {key!r} is not a valid text: {err}", "write a literal brace as {{ or }}")
        return
    styled = next(
        (
            f"{{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}"
            for name, spec, conversion in fields
            if spec or conversion
        ),
        None,
    )
    if styled:
        problems.error(
            path,
            line,
            f"message {key!r} may use only plain placeholders such as {{{fields[0][0]}}}, found {styled!r}",
            "the page fills each placeholder in as it is; leave out the format after ':' or '!'",
        )
        return
    found, wanted = {name for name, _, _ in fields}, placeholders(english[key])
    if found != wanted:
        listed = ", ".join(f"{{{name}}}" for name in sorted(wanted)) or "none"
        problems.error(
            path,
            line,
            f"message {key!r} must use the placeholders of the English text ({listed}), found "
            + (", ".join(f"{{{name}}}" for name in sorted(found)) or "none"),
            f"English: {english[key]!r}",
        )


def catalogue(root: Path, config, memo: Memo | None = None) -> dict[str, str]:
    """Return {key: text} for the course: English, under the chosen catalogue, under course.yaml's overrides
    (the files kept in `memo`)."""
    english = reference(root, memo)
    merged = dict(english)
    language = chosen_language(root, config.language)
    if language and language != REFERENCE:
        file = catalogue_path(root, language)
        assert file is not None  # chosen_language found it
        merged.update({k: v for k, v in kept_catalogue(file, language, memo).items() if k in english})
    merged.update({key: text for key, text, _ in config.messages if key in english and isinstance(text, str)})
    return merged


SESSION_HOOKS = ("prepare",)  # it also takes the build's session, for its memo (extensions.ModuleExtension)


def prepare(root: Path, config, problems: Problems, session=None) -> dict[str, str]:
    """The catalogue as the built-in extension "messages" hands it to parse rules (`texts(env)`):
    question labels, callout titles and widgets are written into pages while parsing."""
    memo = session.memo if session is not None else None
    return catalogue(root, config, memo) if config is not None else reference(root, memo)


def texts(env: dict) -> dict[str, str]:
    """Return the catalogue a parse rule writes with: the build's, else English (a parser made without a build)."""
    found = env["ctx"].extra.get("messages") if "ctx" in env else None
    return found if found is not None else packaged_english()


def say(messages: dict[str, str], key: str, **values) -> str:
    """Return the message for `key` with its placeholders filled and `{{` written `{` (the Python side of the
    templates' t())."""
    return messages[key].format(**values)


UNIT_KEYS = {"lesson": "unit.lesson", "review": "unit.review"}  # a unit kind → its label's key
RUN_KEYS = {"lesson": "units.lesson", "review": "units.review"}  # a run of one kind → its label's key


def unit_label(messages: dict[str, str], unit) -> str:
    """Return a unit's label, "Lesson 3"; for a run of untitled upcoming units (model.UnitRun) "Lessons 8–14",
    "Review 9", or "Units 4–6" when lessons and reviews mix."""
    units = getattr(unit, "units", None)
    if units is None:
        return say(messages, UNIT_KEYS[unit.kind], number=unit.number)
    kinds = {u.kind for u in units}
    first, last = units[0].number, units[-1].number
    if first == last:
        return say(messages, UNIT_KEYS[units[0].kind], number=first)
    return say(messages, RUN_KEYS[kinds.pop()] if len(kinds) == 1 else "units.mixed", first=first, last=last)


def run_text(messages: dict[str, str], run) -> str:
    """Return the maps' line for a run of untitled upcoming units: "Lessons 8–14 are still being written"."""
    key = "units.writing_one" if len(run.units) == 1 else "units.writing_other"
    return say(messages, key, label=unit_label(messages, run))


def in_page(text: str) -> Markup:
    """Return a message as page text: `&`, `<`, `>` and `"` escaped, as the parser escapes what it writes.

    An apostrophe stays as written (Jinja's own escaping would write `&#39;`): it is safe in text and in
    the double-quoted attributes the templates use, and a page reads the same as before the catalogue."""
    return Markup(html.escape(text, quote=False).replace('"', "&quot;"))


@jinja2.pass_context
def unit_label_in_page(context, unit) -> Markup:
    """The templates' `unit_label(u)`: a unit's label in the page's language (unit_label)."""
    return in_page(unit_label(context["messages"], unit))


@jinja2.pass_context
def run_text_in_page(context, run) -> Markup:
    """The templates' `run_text(run)` (run_text)."""
    return in_page(run_text(context["messages"], run))


@jinja2.pass_context
def translate(context, key: str, **values) -> Markup:
    """The templates' `t(key, **values)`: the page's message for `key`, its placeholders filled.

    It reads the catalogue from the page's context ("messages", which render puts among what every
    page shares), so the render key covers it and a process rendering pages needs nothing more."""
    text = context["messages"][key]  # an unknown key is a theme bug: KeyError names it
    return in_page(text).format(**values)  # Markup.format escapes the values


SCRIPT_NAME = "messages.js"  # imported by the theme's scripts as "coursegen/messages.js"
SCRIPT_CODE = """
// t(key, values): the message with its {placeholders} filled, as the templates' t() does ("{{" is "{").
export function t(key, values = {}) {
  const text = messages[key];
  if (text === undefined) throw new Error(`no message ${key}`);
  return text.replace(/\\{\\{|\\}\\}|\\{(\\w+)\\}/g, (whole, name) =>
    name === undefined ? whole[0] : String(values[name]));
}
"""


def script(messages: dict[str, str]) -> bytes:
    """Return the browser's catalogue: a module the theme's scripts import, made per course.

    A content-hashed asset of its own (in the import map), so the pages do not grow by the catalogue's
    size and the browser caches it once for every page."""
    table = json.dumps(dict(sorted(messages.items())), ensure_ascii=False, indent=1)
    header = "// The UI text in the course's language: made by coursegen from its message catalogue.\n"
    return (header + f"export const messages = {table};\n" + SCRIPT_CODE).encode()
