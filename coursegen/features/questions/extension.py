"""Retrieval-practice questions: `:::: recall`, `explain`, `choice`, `excerpt` and `exercise` blocks.

The syntax is the contract in docs/architecture.md; docs/reviews.md explains it to authors.
A core rule finds each question block, validates it (problems carry the block's line), records a
`Question` in `env["questions"]` and reshapes its tokens so the page reads as a study sheet
without JavaScript: prompt visible, answer in `<details>`. `templates/assets/review.js` then
enhances every `[data-question]` element.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from coursegen.errors import Problems, choices_hint
from coursegen.features.questions.blocks import (
    closing,
    render_generated,
    render_part,
    render_question,
    reshape_question,
)
from coursegen.features.questions.exercises import expected_lines, page_data, prepare_exercise
from coursegen.features.questions.kinds import blanks, numeric, ordering
from coursegen.features.questions.structure import check_structure
from coursegen.features.widgets.extension import browser_python
from coursegen.features.widgets.site import said_in
from coursegen.model import Link, per_unit_problems
from coursegen.stages.parse import parse_attrs, register_block, split_info
from coursegen.theme import messages

KINDS = ("recall", "explain", "choice", "excerpt", "exercise", "blanks", "order", "numeric")
PARTS = ("answer", "explanation", "hint")
GENERATED = ("progress-map", "next-up", "tally")
SESSION_HOOKS = ("check",)  # these hooks also take the build's session (extensions.ModuleExtension)
COMMON_ATTRS = {"lessons": list, "topic": str, "revisit": str, "id": str}
ATTRS: dict[str, dict] = {
    "recall": COMMON_ATTRS,
    "choice": COMMON_ATTRS,
    "explain": {**COMMON_ATTRS, "seconds": int},
    "excerpt": {**COMMON_ATTRS, "cite": str},
    "exercise": {**COMMON_ATTRS, "packages": list, "solution": str},
    "blanks": {**COMMON_ATTRS, **blanks.ATTRS},
    "order": {**COMMON_ATTRS, **ordering.ATTRS},
    "numeric": {**COMMON_ATTRS, **numeric.ATTRS},
}
PACKAGE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
ID_WORDS = 6
SLUG_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Question:
    """One question as the link stage, the templates and the storage keys need it."""

    id: str
    kind: str
    lessons: tuple[int, ...]
    line: int
    prompt: str  # plain text of the prompt's first paragraph, for lists of due questions
    topic: str = ""
    revisit_slug: str = ""
    revisit_anchor: str = ""
    seconds: int = 0
    cite: str = ""
    packages: tuple[str, ...] = ()  # an exercise's Pyodide packages
    expected: tuple[str, ...] = ()  # an exercise's checks as its reference answered them (`check --expected`)

    @property
    def revisit_url(self) -> str:
        """Return the site URL of the section to revisit, or '' when the author named none."""
        if not self.revisit_slug:
            return ""
        return f"{self.revisit_slug}.html" + (f"#{self.revisit_anchor}" if self.revisit_anchor else "")


def install(md) -> None:
    """Register the question, part and generated blocks and the rule that checks and reshapes them."""
    for name in KINDS:
        register_block(md, name, render_question)
    for name in PARTS:
        register_block(md, name, render_part)
    for name in GENERATED:
        register_block(md, name, render_generated)
    md.core.ruler.push("questions", collect_questions)
    numeric.install(md)


def prepare(root, config, problems) -> dict:
    """Return each unit's number by slug, so questions can default and check their `lessons`."""
    return {"numbers": {u.slug: n for n, u in enumerate(config.units, 1)} if config else {}}


def check(course, root, problems, session) -> None:
    """Check, once every page is linked, that each question draws on published units (in `serve` each
    page's problems are kept by model.per_unit while the same units are unpublished)."""
    unpublished = {u.number: u.slug for u in course.units if u.page is None}

    def drawing_on_unpublished(unit, found: Problems) -> None:
        for question in unit.page.questions:
            for number in question.lessons:
                if number in unpublished:
                    found.error(
                        unit.page.source.path,
                        question.line,
                        f"question draws on unit {number} ('{unpublished[number]}'), "
                        "which is not published (upcoming or draft)",
                        "name only written units in 'lessons'",
                    )

    per_unit_problems(session.memo, "question targets", course.written, drawing_on_unpublished, problems, unpublished)


