"""Fill-in-the-blanks and ordering questions: parsing, the study sheet, the fixed shuffle, located errors,
and (under Node) the page's checking helpers."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from question_support import render

from coursegen.features.questions.kinds.ordering import code_lines, shuffled
from coursegen.theme import messages

BLANKS = """:::: blanks {lessons: [1], case: insensitive, spaces: ignore}
Yeast turns [[sugar|sugars]] into gas, and `knead([[dough]])` builds the net.

```python
loaf = bake([[dough]], minutes=[[40]])
```

::: explanation
Both blanks name the dough.
:::
::::
"""

ORDER = """:::: order {lessons: [1, 2]}
Put the steps in order.

1. Mix
2. Knead
3. Rest
4. Bake
::::
"""

PARSONS = """:::: order {lessons: [2]}
Arrange the function.

```python
def rise(hours):
    if hours > 2:
        return "ready"
    return "wait"
```
::::
"""


def errors(source: str) -> list[str]:
    _, env = render(source)
    return [f"{item.line}: {item.message}" + (f" | {item.hint}" if item.hint else "") for item in env["problems"].items]


def test_each_gap_becomes_a_labelled_text_box_and_the_key_lists_every_accepted_answer():
    html, env = render(BLANKS)
    assert not env["problems"].items
    boxes = re.findall(r'<input type="text" class="blanks-input"[^>]*aria-label="Blank (\d)"', html)
    assert boxes == ["1", "2", "3", "4"]
    assert "[[" not in html.split("<script")[0]
    assert '<code class="blanks-answer">sugar</code> (also accepted: sugars)' in html
    data = json.loads(re.search(r"<script type=\"application/json\" data-blanks>(.*?)</script>", html).group(1))
    assert data == {
        "case": "insensitive",
        "spaces": "ignore",
        "answers": [["sugar", "sugars"], ["dough"], ["dough"], ["40"]],
    }
    assert html.index("data-blanks") < html.index("<details") < html.index("Both blanks name the dough")


def test_a_blank_question_keeps_its_answers_out_of_its_id_and_prompt():
    _, env = render(BLANKS)
    [question] = env["questions"]
    assert question.kind == "blanks" and "sugar" not in question.id and "sugar" not in question.prompt
    assert question.prompt.startswith("Yeast turns … into gas")


def test_the_defaults_are_case_sensitive_with_spaces_collapsed():
    html, _ = render(BLANKS.replace("{lessons: [1], case: insensitive, spaces: ignore}", "{lessons: [1]}"))
    assert '"case": "sensitive", "spaces": "collapse"' in html


@pytest.mark.parametrize(
    "source,expected",
    [
        (BLANKS.replace("[[sugar|sugars]]", "[[ | ]]"), "1: blank 1 ('[[ | ]]') has no accepted answer"),
        (BLANKS.replace("[[40]]", "[[]]"), "1: blank 4 ('[[]]') has no accepted answer"),
        (
            ":::: blanks {lessons: [1]}\nNo gaps here.\n::::\n",
            "1: ':::: blanks' question has no blanks | mark each gap with its answer in double brackets: [[answer]]",
        ),
        (":::: blanks {lessons: [1]}\n::::\n", "1: ':::: blanks' question has an empty prompt"),
        (BLANKS.replace("case: insensitive", "case: loose"), "1: 'case' must be one of sensitive, insensitive"),
        (BLANKS.replace("spaces: ignore", "spaces: trim"), "1: 'spaces' must be one of collapse, exact, ignore"),
        (BLANKS.replace("::: explanation", "::: answer"), "1: ':::: blanks' takes '::: explanation', not '::: answer'"),
        (ORDER.replace("2. Knead\n3. Rest\n4. Bake\n", ""), "1: ':::: order' question has 1 line to order"),
        (
            PARSONS.replace('    if hours > 2:\n        return "ready"\n    return "wait"\n', ""),
            "1: ':::: order' question has 1 line",
        ),
        (":::: order {lessons: [1]}\nPut these in order.\n::::\n", "1: ':::: order' question has no lines to order"),
        (":::: order {lessons: [1]}\n::::\n", "1: ':::: order' question has an empty prompt"),
        (ORDER.replace("2. Knead", "2. Knead\n\n   - then fold"), "1: step 'Knead' holds more than one paragraph"),
        (
            ORDER.replace("4. Bake\n", "4. Bake\n\n::: answer\nNo.\n:::\n"),
            "1: ':::: order' takes '::: explanation', not '::: answer'",
        ),
        (
            ORDER.replace("Put the steps in order.\n", "Put the steps in order.\n\n::: explanation\nWhy.\n:::\n"),
            "1: the '::: explanation' part must come after the lines to order",
        ),
    ],
    ids=[
        "a blank of spaces",
        "an empty blank",
        "no blanks",
        "an empty blanks block",
        "an unknown case rule",
        "an unknown space rule",
        "an answer part in blanks",
        "one step to order",
        "one code line to order",
        "nothing to order",
        "an empty order block",
        "a step of two blocks",
        "an answer part in order",
        "an explanation before the lines",
    ],
)
def test_a_malformed_block_is_reported_at_its_line(source, expected):
    found = errors(source)
    assert any(line.startswith(expected) for line in found), found


def test_the_steps_are_shown_in_an_order_fixed_by_the_question_id_and_the_key_is_numbered():
    html, env = render(ORDER)
    assert not env["problems"].items
    shown = re.findall(r'<li class="order-item" data-line="(\d)">(\w+)</li>', html)
    permutation = shuffled(4, "put-the-steps-in-order")
    assert [int(line) for line, _ in shown] == permutation != [0, 1, 2, 3]
    assert [text for _, text in shown] == [["Mix", "Knead", "Rest", "Bake"][i] for i in permutation]
    assert '<ol class="order-key">\n<li>Mix</li>' in html
    assert html == render(ORDER)[0]


def test_a_shuffle_is_never_the_right_order_and_depends_on_the_id():
    for count in range(2, 9):
        for seed in ("a", "b", "c", "d"):
            assert sorted(shuffled(count, seed)) == list(range(count)) and shuffled(count, seed) != list(range(count))
    assert len({tuple(shuffled(6, seed)) for seed in "abcdef"}) > 1


def test_code_lines_keep_their_indent_level_and_the_key_is_the_highlighted_fence():
    assert code_lines("def f():\n\n    if x:\n        y\n\treturn 1\n") == [
        ("def f():", 0),
        ("if x:", 1),
        ("y", 2),
        ("return 1", 1),
    ]
    html, env = render(PARSONS)
    assert not env["problems"].items
    assert 'class="order-items order-code"' in html
    assert '<li class="order-item" data-line="2" data-indent="2"><code>return &quot;ready&quot;</code></li>' in html
    assert '<pre class="highlight"' in html.split("<details")[1]


# ---- the page's helpers, under Node --------------------------------------------------------

SCRIPT = Path(__file__).parent / "kinds_checks.mjs"
NODE = shutil.which("node")
MESSAGES_JS = Path(tempfile.mkdtemp()) / "messages.js"
MESSAGES_JS.write_bytes(messages.script(messages.reference(Path(__file__).resolve().parents[3])))


def run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COURSEGEN_MESSAGES_JS": MESSAGES_JS.as_uri()}
    return subprocess.run([NODE, str(SCRIPT), *args], capture_output=True, text=True, timeout=60, env=env)


CHECKS = json.loads(run().stdout) if NODE else []


def test_the_helper_checks_were_found():
    assert len(CHECKS) >= 6


@pytest.mark.parametrize("name", CHECKS)
def test_page_helper(name):
    result = run(name)
    assert result.returncode == 0, result.stderr
