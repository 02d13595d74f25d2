"""Exercises at build time: the reference bakes the expected values, the page carries no reference outside
its <details>, and the course's numpy exercise is checked in CPython with the page's own harness."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time

import pytest
from helpers import COURSE_PARTS, FIXTURES, REPO, copy_course, run_cli

from coursegen.errors import Problems
from coursegen.features.questions import exercises
from coursegen.features.questions import harness as exercise_harness
from coursegen.stages.load import author_code_uses
from coursegen.yamlio import load_yaml

CHECKS = re.compile(r'<script type="application/json" data-exercise-checks>(.*?)</script>', re.S)


@pytest.fixture(scope="module")
def course_site(tmp_path_factory):
    """The sample course, built once."""
    root = tmp_path_factory.mktemp("course")
    for part in COURSE_PARTS:
        if (REPO / part).is_dir():
            shutil.copytree(REPO / part, root / part)
        elif (REPO / part).is_file():
            shutil.copy(REPO / part, root / part)
    assert run_cli(_Quiet(), "--root", root, "build")[0] == 0
    return root / "site"


class _Quiet:
    def readouterr(self):
        return type("Captured", (), {"out": "", "err": ""})()


def page_checks(site, page: str) -> dict:
    return json.loads(CHECKS.search((site / page).read_text()).group(1))


def kda_step(S, k, v, g, beta):
    """A learner's numpy answer, written from the lesson's equations (not from the kernel)."""
    import numpy as np

    S, k, v, g = (np.asarray(x, dtype=float) for x in (S, k, v, g))
    S = np.exp(g)[:, None] * S
    return S + beta * np.outer(k, v - k @ S)


LEARNER = "import numpy as np\n\n" + "\n".join(
    line
    for line in __import__("inspect").getsource(kda_step).splitlines()
    if "import numpy" not in line and '"""' not in line
)


def test_the_kda_exercise_bakes_kernel_results_that_a_numpy_answer_passes_in_cpython(course_site):
    pytest.importorskip("numpy")
    checks = page_checks(course_site, "kda.html")
    assert checks["packages"] == ["numpy"] and checks["function"] == "kda_step"
    assert len(checks["cases"]) == 5 and checks["cases"][0]["expected"] == [[2.0, 3.0], [0.0, 0.0], [0.0, 0.0]]
    report = exercise_harness.run(LEARNER, "kda_step", checks["cases"], checks["tolerance"])
    assert [r["passed"] for r in report["results"]] == [True] * 5, report
    no_erase = LEARNER.replace("v - k @ S", "v")
    report = exercise_harness.run(no_erase, "kda_step", checks["cases"], checks["tolerance"])
    assert [r["passed"] for r in report["results"]] == [True] + [False] * 4  # an empty state hides the bug


def test_the_page_keeps_the_reference_inside_its_details_and_out_of_the_checks(course_site):
    html = (course_site / "sequence-axis.html").read_text()
    section = html[html.index('id="q-largest-safe-tile"') :]
    section = section[: section.index("</section>")]
    answer = section.index('<details class="question-answer" data-answer>')
    loop = '<span class="k">while</span>'  # the reference's loop, highlighted
    assert section.count(loop) == 1 and section.index(loop) > answer
    checks = page_checks(course_site, "sequence-axis.html")
    assert "while abs(g_min)" not in json.dumps(checks)
    assert checks["packages"] == [] and checks["cases"][0] == {"name": "K3's floor of -5", "args": [-5], "expected": 17}
    assert checks["runtime"]["worker"].startswith("assets/pyodide-worker.")


def test_a_check_case_that_is_no_mapping_or_has_an_unknown_key_is_reported_at_its_line():
    problems = Problems()
    env = {"path": "lessons/a.md", "problems": problems}
    assert exercises._case(5, 7, env) is None
    assert exercises._case(load_yaml("{name: two, arg: [2]}", first_line=9), 7, env) is None
    assert exercises._case(load_yaml("{args: [2]}", first_line=10), 7, env) is None
    assert [p.format() for p in problems.items] == [
        "lessons/a.md:7: a check case must be a mapping of keys to values, found 5",
        "lessons/a.md:9: unknown key 'arg' in a check case\n    hint: did you mean 'args'? "
        "known keys are: name, args, expected, assert, generate, seed, count",
        "lessons/a.md:10: a check case has no 'name'\n    hint: add a line such as: name: a floor of -5",
    ]