def collect_questions(state) -> None:
    """Validate every question block of the page, record it, and reshape its tokens for rendering."""
    if ":::" not in state.src:  # every question is a ':::' block
        return
    env, tokens = state.env, state.tokens
    index = 0
    while index < len(tokens):
        token = tokens[index]
        name = token.type[len("container_") : -len("_open")] if token.type.startswith("container_") else ""
        if token.nesting == 1 and name in KINDS:
            close = closing(tokens, index)
            question = _question(token, tokens[index + 1 : close], name, env)
            if question is not None and not check_structure(tokens, index, close, name, env):
                question = None
            if question is not None and name == "exercise":
                baked = _exercise(tokens, index, close, env)
                question = replace(question, expected=expected_lines(token.meta["exercise"])) if baked else None
            if question is not None and name == "numeric":
                token.meta["numeric"] = numeric.prepare(tokens, index, token.meta["attrs"], env, _reporter(env, token))
                question = question if token.meta["numeric"] else None
            if question is not None:
                env["questions"].append(question)
                token.meta["question"] = question
                if name == "numeric":
                    numeric.reshape(tokens, index, token.meta["numeric"], env)
                else:
                    reshape_question(
                        tokens, index, closing(tokens, index), question, env
                    )  # an exercise may add a token
            index = closing(tokens, index) + 1
            continue
        if token.nesting == 1 and name in PARTS:
            _error(
                env,
                token,
                f"'::: {name}' belongs inside a question block",
                "put it inside a ':::: recall', ':::: explain', ':::: choice' or ':::: excerpt' block",
            )
        elif token.nesting == 1 and name in GENERATED and tokens[index + 1].type != f"container_{name}_close":
            _error(
                env,
                token,
                f"'::: {name}' is generated from course.yaml and takes no content",
                f"leave the block empty: a line '::: {name}' and a line ':::'",
            )
        index += 1


def _packages(attrs: dict, opener, env: dict) -> tuple[str, ...]:
    """Return the Pyodide packages an exercise needs (sorted, once each)."""
    packages = attrs.get("packages", [])
    for package in packages:
        if not isinstance(package, str) or not PACKAGE_NAME.match(package):
            _error(
                env, opener, f"'packages' lists Pyodide package names, found {package!r}", "e.g. {packages: [numpy]}"
            )
            return ()
    return tuple(sorted(set(packages)))


def _exercise(tokens, index: int, close: int, env: dict) -> bool:
    """Check and bake an exercise (its checks run the reference in the worker); keep it for the reshaping."""
    opener = tokens[index]
    report = lambda message, hint="": _error(env, opener, message, hint)
    exercise = prepare_exercise(tokens, index, close, env, report)
    if exercise is None:
        return False
    runtime, missing = browser_python(env["ctx"])
    missing = said_in(missing, messages.texts(env))  # why, in the course's language
    exercise["json"] = page_data(exercise, list(opener.meta["packages"]), runtime, missing)
    opener.meta["exercise"] = exercise
    return True


def _reporter(env: dict, token):
    """Return report(message, hint) recording a problem at a block's line."""
    return lambda message, hint="": _error(env, token, message, hint)


def _line(token) -> int:
    return token.map[0] + 1 if token.map else 1


def _error(env: dict, token, message: str, hint: str = "") -> None:
    env["problems"].error(env["path"], _line(token), message, hint)


def _question(opener, body, kind: str, env: dict) -> Question | None:
    """Return the checked Question for one block (None when it is too broken to render)."""
    line = _line(opener)
    attrs = parse_attrs(split_info(opener.info)[1], env, line, ATTRS[kind])
    opener.meta["attrs"] = attrs
    lessons = _lessons(attrs, opener, env)
    prompt = _prompt_text(body)
    if kind == "blanks":  # its gaps hold the answers: keep them out of the id and the due list
        prompt, opener.meta["rules"] = blanks.hide_blanks(prompt), blanks.rules(attrs)
        opener.meta["attrs"] = attrs
    if not _has_prompt(body, kind):
        _error(
            env,
            opener,
            f"':::: {kind}' question has an empty prompt",
            "write the question as the first paragraph inside the block",
        )
        return None
    slug, anchor = _revisit(attrs.get("revisit", ""), opener, env)
    packages = opener.meta["packages"] = _packages(attrs, opener, env)
    opener.meta["solution"] = attrs.get("solution", "").strip()
    return Question(
        id=_unique_id(attrs.get("id") or _slugify(prompt), opener, env),
        kind=kind,
        lessons=lessons,
        line=line,
        prompt=_plain(prompt),
        topic=attrs.get("topic", ""),
        revisit_slug=slug,
        revisit_anchor=anchor,
        seconds=_seconds(attrs, opener, env),
        cite=attrs.get("cite", "").strip(),
        packages=packages,
    )


