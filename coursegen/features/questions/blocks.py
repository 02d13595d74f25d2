"""HTML for question blocks: render rules plus the token reshaping that makes a study sheet.

Without JavaScript a question reads top to bottom: its prompt, (for a choice) the options, then a
`<details>` holding the model answer or, for a choice, which option is right and why.
"""

from __future__ import annotations

import copy
import re

from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

from coursegen.stages.parse import split_info
from coursegen.theme.messages import say, texts

OPTION_MARK = re.compile(r"^\[( |x|X)\]\s*")
# Question kind → the catalogue's key of its label ("Free recall", … in the course's language).
KIND_LABELS = {
    "recall": "question.recall",
    "explain": "question.explain",
    "choice": "question.choice",
    "excerpt": "question.excerpt",
    "exercise": "question.exercise",
    "blanks": "question.blanks",
    "order": "question.order",
    "numeric": "question.numeric",
}


def _block(token: Token) -> Token:
    token.block = True
    return token


def html(content: str) -> Token:
    """Return a raw HTML block token."""
    token = Token("html_block", "", 0)
    token.content, token.block = content, True
    return token


def children_at(tokens, start: int, end: int, level: int):
    """Yield (index, token) for the block tokens at `level` between `start` and `end`."""
    for index in range(start, end):
        if tokens[index].level == level and tokens[index].type != "inline":
            yield index, tokens[index]


def find(tokens, start: int, end: int, level: int, kind: str) -> int:
    """Return the index of the first `kind` token at `level` in the range, or -1."""
    return next((i for i, t in children_at(tokens, start, end, level) if t.type == kind), -1)


def closing(tokens, index: int) -> int:
    """Return the index of the token closing the block opened at `index`."""
    wanted, level = tokens[index].type.replace("_open", "_close"), tokens[index].level
    return next(i for i in range(index + 1, len(tokens)) if tokens[i].type == wanted and tokens[i].level == level)


def option_items(tokens, list_open: int):
    """Yield (item open index, first inline token, correct or None) for each option of a choice list."""
    level = tokens[list_open].level + 1
    for index, token in children_at(tokens, list_open + 1, closing(tokens, list_open), level):
        if token.type == "list_item_open":
            inline = next((t for t in tokens[index + 1 :] if t.type == "inline"), None)
            match = OPTION_MARK.match(inline.content) if inline is not None else None
            yield index, inline, (match.group(1) != " ") if match else None


# ---- reshaping, after validation --------------------------------------------------------


def reshape_question(tokens, start: int, end: int, question, env: dict) -> None:
    """Insert the wrappers a question's HTML needs between its own tokens (in place)."""
    level = tokens[start].level + 1
    if question.kind == "choice":
        _reshape_choice(tokens, start, end, level, texts(env))
        return
    if question.kind == "exercise":
        _reshape_exercise(tokens, start, end, level, tokens[start].meta["exercise"], question.id, texts(env))
        return
    if question.kind in ("blanks", "order"):  # kinds with a module of their own (imported late: they use ours)
        from coursegen.features.questions.kinds import blanks, ordering

        (blanks.reshape_blanks if question.kind == "blanks" else ordering.reshape_order)(
            tokens, start, end, question, env
        )
        return
    answer = find(tokens, start, end, level, "container_answer_open")
    tokens.insert(answer, html("</div>\n"))
    quote = find(tokens, start, answer, level, "blockquote_open")
    if question.kind == "excerpt" and quote >= 0:
        cite = f"<figcaption>{escapeHtml(question.cite)}</figcaption>\n" if question.cite else ""
        tokens.insert(closing(tokens, quote) + 1, html(cite + "</figure>\n"))
        tokens.insert(quote, html('<figure class="question-excerpt">\n'))


def _reshape_choice(tokens, start: int, end: int, level: int, messages: dict[str, str]) -> None:
    list_open = find(tokens, start, end, level, "bullet_list_open")
    tokens[list_open].attrSet("class", "choice-options")
    tokens[list_open].attrSet("data-options", "")
    if sum(1 for _, _, correct in option_items(tokens, list_open) if correct) > 1:  # select all that apply
        tokens[list_open].attrSet("data-multiple", "")
        tokens[start].meta["label"] = "question.choice_multiple"
        tokens.insert(list_open, html(f'<p class="choice-hint">{escapeHtml(say(messages, "choice.select_all"))}</p>\n'))
        list_open += 1
    feedback = [html(answer_opening(say(messages, "question.answers")) + '<ul class="choice-feedback">\n')]
    for number, (item, inline, correct) in enumerate(list(option_items(tokens, list_open))):
        tokens[item].attrSet("data-option", str(number))
        explanation = _split_option(tokens, item, inline)
        verdict = escapeHtml(say(messages, "choice.verdict_right" if correct else "choice.verdict_wrong"))
        mark = ' data-correct=""' if correct else ""
        feedback += [
            html(f'<li data-feedback="{number}"{mark}>\n<p><strong class="choice-verdict">{verdict}</strong> '),
            copy.deepcopy(inline),
            html("</p>\n"),
            *explanation,
            html("</li>\n"),
        ]
    feedback.append(html("</ul>\n"))
    list_close = closing(tokens, list_open)
    tokens[list_close + 1 : list_close + 1] = feedback
    tokens.insert(list_open, html("</div>\n"))
    tokens.insert(closing(tokens, start), html("</div>\n</details>\n"))


