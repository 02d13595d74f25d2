"""Structure checks for question blocks: the parts each kind needs, and at least one right option."""

from __future__ import annotations

from coursegen.features.questions.blocks import KIND_LABELS, children_at, closing, find, option_items
from coursegen.features.questions.kinds.blanks import check_blanks
from coursegen.features.questions.kinds.ordering import check_order

QUESTION_OPENERS = {f"container_{kind}_open" for kind in KIND_LABELS}


def check_structure(tokens, start: int, end: int, kind: str, env: dict) -> bool:
    """Report what is missing or misplaced in the question at tokens[start:end]; return whether it is usable."""
    level = tokens[start].level + 1
    parts = [
        (i, t)
        for i, t in children_at(tokens, start + 1, end, level)
        if t.type.startswith("container_") and t.type.endswith("_open")
    ]
    report = _reporter(tokens[start], env)
    nested = next((t for t in tokens[start + 1 : end] if t.nesting == 1 and t.type in QUESTION_OPENERS), None)
    if nested is not None:
        report(
            f"':::: {kind}' question contains another question (line {nested.map[0] + 1})",
            "close each question with a line '::::' before the next one starts",
        )
        return False
    if kind == "choice":
        return _check_choice(tokens, start, end, parts, report)
    if kind == "blanks":
        return check_blanks(tokens, start, end, tokens[start].meta.get("attrs", {}), report)
    if kind == "order":
        return check_order(tokens, start, end, report)
    if kind == "exercise":
        wrong = [t for _, t in parts if t.type != "container_hint_open"]
        for token in wrong:
            name = token.type[len("container_") : -len("_open")]
            report(
                f"':::: exercise' takes '::: hint' parts, not '::: {name}'",
                "its reference solution is the '```python solution' block",
            )
        return not wrong
    answers = [i for i, t in parts if t.type == "container_answer_open"]
    if kind == "numeric" and not answers and not any(t.type == "container_explanation_open" for _, t in parts):
        return True  # its '::: answer' (the working) is optional: the number is in its attributes
    if any(t.type == "container_explanation_open" for _, t in parts):
        report(
            f"':::: {kind}' takes '::: answer'; '::: explanation' belongs to ':::: choice'",
            "rename the part '::: answer'",
        )
    if len(answers) != 1:
        report(
            f"':::: {kind}' question needs one '::: answer' part, found {len(answers)}",
            "end the block with '::: answer', the model answer, and ':::'",
        )
        return False
    after = list(children_at(tokens, closing(tokens, answers[0]) + 1, end, level))
    if after:
        report("the '::: answer' part must come last in its question", "move the text after it into the prompt")
    if kind == "excerpt" and find(tokens, start + 1, answers[0], level, "blockquote_open") < 0:
        report(
            "':::: excerpt' question has no quoted excerpt",
            "start the block with the quoted passage, each line beginning '> '",
        )
        return False
    return not after


def _check_choice(tokens, start: int, end: int, parts, report) -> bool:
    level = tokens[start].level + 1
    if any(t.type == "container_answer_open" for _, t in parts):
        report("':::: choice' takes '::: explanation', not '::: answer'", "rename the part '::: explanation'")
    list_open = find(tokens, start + 1, end, level, "bullet_list_open")
    if list_open < 0:
        report("':::: choice' question has no options", "list them as '- [x] right' and '- [ ] wrong' lines")
        return False
    options = list(option_items(tokens, list_open))
    unmarked = [inline for _, inline, correct in options if correct is None]
    for inline in unmarked:
        text = inline.content.split("\n")[0] if inline is not None else ""
        report(
            f"option '{text}' is not marked '[x]' (correct) or '[ ]' (wrong)",
            "start each option with '- [x] ' or '- [ ] '",
        )
    right = sum(1 for _, _, correct in options if correct)
    if len(options) < 2:
        report(f"':::: choice' question has {len(options)} option; it needs at least two")
    if right == 0 and not unmarked:
        report(
            "':::: choice' question has no correct option", "mark the right one '- [x]' (several make it 'select all')"
        )
    explanation = [i for i, t in parts if t.type == "container_explanation_open"]
    if any(i < list_open for i in explanation):
        report("the '::: explanation' part must come after the options")
    return not unmarked and right >= 1 and len(options) >= 2 and all(i > list_open for i in explanation)


def _reporter(opener, env: dict):
    line = opener.map[0] + 1 if opener.map else 1

    def report(message: str, hint: str = "") -> None:
        env["problems"].error(env["path"], line, message, hint)

    return report