def _prompt_text(body) -> str:
    """Return the first paragraph outside any quote: the question itself."""
    depth = 0
    for token in body:
        depth += {"blockquote_open": 1, "blockquote_close": -1}.get(token.type, 0)
        if token.type == "inline" and depth == 0 and token.content.strip():
            return token.content.strip()
    return ""


def _has_prompt(body, kind: str) -> bool:
    """Return whether the block has text, outside any quote, before its first part or option list."""
    depth = 0
    for token in body:
        if (
            token.type.startswith(("container_answer", "container_explanation", "container_hint"))
            or (token.type == "bullet_list_open" and kind == "choice" and depth == 0)
            or (token.type == "fence" and kind == "exercise" and depth == 0)
            or (kind == "order" and token.type in ordering.AFTER_PROMPT and depth == 0)
        ):
            return False
        depth += {"blockquote_open": 1, "blockquote_close": -1}.get(token.type, 0)
        if token.type == "inline" and token.content.strip() and depth == 0:
            return True
    return False


def _lessons(attrs: dict, opener, env: dict) -> tuple[int, ...]:
    """Return the unit numbers a question draws on: its `lessons`, or the lesson it sits in."""
    numbers = env["ctx"].extra.get("questions", {}).get("numbers", {})
    if "lessons" not in attrs:
        if env["source"].kind == "review":
            _error(
                env,
                opener,
                "question names no lessons",
                "add the lessons it draws on to its attributes, e.g. {lessons: [2, 3]}",
            )
        own = numbers.get(env["source"].slug)
        return (own,) if own else ()
    good = []
    for value in attrs["lessons"]:
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= len(numbers):
            _error(
                env,
                opener,
                f"unknown lesson {value!r} in 'lessons'",
                f"lessons are unit numbers from course.yaml, 1 to {len(numbers)}",
            )
        else:
            good.append(value)
    if not attrs["lessons"]:
        _error(env, opener, "question names no lessons", "list at least one unit number, e.g. {lessons: [2]}")
    return tuple(good)


def _revisit(value: str, opener, env: dict) -> tuple[str, str]:
    """Return the (slug, anchor) of a `revisit` target, recording it for the link check."""
    if not value:
        return "", ""
    slug, _, anchor = value.strip().partition("#")
    known = set(env["ctx"].slug_by_path.values())
    if slug not in known:
        _error(env, opener, f"revisit '{value}' names no unit '{slug}'", choices_hint(slug, known, "units"))
        return "", ""
    env["links"].append(Link(slug, anchor, _line(opener)))
    return slug, anchor


def _seconds(attrs: dict, opener, env: dict) -> int:
    seconds = attrs.get("seconds", 0)
    if "seconds" in attrs and not 5 <= seconds <= 900:
        _error(
            env,
            opener,
            f"'seconds' must be between 5 and 900, found {seconds}",
            "a suggested speaking time such as {seconds: 60}",
        )
        return 0
    return seconds


def _unique_id(wanted: str, opener, env: dict) -> str:
    """Return a page-unique question id: the wanted slug, then `-2`, `-3` on collision."""
    if not SLUG_ID.match(wanted):
        _error(env, opener, f"question id '{wanted}' must be lowercase letters, digits and single hyphens")
        wanted = _slugify(wanted) or "question"
    taken = {q.id for q in env["questions"]}
    candidate, count = wanted, 1
    while candidate in taken:
        count += 1
        candidate = f"{wanted}-{count}"
    return candidate


def _plain(markdown_text: str) -> str:
    """Return the prompt without Markdown punctuation, on one line."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown_text)
    return " ".join(re.sub(r"[*_`$]", "", text).split())


def _slugify(text: str) -> str:
    """Return the first words of a prompt as a slug: the question's stable id."""
    words = re.findall(r"[a-z0-9]+", _plain(text).lower())
    return "-".join(words[:ID_WORDS]) or "question"