def _reshape_exercise(
    tokens, start: int, end: int, level: int, exercise: dict, qid: str, messages: dict[str, str]
) -> None:
    """Close the prompt before the first fence or hint; put the starter in a plain text box (usable without
    JavaScript), the reference solution in the answer's `<details>` and the checks' baked cases in a JSON
    block for exercise.js."""
    starter, solution, checks = exercise["starter"], exercise["solution"], exercise["checks"]
    first = next(
        i
        for i, t in children_at(tokens, start + 1, end, level)
        if t.type == "container_hint_open" or any(t is fence for fence in (starter, solution, checks))
    )
    tokens.insert(first, html("</div>\n"))
    checks.type, checks.content = (
        "html_block",
        (f'<script type="application/json" data-exercise-checks>{exercise["json"]}</script>\n'),
    )
    at = tokens.index(solution)
    tokens[at : at + 1] = [
        html(answer_opening(say(messages, "question.reference"))),
        solution,
        html("</div>\n</details>\n"),
    ]
    rows = min(30, starter.content.count("\n") + 2)
    box = escapeHtml(f"q-{qid}-code")
    tokens[tokens.index(starter)] = html(
        f'<div class="exercise-starter" data-exercise-starter>\n<label class="exercise-label" for="{box}">'
        f"{escapeHtml(say(messages, 'question.your_code'))}</label>\n"
        f'<textarea id="{box}" class="exercise-code" rows="{rows}" '
        'spellcheck="false" '
        f'autocapitalize="off" autocomplete="off">\n{escapeHtml(starter.content)}</textarea>\n</div>\n'
    )


def _split_option(tokens, item: int, inline: Token) -> list[Token]:
    """Strip the `[x]` mark and take the option's explanation out of its list item."""
    children = inline.children or []  # an inline token always has its children; the type allows None
    first = children[0]
    first.content = OPTION_MARK.sub("", first.content)
    inline.content = OPTION_MARK.sub("", inline.content)
    explanation: list[Token] = []
    breaks = [i for i, child in enumerate(children) if child.type in ("softbreak", "hardbreak")]
    if breaks:
        rest = Token("inline", "", 0)
        rest.children, rest.map = children[breaks[0] + 1 :], inline.map
        rest.content = inline.content.split("\n", 1)[1] if "\n" in inline.content else ""
        inline.children = children[: breaks[0]]
        inline.content = inline.content.split("\n", 1)[0]
        explanation += [_block(Token("paragraph_open", "p", 1)), rest, _block(Token("paragraph_close", "p", -1))]
    first_close = next(i for i in range(item, len(tokens)) if tokens[i].type == "paragraph_close")
    item_close = closing(tokens, item)
    explanation += tokens[first_close + 1 : item_close]
    del tokens[first_close + 1 : item_close]
    for token in explanation:
        token.hidden = False
    return explanation


# ---- render rules -----------------------------------------------------------------------


def render_question(self, tokens, idx, options, env):
    """Open or close a question's `<section>`, carrying what review.js needs as data attributes."""
    token = tokens[idx]
    if token.nesting == -1:
        return "</section>\n"
    question = token.meta.get("question")
    if question is None:  # invalid: the build reports it and stops
        return '<section class="question">\n<div>\n'
    qid = escapeHtml(question.id)
    data = {
        "data-question": question.id,
        "data-kind": question.kind,
        "data-lessons": " ".join(map(str, question.lessons)),
        "data-topic": question.topic,
        "data-revisit": question.revisit_url,
        "data-seconds": str(question.seconds or ""),
    }
    attrs = "".join(f' {k}="{escapeHtml(v)}"' for k, v in data.items() if v)
    label = _label(question, texts(env), token.meta.get("label"))
    return (
        f'<section class="question question-{question.kind}" id="q-{qid}"{attrs} '
        f'aria-labelledby="q-{qid}-prompt">\n<p class="question-kind">{label}</p>\n'
        f'<div class="question-prompt" id="q-{qid}-prompt">\n'
    )


def _label(question, messages: dict[str, str], key: str | None = None) -> str:
    """Return a question's label: "Free recall in about 60 s · lessons 1, 2 · Topic", in the course's language
    (`key`: the catalogue's key of a label other than its kind's, e.g. a choice of several answers)."""
    kind_label = say(messages, key or KIND_LABELS[question.kind])
    parts = [escapeHtml(kind_label)]
    if question.seconds:
        parts[0] = escapeHtml(say(messages, "question.timed", label=kind_label, seconds=question.seconds))
    if question.lessons:
        key = "question.lesson" if len(question.lessons) == 1 else "question.lessons"
        parts.append(escapeHtml(say(messages, key, numbers=", ".join(map(str, question.lessons)))))
    if question.topic:
        parts.append(escapeHtml(question.topic))
    return " · ".join(parts)


def render_part(self, tokens, idx, options, env):
    """Render `::: answer` as a `<details>` and `::: explanation` as the general explanation."""
    token = tokens[idx]
    messages = texts(env)
    if token.type.startswith("container_hint"):
        return (
            f'<details class="exercise-hint" data-hint>\n<summary>{escapeHtml(say(messages, "question.hint"))}'
            '</summary>\n<div class="exercise-hint-body">\n'
            if token.nesting == 1
            else "</div>\n</details>\n"
        )
    if token.type.startswith("container_explanation"):
        return '<div class="choice-explanation">\n' if token.nesting == 1 else "</div>\n"
    if token.nesting == -1:
        return "</div>\n</details>\n"
    return answer_opening(say(messages, "question.model_answer"))


def answer_opening(summary: str) -> str:
    """Return the start of a question's answer: a `<details>` whose summary is `summary` (plain text)."""
    return (
        f'<details class="question-answer" data-answer>\n<summary>{escapeHtml(summary)}</summary>\n'
        '<div class="question-answer-body">\n'
    )


def render_generated(self, tokens, idx, options, env):
    """Leave a marker the page template replaces with content generated from the course."""
    token = tokens[idx]
    return f'<div data-generated="{split_info(token.info)[0]}"></div>\n' if token.nesting == 1 else ""
