"""`:::: blanks`: a sentence or code line with gaps written `[[answer|other accepted answer]]`.

Each gap becomes a text box in the prompt (usable without JavaScript); the answer key, numbered like the
boxes, sits in the question's `<details>`, and a JSON block gives review/blanks.js the accepted answers and
the author's case and space rules. Gaps are found in text, inline code and code fences of the prompt.
"""

from __future__ import annotations

import json
import re

from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

from coursegen.features.questions.blocks import answer_opening, children_at, closing, html
from coursegen.theme.messages import say, texts

BLANK = re.compile(r"\[\[(.*?)\]\]")
RULES = {"case": ("sensitive", "insensitive"), "spaces": ("collapse", "exact", "ignore")}
ATTRS = {"case": str, "spaces": str}
MIN_WIDTH, MAX_WIDTH = 6, 40


def hide_blanks(markdown_text: str) -> str:
    """Return the prompt with every gap shown as a line, so ids and due lists do not give the answers away."""
    return BLANK.sub("…", markdown_text)


def accepted(inner: str) -> list[str]:
    """Return the accepted answers of one gap's `a|b|c`, without empty ones."""
    return [answer for answer in (part.strip() for part in inner.split("|")) if answer]


def _gap_sources(tokens, start: int, end: int):
    """Yield the tokens whose text may hold gaps: inline children (text, code) and fences, before any part."""
    for token in tokens[start + 1 : end]:
        if token.type.startswith("container_") and token.level == tokens[start].level + 1:
            return
        if token.type == "fence":
            yield token
        elif token.type == "inline":
            yield from (child for child in token.children or [] if child.type in ("text", "code_inline"))


def check_blanks(tokens, start: int, end: int, attrs: dict, report) -> bool:
    """Report a gap with no accepted answer, no gaps at all, unknown rules or parts; return whether it is usable."""
    good = True
    for name, allowed in RULES.items():
        if name in attrs and attrs[name] not in allowed:
            report(
                f"'{name}' must be one of {', '.join(allowed)}, found {attrs[name]!r}", f"e.g. {{{name}: {allowed[0]}}}"
            )
            good = False
    level = tokens[start].level + 1
    for _, token in children_at(tokens, start + 1, end, level):
        if token.type.startswith("container_") and token.nesting == 1 and token.type != "container_explanation_open":
            name = token.type[len("container_") : -len("_open")]
            report(f"':::: blanks' takes '::: explanation', not '::: {name}'", "the answers are the gaps themselves")
            good = False
    count = 0
    for source in _gap_sources(tokens, start, end):
        for match in BLANK.finditer(source.content):
            count += 1
            if not accepted(match.group(1)):
                report(
                    f"blank {count} ('{match.group(0)}') has no accepted answer",
                    "write the answer inside the brackets, alternatives after '|': [[fade|decay]]",
                )
                good = False
    if count == 0:
        report("':::: blanks' question has no blanks", "mark each gap with its answer in double brackets: [[answer]]")
        return False
    return good


def reshape_blanks(tokens, start: int, end: int, question, env: dict) -> None:
    """Turn the gaps into text boxes, close the prompt, and add the answer key and the checking data."""
    messages = texts(env)
    opener = tokens[start]
    answers: list[list[str]] = []
    for source in list(_gap_sources(tokens, start, end)):
        _replace_gaps(tokens, source, answers, question.id, messages)
    level = opener.level + 1
    first_part = next(
        (
            i
            for i, t in children_at(tokens, start + 1, closing(tokens, start), level)
            if t.type.startswith("container_")
        ),
        closing(tokens, start),
    )
    data = {"case": opener.meta["rules"]["case"], "spaces": opener.meta["rules"]["spaces"], "answers": answers}
    key = "".join(_key_item(number, options, messages) for number, options in enumerate(answers, 1))
    tokens[first_part:first_part] = [
        html(
            f'<script type="application/json" data-blanks>{script_json(data)}</script>\n'
            "</div>\n" + answer_opening(say(messages, "blanks.answers")) + f'<ol class="blanks-key">\n{key}</ol>\n'
        )
    ]
    tokens.insert(closing(tokens, start), html("</div>\n</details>\n"))


def _key_item(number: int, options: list[str], messages: dict[str, str]) -> str:
    first, *others = options
    also = ""
    if others:
        also = " " + escapeHtml(say(messages, "blanks.also", answers=", ".join(others)))
    return f'<li data-key="{number - 1}"><code class="blanks-answer">{escapeHtml(first)}</code>{also}</li>\n'


def _box(number: int, options: list[str], qid: str, messages: dict[str, str]) -> str:
    width = min(MAX_WIDTH, max(MIN_WIDTH, max(len(o) for o in options) + 2))
    label = escapeHtml(say(messages, "blanks.label", number=number))
    return (
        f'<input type="text" class="blanks-input" id="q-{escapeHtml(qid)}-blank-{number}" data-blank="{number - 1}" '
        f'aria-label="{label}" size="{width}" autocomplete="off" autocapitalize="off" spellcheck="false">'
    )


def _replace_gaps(tokens, source: Token, answers: list, qid: str, messages: dict[str, str]) -> None:
    """Replace the gaps of one text, code span or fence by text boxes (the rest of it escaped as before)."""
    pieces, last = [], 0
    for match in BLANK.finditer(source.content):
        answers.append(accepted(match.group(1)))
        pieces += [escapeHtml(source.content[last : match.start()]), _box(len(answers), answers[-1], qid, messages)]
        last = match.end()
    if not pieces:
        return
    pieces.append(escapeHtml(source.content[last:]))
    joined = "".join(pieces)
    if source.type == "fence":
        language = escapeHtml(source.info.split()[0]) if source.info.strip() else ""
        code_class = f' class="language-{language}"' if language else ""
        tokens[tokens.index(source)] = html(f'<pre class="blanks-code"><code{code_class}>{joined}</code></pre>\n')
        return
    source.type, source.content = "html_inline", f"<code>{joined}</code>" if source.type == "code_inline" else joined


def script_json(data) -> str:
    """Return `data` as JSON that is safe inside a `<script>` element."""
    return json.dumps(data, ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e")


def rules(attrs: dict) -> dict[str, str]:
    """Return the block's case and space rules, with their defaults."""
    return {"case": attrs.get("case", "sensitive"), "spaces": attrs.get("spaces", "collapse")}
