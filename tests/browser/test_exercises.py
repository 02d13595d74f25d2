"""A learner does the Sequence-axis lesson's pure-Python exercise in Chromium, with the npm Pyodide runtime.

The exercise block is taken from lessons/03-sequence-axis.md as it is (its `revisit` dropped: the
fixture course has no such unit) and built into a copy of the widget fixture course, which
self-hosts the npm `pyodide` package: enough for pure Python.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from colours import TEXT_COLOURS, unreadable
from helpers import FIXTURES, REPO, WAIT_GUARD_MS, copy_course, link_pyodide, require_complete_pyodide, run_cli, serving
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
Q = "#q-largest-safe-tile"
AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"
RIGHT = """import math

BF16_MAX_LOG = math.log((2 - 2**-7) * 2**127)

def largest_safe_tile(g_min):
    return int(BF16_MAX_LOG // -g_min)
"""
WRONG = RIGHT.replace("int(BF16_MAX_LOG // -g_min)", "17")
RAISES = RIGHT.replace("int(BF16_MAX_LOG // -g_min)", "int(BF16_MAX_LOG // -g_min)\n\nprint(largest_safe_tile('x'))")
LOOPS = RIGHT.replace("return int(", "while True:\n        pass\n    return int(")


def exercise_block(lesson: str = "03-sequence-axis.md") -> str:
    text = (REPO / "lessons" / lesson).read_text()
    block = re.search(r"^:::: exercise \{revisit: [^,]+, (.*?)^::::$", text, re.S | re.M)
    return ":::: exercise {" + block.group(1) + "::::\n"


def build(root: Path, block: str, pyodide: str = "") -> Path:
    """Build the widget fixture course with `block` on a page tiles.html (and other pyodide settings)."""
    course = copy_course(FIXTURES / "widgets", root)
    (course / "lessons" / "03-tiles.md").write_text("---\ntitle: Tiles\n---\n\n## Try it\n\n" + block)
    config = course / "course.yaml"
    text = config.read_text()
    if pyodide:
        text = text.replace("pyodide:\n  source: local\n", f"pyodide:\n{pyodide}")
    config.write_text(text + "  - slug: tiles\n")
    status = run_cli(_NoCapture(), "--root", course, "build")[0]
    assert status == 0
    return course / "site"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return build(tmp_path_factory.mktemp("exercises") / "course", exercise_block())


class _NoCapture:
    def readouterr(self):
        return type("Captured", (), {"out": "", "err": ""})()


@pytest.fixture
def tiles(site, context_factory, page_and_watch):
    """Open tiles.html on a served site; yield (page, watch)."""
    watch_class = type(page_and_watch[1])
    with serving(site) as base:

        def open_(**options):
            page = context_factory(service_workers="block", **options).new_page()
            watch = watch_class(page)
            page.goto(base + "tiles.html")
            return page, watch

        yield open_


EDITOR = f"{Q} .exercise-code-editor .cm-content"  # CodeMirror, in the editor's shadow root


def write(page, code: str) -> None:
    """Start on the code box (which loads the editor), then replace its text through the editor."""
    box = page.locator(f"{Q} .exercise-code")
    editor = page.locator(EDITOR)
    if box.is_visible():
        box.focus()
        expect(editor).to_be_focused()  # loaded, and holding the focus the text box had
    editor.focus()
    page.keyboard.press("Control+a")  # CodeMirror's select-all, then the text as if pasted
    page.keyboard.insert_text(code)
    expect(box).to_have_value(code)  # the text box, which Run and Check read, follows the editor


def check(page, expected_status: str) -> None:
    page.locator(f"{Q} .exercise-check").click()
    expect(page.locator(f"{Q} .exercise-status")).to_have_text(re.compile(expected_status), timeout=WAIT_GUARD_MS)


def test_without_javascript_the_prompt_starter_and_reference_are_a_study_sheet(tiles):
    page, watch = tiles(java_script_enabled=False)
    assert page.locator(f"{Q} .question-prompt").is_visible()
    box = page.locator(f"{Q} textarea.exercise-code")  # a plain text box, usable without JavaScript
    assert box.input_value().startswith("import math\n\nBF16_MAX_LOG = ")
    assert "def largest_safe_tile(g_min):\n" in box.input_value()
    box.fill(RIGHT)
    assert box.input_value() == RIGHT
    assert page.locator(f"{Q} .exercise-check").count() == 0  # nothing that needs a script is shown
    answer = page.locator(f"{Q} details[data-answer]")
    assert answer.is_visible() and not answer.evaluate("d => d.open")
    assert "while abs(g_min)" in answer.text_content()
    assert page.locator(f"{Q} details[data-hint]").count() == 2
    watch.assert_clean()


def test_a_right_answer_passes_every_check_scores_yes_and_unlocks_the_reference(tiles):
    page, watch = tiles()
    editor_requests = []
    page.on("request", lambda request: editor_requests.append(request.url) if "codemirror" in request.url else None)
    page.wait_for_selector("html[data-review=ready]")
    assert editor_requests == []  # the editor is fetched only once the learner starts on the code box
    assert page.locator(EDITOR).count() == 0
    answer = page.locator(f"{Q} details[data-answer]")
    assert answer.is_hidden()  # the reference stays locked until Check
    write(page, RIGHT)
    assert len(editor_requests) == 1 and "/vendor/codemirror." in editor_requests[0]
    assert page.locator(f"{Q} .exercise-code").is_hidden()
    check(page, r"^9 of 9 checks passed; scored yes\.")
    assert page.locator(f"{Q} .exercise-results .exercise-pass").count() == 9
    assert answer.is_visible()
    assert page.locator(f"{Q} [data-score=yes]").get_attribute("aria-pressed") == "true"
    expect(page.locator("[data-tally-summary]")).to_contain_text("1 of 1 answered: 1 yes")
    page.reload()  # the code and the score are kept in the browser
    page.wait_for_selector("html[data-review=ready]")
    assert page.locator(f"{Q} .exercise-code").input_value() == RIGHT
    assert page.locator(f"{Q} [data-score=yes]").get_attribute("aria-pressed") == "true"
    watch.assert_clean()


def test_a_wrong_answer_shows_the_first_failing_input_and_scores_partly(tiles):
    page, watch = tiles()
    page.wait_for_selector("html[data-review=ready]")
    write(page, WRONG)
    check(page, r"^1 of 9 checks passed; scored partly\.")
    failure = page.locator(f"{Q} .exercise-results .exercise-fail").first
    assert "a floor of -6" in failure.text_content()
    assert "Input: [-6]" in failure.text_content() and "Expected 14, got 17" in failure.text_content()
    page.locator(f"{Q} [data-score=no]").click()  # the learner may override the checks' score
    expect(page.locator(f"{Q} [data-score=no]")).to_have_attribute("aria-pressed", "true")
    watch.assert_clean()


def test_a_python_error_names_the_line_in_the_learners_code_and_commits_nothing(tiles):
    page, watch = tiles()
    page.wait_for_selector("html[data-review=ready]")
    write(page, RAISES)
    page.locator(f"{Q} .exercise-run").click()
    expect(page.locator(f"{Q} .exercise-status")).to_have_text(
        re.compile(r"^Python error: line 6: TypeError: bad operand type for unary -: 'str'"), timeout=WAIT_GUARD_MS
    )
    write(page, "def largest_safe_tile(g_min)\n    return 1\n")
    check(page, r"^Python error: line 1: SyntaxError")
    assert page.locator(f"{Q} details[data-answer]").is_hidden()
    watch.assert_clean()


def test_an_endless_loop_is_stopped_and_the_next_check_works_without_downloading_python_again(tiles):
    page, watch = tiles()
    requests = []  # the context's requests include the workers'
    page.context.on("request", lambda request: requests.append(request.url))
    page.wait_for_selector("html[data-review=ready]")
    write(page, LOOPS)
    check(page, r"^Stopped: your code ran for more than 5 s")
    first = Counter(url.rsplit("/", 1)[1] for url in requests if "/pyodide/" in url)
    assert {"pyodide.asm.wasm", "python_stdlib.zip"} <= set(first), first
    write(page, RIGHT)
    check(page, r"^9 of 9 checks passed")  # in a new worker, fed the first one's files by the page
    runtime = Counter(url.rsplit("/", 1)[1] for url in requests if "/pyodide/" in url)
    assert runtime == first == Counter(dict.fromkeys(first, 1)), runtime
    watch.assert_clean()


def test_keyboard_only_write_check_and_leave_the_code_box(tiles):
    page, watch = tiles()
    page.wait_for_selector("html[data-review=ready]")
    box = page.locator(f"{Q} .exercise-code")
    box.focus()
    editor = page.locator(EDITOR)
    expect(editor).to_be_focused()  # the editor loaded on the focus, and took it over
    page.keyboard.press("Control+a")
    page.keyboard.type("import math\ndef largest_safe_tile(g_min):\n")  # Enter indents the body
    page.keyboard.press("Tab")  # indents further, does not leave
    page.keyboard.press("Shift+Tab")  # dedents again
    page.keyboard.type("return int(math.log((2 - 2**-7) * 2**127) // -g_min)\n")
    expect(editor).to_be_focused()
    expect(box).to_have_value(re.compile(r"\):\n    return int\("))
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")  # now the focus leaves: to Run, then Check
    page.keyboard.press("Tab")
    assert page.locator(f"{Q} .exercise-check").evaluate("b => b === document.activeElement")
    page.keyboard.press("Enter")
    expect(page.locator(f"{Q} .exercise-status")).to_have_text(
        re.compile(r"^9 of 9 checks passed"), timeout=WAIT_GUARD_MS
    )
    watch.assert_clean()


def test_without_the_editor_the_enhanced_text_box_still_takes_the_code(tiles):
    page, _watch = tiles()
    page.route("**/vendor/codemirror.*", lambda route: route.abort())
    page.wait_for_selector("html[data-review=ready]")
    box = page.locator(f"{Q} .exercise-code")
    with page.expect_event("requestfailed", lambda request: "/vendor/codemirror." in request.url):
        box.focus()  # the editor is asked for, and does not come
    page.keyboard.press("Control+a")
    page.keyboard.type("import math\ndef largest_safe_tile(g_min):\n")
    page.keyboard.press("Tab")  # the text box's own indenting
    page.keyboard.type("return int(math.log((2 - 2**-7) * 2**127) // -g_min)\n")
    expect(box).to_be_focused()
    assert page.locator(EDITOR).count() == 0 and box.is_visible()
    assert "):\n    return int(" in box.input_value()
    check(page, r"^9 of 9 checks passed")


def test_axe_finds_no_serious_violation_after_a_check(site, context_factory):
    with serving(site) as base:
        page = context_factory(bypass_csp=True, service_workers="block").new_page()
        page.goto(base + "tiles.html")
        page.wait_for_selector("html[data-review=ready]")
        write(page, WRONG)
        check(page, r"checks passed")
        page.locator(f"{Q} details[data-hint]").first.locator("summary").click()
        page.add_script_tag(path=str(AXE))
        result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
        serious = [v["id"] for v in result["violations"] if v["impact"] in ("serious", "critical")]
        assert serious == []


def test_python_that_cannot_load_is_said_plainly_and_the_learner_can_still_compare_and_score(tmp_path, context_factory):
    site = build(tmp_path / "cdn", exercise_block(), pyodide="  source: cdn\n")
    with serving(site) as base:
        page = context_factory(service_workers="block").new_page()
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base) else route.abort())
        page.goto(base + "tiles.html")
        page.wait_for_selector("html[data-review=ready]")
        write(page, RIGHT)
        # one plain sentence, as a widget says it; the technical reason (a URL, "Failed to fetch") on request
        check(
            page,
            r"^Python is unavailable: the Python runtime could not be reached \(you may be offline, or its server "
            r"is blocked\)\. Compare your code with the reference solution and score yourself\.$",
        )
        detail = page.locator(f"{Q} [data-live-detail]")
        expect(detail).to_be_visible()
        expect(detail.locator("summary")).to_have_text("Technical reason")
        expect(detail.locator("[data-live-reason]")).to_be_hidden()  # closed until the learner opens it
        detail.locator("summary").click()
        expect(detail.locator("[data-live-reason]")).to_have_text(
            re.compile(r"^runtime unreachable: https://cdn\.jsdelivr\.net/\S+/pyodide\.mjs could not be reached: ")
        )
        answer = page.locator(f"{Q} details[data-answer]")
        assert answer.is_hidden()  # nothing is committed by the failure itself
        assert page.locator(f"{Q} .exercise-check").is_enabled()  # Check may be tried again
        compare = page.locator(f"{Q} .exercise-compare")
        compare.click()  # the way on: the reference unlocks, and the learner scores it
        expect(answer).to_be_visible()
        expect(compare).to_be_hidden()
        expect(page.locator(f"{Q} .question-score-label")).to_contain_text("score yourself")
        page.locator(f"{Q} [data-score=partly]").click()
        expect(page.locator("[data-tally-summary]")).to_contain_text("1 of 1 answered: 0 yes, 1 partly, 0 no")
        page.reload()  # kept as a self-score
        page.wait_for_selector("html[data-review=ready]")
        expect(page.locator(f"{Q} .question-score-label")).to_contain_text("score yourself")
        assert page.locator(f"{Q} [data-score=partly]").get_attribute("aria-pressed") == "true"


def test_a_site_without_numpy_says_so_up_front_for_the_numpy_exercise_and_the_other_still_checks(
    tmp_path, context_factory
):
    # The npm runtime has no numpy: the KDA exercise says so before any run (as widgets do) and offers the
    # reference; the pure-Python exercise on the same page boots without numpy and checks as usual.
    site = build(tmp_path / "both", exercise_block() + "\n" + exercise_block("02-kda.md"))
    with serving(site) as base:
        page = context_factory(service_workers="block").new_page()
        requests = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(base + "tiles.html")
        page.wait_for_selector("html[data-review=ready]")
        kda = page.locator("#q-one-token-update")
        expect(kda.locator(".exercise-status")).to_have_text(
            "Live Python is not available on this site: its copy of Pyodide lacks numpy, so this code cannot be "
            "run or checked here. Compare your code with the reference solution and score yourself."
        )
        expect(kda.locator(".exercise-check")).to_be_hidden()
        expect(kda.locator(".exercise-run")).to_be_hidden()
        kda.locator(".exercise-compare").click()
        expect(kda.locator("details[data-answer]")).to_be_visible()
        write(page, RIGHT)
        check(page, r"^9 of 9 checks passed; scored yes\.")
        assert not [url for url in requests if "numpy" in url]


def test_the_editor_s_code_is_readable_in_the_dark_scheme(tiles):
    page, watch = tiles(color_scheme="dark")
    page.wait_for_selector("html[data-review=ready]")
    write(page, RIGHT)
    editors = page.locator(f"{Q} .exercise-code-editor")  # CodeMirror draws its text in the editor's shadow root
    colours = editors.evaluate_all(
        f"hosts => ({TEXT_COLOURS})(hosts.map(h => h.shadowRoot.querySelector('.cm-content')))"
    )
    assert len(colours) >= 10  # keywords, names, numbers, operators
    assert unreadable(colours) == []
    watch.assert_clean()


NUMPY_ANSWER = """import numpy as np

def kda_step(S, k, v, g, beta):
    S, k, v, g = (np.asarray(x, dtype=float) for x in (S, k, v, g))
    S = np.exp(g)[:, None] * S
    return S + beta * np.outer(k, v - k @ S)
"""


def test_the_kda_exercise_checks_a_numpy_answer_live(tmp_path, context_factory, capsys):
    course = copy_course(FIXTURES / "widgets", tmp_path / "live")
    (course / "lessons" / "03-tiles.md").write_text(
        "---\ntitle: Tiles\n---\n\n## Try it\n\n" + exercise_block("02-kda.md")
    )
    config = course / "course.yaml"
    pyodide = f"pyodide:\n  source: local\n  path: {link_pyodide(course)}\n"
    config.write_text(config.read_text().replace("pyodide:\n  source: local\n", pyodide) + "  - slug: tiles\n")
    status, _, err = run_cli(capsys, "--root", course, "build", "--strict")
    require_complete_pyodide(status, err, ["numpy"])  # skips here without a complete Pyodide
    site = course / "site"
    with serving(site) as base:
        page = context_factory(service_workers="block").new_page()
        page.goto(base + "tiles.html")
        page.wait_for_selector("html[data-review=ready]")
        page.locator("#q-one-token-update .exercise-code").fill(NUMPY_ANSWER)
        page.locator("#q-one-token-update .exercise-check").click()
        expect(page.locator("#q-one-token-update .exercise-status")).to_have_text(
            re.compile(r"^5 of 5 checks passed; scored yes"), timeout=180000
        )