def test_the_harness_reports_the_line_in_the_checked_code():
    cases = [{"name": "one", "args": [1], "expected": 2}]
    assert exercise_harness.run("def f(x):\n    return x + 1\n", "f", cases, 1e-9)["results"][0]["passed"]
    broken = exercise_harness.run("def f(x):\n\n    return x / 0\n", "f", cases, 1e-9)["results"][0]
    assert broken["error"] == "line 3: ZeroDivisionError: division by zero" and not broken["passed"]
    assert exercise_harness.run("def f(x) return", "f", cases, 1e-9)["error"].startswith("line 1: SyntaxError")
    assert exercise_harness.run("x = 1\n", "f", cases, 1e-9)["error"] == "your code defines no function f()"
    assert exercise_harness.run("print('hi')\n", "f", cases, 1e-9, mode="run") == {"output": "hi\n"}
    assert exercise_harness.run("import sys\nsys.exit(3)\n", "f", cases, 1e-9)["error"] == "line 2: SystemExit: 3"
    near = [{"name": "near", "args": [], "expected": [1.0, 2.0]}]
    assert exercise_harness.run("def f():\n    return [1.0 + 1e-12, 2]\n", "f", near, 1e-9)["results"][0]["passed"]
    assert not exercise_harness.run("def f():\n    return [1.1, 2]\n", "f", near, 1e-9)["results"][0]["passed"]


def test_a_page_with_an_exercise_runs_author_code_so_the_cache_tracks_the_package():
    assert author_code_uses(":::: exercise {id: x}\nWrite it.\n") == (False, True)  # keyed like a widget
    assert not any(author_code_uses("An exercise in prose.\n"))


def test_generated_inputs_and_expected_values_are_the_same_in_every_build(tmp_path, capsys):
    pages = []
    for name in ("one", "two"):
        root = copy_course(FIXTURES / "mini", tmp_path / name)
        lesson = root / "lessons" / "02-second.md"
        lesson.write_text(lesson.read_text() + EXERCISE)
        assert run_cli(capsys, "--root", root, "build")[0] == 0
        pages.append((root / "site" / "second.html").read_text())
    assert pages[0] == pages[1]
    cases = json.loads(CHECKS.search(pages[0]).group(1))["cases"]
    assert [c["name"] for c in cases] == ["random #1", "random #2", "random #3"]
    assert all(c["expected"] == pytest.approx(c["args"][0] / 3) for c in cases)


def test_a_course_whose_only_python_is_an_exercise_self_hosts_the_runtime_without_the_package_wheel(tmp_path, capsys):
    root = copy_course(FIXTURES / "mini", tmp_path / "mini")
    lesson = root / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text() + EXERCISE)
    (root / "course.yaml").write_text((root / "course.yaml").read_text() + "pyodide:\n  source: local\n")
    assert run_cli(capsys, "--root", root, "build")[0] == 0
    site = root / "site"
    assert (site / "pyodide" / "pyodide.mjs").is_file() and (site / "pyodide" / "pyodide.asm.wasm").is_file()
    assert not list(site.rglob("*.whl"))
    assert page_checks(site, "second.html")["runtime"]["indexURL"] == "pyodide/"


def test_a_reference_from_the_course_package_is_baked_and_shown_from_its_source(tmp_path, capsys):
    root = copy_course(FIXTURES / "widgets", tmp_path / "course")
    (root / "lessons" / "03-tiles.md").write_text("---\ntitle: Tiles\n---\n\n" + PACKAGED)
    (root / "course.yaml").write_text((root / "course.yaml").read_text() + "  - slug: tiles\n")
    assert run_cli(capsys, "--root", root, "build")[0] == 0
    html = (root / "site" / "tiles.html").read_text()
    assert json.loads(CHECKS.search(html).group(1))["cases"] == [
        {"name": "five", "args": [-5], "expected": 17},
        {"name": "six", "args": [-6], "expected": 14},
    ]
    answer = html[html.index("<summary>Reference solution</summary>") :]
    assert '<span class="nf">largest_safe_tile</span>' in answer[: answer.index("</details>")]


PACKAGED = """:::: exercise {id: tile, solution: overflow.largest_safe_tile}
Write `largest_safe_tile(g_min)`.

```python starter
def largest_safe_tile(g_min):
    ...
```

```yaml checks
function: largest_safe_tile
cases:
  - {name: five, args: [-5]}
  - {name: six, args: [-6]}
```
::::
"""


EXERCISE = """
:::: exercise {id: third}
Write `third(x)`.

```python starter
def third(x):
    ...
```

```python solution
def third(x):
    return x / 3
```

```yaml checks
function: third
cases:
  - {name: random, generate: "[rng.uniform(-10, 10)]", seed: 4, count: 3}
```
::::
"""


def test_a_reference_printing_a_hundred_megabytes_builds_in_bounded_time_and_keeps_the_terminal_quiet(tmp_path):
    root = copy_course(FIXTURES / "mini", tmp_path / "loud")
    config = root / "course.yaml"
    config.write_text(config.read_text().replace("seconds: 2", "seconds: 60"))
    loud = EXERCISE.replace(
        "    return x / 3\n", "    for _ in range(100_000):\n        print('x' * 999)\n    return x / 3\n"
    )
    lesson = root / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text() + loud)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "coursegen", "--root", str(root), "build"], capture_output=True)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert len(done.stdout) + len(done.stderr) < 10_000  # not the 100 MB the reference printed (three times over)
    assert time.monotonic() - started < 60


def test_the_harness_keeps_only_what_the_page_shows_of_printed_output():
    code = "for _ in range(100_000):\n    print('y' * 999)\ndef f():\n    return 1\n"
    report = exercise_harness.run(code, "f", [{"name": "one", "args": [], "expected": 1}], 1e-9)
    assert report["results"][0]["passed"]
    assert report["output"] == (("y" * 999 + "\n") * 5)[: exercise_harness.OUTPUT_LIMIT]


def test_a_starter_too_long_to_read_is_reported_at_its_fence(tmp_path, capsys):
    root = copy_course(FIXTURES / "mini", tmp_path / "long")
    lesson = root / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text() + EXERCISE.replace("    ...\n", "    ...\n" + "x = 1\n" * 10_000))
    status, _, err = run_cli(capsys, "--root", root, "check")
    line = lesson.read_text().splitlines().index("```python starter") + 2
    assert status == 1
    assert err.startswith(
        f"lessons/02-second.md:{line}: the exercise's starter is too long: 60,022 characters, more than the 50,000"
    ), err


@pytest.mark.parametrize(
    "value, refused",
    [
        ([1, 2.5, "a", None, True, {"k": [1]}], ""),
        ((1, 2), ""),
        ({(1, 2): 3}, ""),
        ({1, 2}, "a set"),
        (frozenset([1]), "a frozenset"),
        (iter([1]), "a list_iterator"),
        ([object()], "an object"),
        ("<P object at 0x7f00deadbeef>", "memory address"),
        ({object(): 1}, "a dict keyed by an object"),
    ],
)
def test_only_values_a_page_can_be_given_the_same_way_every_build_are_baked(value, refused):
    if not refused:
        assert exercises.written(value, "c") is not None
        return
    with pytest.raises(exercises.CaseError, match=refused) as err:
        exercises.written(value, "c", 7)
    assert err.value.line == 7


def test_an_object_array_is_refused_and_a_number_array_kept():
    import numpy

    assert exercises.written(numpy.array([1.5, 2.0]), "c") == [1.5, 2.0]
    with pytest.raises(exercises.CaseError, match="dtype=object"):
        exercises.written(numpy.array([1, "a"], dtype=object), "c")


WRONG_REFERENCE = """
:::: exercise {id: double}
Write `double(x)`.

```python starter
def double(x):
    ...
```

```python solution
def double(x):
    return x * 3  # wrong, and the checks below take its answers as expected
```

```yaml checks
function: double
cases:
  - {name: two, args: [2]}
  - {name: half, args: [0.5]}
  - {name: sign, args: [-1], assert: "result < 0"}
```
::::
"""


def test_check_expected_lists_what_a_wrong_reference_answered_so_the_author_can_see_it(tmp_path, capsys):
    """A reference solution's answers become the expected values without a word (docs/reviews.md):
    `check --expected` shows them, each exercise at its line."""
    root = copy_course(FIXTURES / "mini", tmp_path / "mini")
    lesson = root / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text() + WRONG_REFERENCE)
    status, out, err = run_cli(capsys, "--root", root, "check", "--expected")
    assert status == 0, err
    assert out.splitlines()[:4] == [
        "lessons/02-second.md:14: exercise 'double' accepts what its reference solution answered:",
        "    two: double(2) == 6",
        "    half: double(0.5) == 1.5",
        "    sign: double(-1) assert result < 0",
    ]
    assert out.splitlines()[-1].startswith("ok: ")
    status, out, _ = run_cli(capsys, "--root", root, "check")
    assert status == 0 and "accepts" not in out  # only when asked
