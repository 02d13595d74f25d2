"""Code cells (```` ```{code-cell} python ````): run at build time, outputs baked into the page, every mistake located."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from helpers import REPO, run_cli

from coursegen.errors import ContentError
from coursegen.pipeline import build_site
from coursegen.session import Session


@pytest.fixture
def mini_course(mini_course):
    """The mini course with a time limit no loaded machine reaches by importing the package (its own is 2 s)."""
    yaml = mini_course / "course.yaml"
    yaml.write_text(yaml.read_text().replace("seconds: 2", "seconds: 120"))
    return mini_course


def put(course, text: str) -> None:
    """Replace the mini course's 'Text.' paragraph (line 13 of lesson 2) with `text`."""
    lesson = course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", text))


def cell(code: str, options: str = "", language: str = "python") -> str:
    return f"```{{code-cell}} {language}\n{options}{code}\n```\n"


def page(course, session=None) -> str:
    return build_site(course, session=session).outputs["second.html"].decode()


def cells_html(html: str) -> str:
    """Return the page's code cells that show code and output, one after another, without the live-run data."""
    html = re.sub(r'<script type="application/json" data-cells-runtime>.*?</script>\n', "", html, flags=re.S)
    return "".join(re.findall(r'<div class="code-cell" data-code-cell="\d+">\n.*?\n</div>\n</div>\n', html, re.S))


def problems(course) -> list[str]:
    with pytest.raises(ContentError) as caught:
        build_site(course)
    return [problem.format() for problem in caught.value.problems]


def test_a_cell_bakes_its_printed_text_and_value_byte_for_byte(mini_course):
    put(mini_course, cell('print("two lines\\nof <text>")\n6 * 7'))
    assert cells_html(page(mini_course)) == (
        '<div class="code-cell" data-code-cell="1">\n'
        '<div class="code-cell-input">\n'
        '<pre class="highlight" tabindex="0"><code class="language-python"><span class="nb">print</span>'
        '<span class="p">(</span><span class="s2">&quot;two lines</span><span class="se">\\n</span>'
        '<span class="s2">of &lt;text&gt;&quot;</span><span class="p">)</span>\n'
        '<span class="mi">6</span> <span class="o">*</span> <span class="mi">7</span>\n'
        "</code></pre></div>\n"
        '<div class="code-cell-output">\n'
        '<pre class="cell-stdout" tabindex="0">two lines\nof &lt;text&gt;\n</pre>\n'
        '<pre class="cell-text" tabindex="0">42</pre>\n'
        "</div>\n"
        "</div>\n"
    )


def test_cells_share_one_namespace_in_page_order_and_can_import_the_course_package(mini_course):
    put(mini_course, cell("from kernels import overflow\nx = overflow.largest_safe_tile(-5)") + "\n" + cell("x + 1"))
    assert '<pre class="cell-text" tabindex="0">18</pre>' in page(mini_course)


@pytest.mark.parametrize(
    "value, shown",
    [
        ("0.1 + 0.2", "0.3"),
        ("[0.1 + 0.2, 1 / 3]", "[0.3, 0.333333333333]"),
        ("{'a': 0.1 + 0.2}", "{'a': 0.3}"),
        ("import numpy as np\nnp.float64(0.1) + np.float64(0.2)", "0.3"),
        ("x = 1\nx;", None),
        ("None", None),
    ],
)
def test_a_value_is_shown_without_round_off_and_a_trailing_semicolon_hides_it(mini_course, value, shown):
    put(mini_course, cell(value))
    found = re.findall(r'<pre class="cell-text" tabindex="0">(.*?)</pre>', page(mini_course))
    assert found == ([shown] if shown else [])


def test_printed_floats_carry_no_round_off_and_other_printing_is_untouched(mini_course):
    code = (
        "import numpy as np\n"
        "print(0.1 + 0.2, [1 / 3], {'k': 0.7 * 3})\n"
        "print(np.float64(0.1) * 3, 'text', 7, sep=' | ')\n"
        "print('no newline', end='')"
    )
    put(mini_course, cell(code))
    found = re.findall(r'<pre class="cell-stdout" tabindex="0">(.*?)</pre>', page(mini_course), re.S)
    assert found == ["0.3 [0.333333333333] {'k': 2.1}\n0.3 | text | 7\nno newline"]


def test_an_object_with_repr_html_is_shown_as_its_html(mini_course):
    put(
        mini_course,
        cell("class T:\n    def _repr_html_(self):\n        return '<table><tr><td>1</td></tr></table>'\nT()"),
    )
    assert '<div class="cell-html">\n<table><tr><td>1</td></tr></table>\n</div>' in page(mini_course)


def test_display_print_and_figures_keep_their_order(mini_course):
    code = (
        "import matplotlib.pyplot as plt\n"
        "print('before')\n"
        "plt.plot([1, 2], [3, 4])\n"
        "plt.show()\n"
        "print('between')\n"
        "display(1, 'two')\n"
        "fig, ax = plt.subplots()\n"
        "ax.set_title('Left open')\n"
        "print('after');"
    )
    put(mini_course, cell(code))
    html = cells_html(page(mini_course))
    kinds = re.findall(r'<(?:pre class="cell-(\w+)"|figure class="cell-(figure)")', html)
    assert ["".join(kind) for kind in kinds] == ["stdout", "figure", "stdout", "text", "text", "stdout", "figure"]
    assert 'aria-label="Figure: Left open"' in html


def test_a_figure_is_inline_svg_with_no_inline_style_in_the_page_colour_and_unique_ids(mini_course):
    put(
        mini_course,
        cell("import matplotlib.pyplot as plt\nplt.plot([1, 2], [1, 4], 'k')") + "\n" + cell("plt.plot([1])"),
    )
    html = cells_html(page(mini_course))
    assert html.count("<svg ") == 2
    assert "style=" not in html and "<style" not in html and "#000000" not in html and "<?xml" not in html
    assert 'stroke="currentColor"' in html
    ids = re.findall(r' id="([^"]+)"', html)
    assert ids and len(ids) == len(set(ids))
    references = set(re.findall(r'(?:href="#|url\(#)([^")]+)', html))
    assert references <= set(ids)


@pytest.mark.parametrize(
    "tag, present, absent",
    [
        ("hide-input", ['<details class="code-cell-input"><summary>Show code</summary>', "cell-stdout"], []),
        ("hide-output", ['<details class="code-cell-output"><summary>Show output</summary>'], []),
        ("hide-cell", ['<details class="code-cell-fold"><summary>Show the code cell</summary>'], []),
        ("remove-input", ["cell-stdout"], ["code-cell-input"]),
        ("remove-output", ["code-cell-input"], ["code-cell-output"]),
        ("remove-cell", [], ["code-cell"]),
        ("skip-execution", ["code-cell-input"], ["code-cell-output"]),
    ],
)
def test_each_tag_shows_or_hides_its_part(mini_course, tag, present, absent):
    put(mini_course, cell("print('shown')", f":tags: [{tag}]\n"))
    html = page(mini_course)
    for text in present:
        assert text in html
    for text in absent:
        assert text not in html
    assert ("shown\n</pre>" in html) == (tag not in ("remove-output", "remove-cell", "skip-execution"))


def test_a_yaml_options_block_is_read_as_myst_nb_writes_it(mini_course):
    put(mini_course, cell("print('x')", "---\ntags: [remove-input]\n---\n", language="ipython3"))
    html = page(mini_course)
    assert "cell-stdout" in html and "code-cell-input" not in html


def test_a_cell_tagged_raises_exception_shows_its_traceback_with_the_page_line(mini_course):
    put(mini_course, cell("x = 1\n1 / 0", ":tags: [raises-exception]\n") + "\n" + cell("x"))
    html = page(mini_course)
    assert (
        '<pre class="cell-error" tabindex="0">Traceback (most recent call last):\n'
        "  File &quot;lessons/02-second.md&quot;, line 15, in &lt;module&gt;\n"
        "    1 / 0\n"
        "ZeroDivisionError: division by zero\n</pre>"
    ) in html
    assert '<pre class="cell-text" tabindex="0">1</pre>' in html


def test_matplotlib_inline_and_config_are_no_ops(mini_course):
    put(mini_course, cell("%matplotlib inline\n%config InlineBackend.figure_format = 'svg'\n1 + 1"))
    assert '<pre class="cell-text" tabindex="0">2</pre>' in page(mini_course)


@pytest.mark.parametrize(
    "code, expected",
    [
        (
            "x = 1\n%timeit x + 1",
            "lessons/02-second.md:14: code cell uses the IPython magic '%timeit', which the build does not run\n"
            "    hint: time code outside the course: a timing differs in every build, so a page cannot bake one",
        ),
        (
            "!ls -l",
            "lessons/02-second.md:13: code cell runs the shell command '!ls -l', which cannot run when the course is "
            "built\n    hint: do it in Python (pathlib, or the course's package), or before the build",
        ),
        (
            "%%capture\nprint(1)",
            "lessons/02-second.md:13: code cell uses the IPython magic '%%capture', which the build does not run\n"
            "    hint: tag the cell remove-output to run it without showing what it prints",
        ),
        (
            "%pip install numpy",
            "lessons/02-second.md:13: code cell uses the IPython magic '%pip', which the build does not run\n"
            "    hint: list the package in the course's requirements; a cell cannot install packages while the course "
            "is built",
        ),
        ("x = (\n", "lessons/02-second.md:13: code cell is not valid Python: '(' was never closed"),
    ],
)
def test_other_magics_shell_lines_and_syntax_errors_are_errors_at_their_line(mini_course, code, expected):
    put(mini_course, cell(code))
    assert problems(mini_course) == [expected]


def test_a_percent_line_inside_a_string_is_no_magic(mini_course):
    put(mini_course, cell('text = """\n%timeit is a magic\n"""\nlen(text)'))
    assert '<pre class="cell-text" tabindex="0">20</pre>' in page(mini_course)


@pytest.mark.parametrize(
    "fence, expected",
    [
        (
            cell("1", language="r"),
            "lessons/02-second.md:12: code cell language 'r' cannot run: the build runs Python cells only\n"
            "    hint: write ```{code-cell} python (python3 and ipython3, jupytext's names, work too)",
        ),
        (
            cell("1", ":tag: [hide-input]\n"),
            "lessons/02-second.md:13: unknown option 'tag'\n    hint: did you mean 'tags'? known options are: tags",
        ),
        (
            cell("1", "---\ntags: [x\n"),
            "lessons/02-second.md:13: the code cell's options block opened by '---' is never closed\n"
            "    hint: end it with ---",
        ),
    ],
)
def test_unknown_languages_and_options_are_errors_at_their_line(mini_course, fence, expected):
    put(mini_course, fence)
    assert problems(mini_course) == [expected]


def test_a_tag_for_another_tool_is_a_warning_at_its_line_and_the_cell_runs_with_the_tags_it_knows(mini_course, capsys):
    put(mini_course, cell("print('ran')", ":tags: [hide-inptu, remove-input]\n"))
    status, _, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 0, err
    assert (
        "lessons/02-second.md:13: warning: code cell tag 'hide-inptu' means nothing to coursegen and is ignored\n"
        "    hint: did you mean 'hide-input'? known tags are: hide-cell, hide-input, hide-output, raises-exception, "
        "remove-cell, remove-input, remove-output, skip-execution"
    ) in err
    page = (mini_course / "site" / "second.html").read_text()
    assert "ran\n</pre>" in page and "code-cell-input" not in page  # the cell ran, and remove-input still acts
    status, _, err = run_cli(capsys, "--root", mini_course, "build", "--strict")
    assert status == 1 and "code cell tag 'hide-inptu'" in err


@pytest.mark.parametrize(
    "code, expected",
    [
        (
            "x = 1\nx = [1][x]",
            "lessons/02-second.md:14: code cell raised IndexError: list index out of range\n"
            "    hint: fix the code, or tag the cell `:tags: [raises-exception]` to show the error as its output",
        ),
        (
            "def f():\n    return 1 / 0\n\nf()",
            "lessons/02-second.md:14: code cell raised ZeroDivisionError: division by zero\n"
            "    hint: fix the code, or tag the cell `:tags: [raises-exception]` to show the error as its output",
        ),
        (
            "import sys\nsys.exit(3)",
            "lessons/02-second.md:14: code cell calls sys.exit(), which would end the course's Python\n"
            "    hint: end the cell's code another way (an if, or raise an exception and tag the cell raises-exception)",
        ),
        (
            "name = input('name? ')",
            "lessons/02-second.md:13: code cell calls input(), which cannot be answered when the course is built\n"
            "    hint: set the value in the code instead",
        ),
        (
            "class P:\n    pass\nP()",
            "lessons/02-second.md:13: code cell shows text holding a memory address",
        ),
        (
            "{'b', 'a'}",
            "lessons/02-second.md:13: code cell shows a set of text or objects, whose order changes from build to "
            "build\n    hint: show sorted(…) instead",
        ),
        (
            "import matplotlib.pyplot as plt\nfor i in range(30):\n    plt.figure()",
            "lessons/02-second.md:13: code cell draws more than 20 figures\n"
            "    hint: close each figure you do not show with plt.close(fig)",
        ),
        (
            "text = open('/etc/hostname').read()",
            "lessons/02-second.md:13: code cell opens '/etc/hostname', outside the course\n"
            "    hint: open the course's own files, by a path relative to the page's folder (where its cells run)",
        ),
        (
            "import pathlib\npathlib.Path.home().joinpath('cell-was-here').write_text('x')",
            "lessons/02-second.md:14: code cell opens",
        ),
        (
            "import no_such_module",
            "lessons/02-second.md:13: code cell raised ModuleNotFoundError: No module named 'no_such_module'\n"
            "    hint: install the package that provides 'no_such_module' (pip install …), and list it, pinned, in the "
            "course's requirements.txt so the published build has it too",
        ),
    ],
)
def test_a_cell_that_fails_is_an_error_at_its_page_line(mini_course, code, expected):
    put(mini_course, cell(code))
    found = problems(mini_course)
    assert len(found) == 1 and found[0].startswith(expected)


def test_a_cell_raising_inside_a_later_cell_is_located_in_the_later_cell(mini_course):
    put(mini_course, cell("def f(x):\n    return x[3]") + "\n" + cell("y = 2\nf([1])"))
    assert problems(mini_course)[0].startswith(
        "lessons/02-second.md:19: code cell raised IndexError: list index out of range (at line 14)"
    )


def test_a_cell_that_never_ends_is_stopped_by_the_limit_at_its_line(mini_course):
    yaml = mini_course / "course.yaml"
    yaml.write_text(yaml.read_text().replace("seconds: 120", "seconds: 2"))
    shutil.rmtree(mini_course / "kernels")  # nothing to import first: only the loop meets the limit
    put(mini_course, cell("x = 1") + "\n" + cell("while True:\n    x += 1"))
    found = problems(mini_course)
    hint = "    hint: each call of the course's Python may run for `limits: {seconds: …}` of course.yaml (default 10)"
    # the watchdog's report names the line, unless a loaded machine delays it past the build's grace period
    assert found in (
        [f"lessons/02-second.md:17: code cell did not finish within 2 s (at line 18)\n{hint}"],
        [f"lessons/02-second.md:17: code cell did not finish within 2 s\n{hint}"],
    )


def test_a_cell_that_eats_memory_is_stopped_at_its_line(mini_course):
    yaml = mini_course / "course.yaml"
    yaml.write_text(yaml.read_text() + "  memory_mb: 512\n")
    put(mini_course, cell("blocks = []\nwhile True:\n    blocks.append(bytearray(50_000_000))"))
    found = problems(mini_course)
    assert len(found) == 1 and found[0].startswith("lessons/02-second.md:")
    assert "out of memory" in found[0]


def test_megabytes_of_printing_are_cut_with_a_note(mini_course):
    put(mini_course, cell("for i in range(200_000):\n    print('0123456789')"))
    html = page(mini_course)
    printed = re.search(r'<pre class="cell-stdout" tabindex="0">(.*?)</pre>', html, re.S).group(1)
    assert len(printed) == 20_000
    assert '<p class="cell-cut">2,180,000 more characters were printed; they are not shown.</p>' in html


def test_a_failing_cell_fails_the_command_and_leaves_the_site_untouched(mini_course, capsys):
    out = mini_course / "site"
    assert run_cli(capsys, "--root", mini_course, "build", "--out", out)[0] == 0
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    put(mini_course, cell("1 / 0"))
    status, _, err = run_cli(capsys, "--root", mini_course, "build", "--out", out)
    assert status == 1
    assert "lessons/02-second.md:13: code cell raised ZeroDivisionError: division by zero" in err
    assert "Traceback" not in err
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before


def test_cells_run_again_only_when_their_code_or_the_package_changes(mini_course, tmp_path):
    counter = tmp_path / "runs.txt"
    put(mini_course, "Intro.\n\n" + cell(f"open({str(counter)!r}, 'a').write('x')\nprint('ran')"))
    lesson = mini_course / "lessons" / "02-second.md"
    session = Session()
    try:
        page(mini_course, session)
        lesson.write_text(lesson.read_text().replace("Intro.", "Introduction,\n\nedited over more lines."))
        assert "edited over more lines." in page(mini_course, session)
        assert counter.read_text() == "x"  # the prose changed, the code did not
        lesson.write_text(lesson.read_text().replace("print('ran')", "print('ran again')"))
        assert "ran again" in page(mini_course, session)
        assert counter.read_text() == "xx"
        (mini_course / "kernels" / "extra.py").write_text("VALUE = 1\n")
        page(mini_course, session)
        assert counter.read_text() == "xxx"
    finally:
        session.close()


def test_a_figure_is_the_same_bytes_from_another_process_folder_and_hash_seed(mini_course, tmp_path):
    code = (
        "import numpy as np\nimport matplotlib.pyplot as plt\nx = np.linspace(0, 3, 50)\n"
        "fig, ax = plt.subplots()\nax.plot(x, np.exp(-x), label='decay')\nax.legend()\nax.set_xlabel('t')"
    )
    put(mini_course, cell(code) + "\n" + cell("sorted({'b', 'a'})"))
    other = tmp_path / "elsewhere" / "course"
    shutil.copytree(mini_course, other)
    pages = []
    for course, seed in ((mini_course, "1"), (other, "2")):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        out = tmp_path / f"site-{seed}"
        command = [sys.executable, str(REPO / "build.py"), "--root", str(course), "build", "--out", str(out)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        pages.append((out / "second.html").read_bytes())
    assert pages[0] == pages[1]
    assert pages[0].count(b"<svg ") == 1 and b"['a', 'b']" in pages[0]


def test_a_cell_showing_megabytes_of_html_is_refused_at_its_line(mini_course):
    put(mini_course, cell("class Big:\n    def _repr_html_(self):\n        return '<p>x</p>' * 300_000\nBig()"))
    assert problems(mini_course) == [
        "lessons/02-second.md:13: code cell shows 2,400,000 characters of HTML and figures, more than the "
        "2,000,000 a page may hold\n    hint: plot fewer points, or show a summary of the data"
    ]


def test_a_second_command_line_build_runs_no_cell_and_a_package_change_runs_them_again(mini_course, tmp_path, capsys):
    counter = tmp_path / "runs.txt"
    put(mini_course, cell(f"open({str(counter)!r}, 'a').write('x')\nprint('ran')"))
    for expected in ("x", "x"):
        assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
        assert counter.read_text() == expected
    (mini_course / "kernels" / "extra.py").write_text("VALUE = 1\n")
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    assert counter.read_text() == "xx"


def test_a_cell_runs_in_its_page_folder_and_reads_the_course_s_files(mini_course):
    put(mini_course, cell("open('../course.yaml').readline()"))
    assert """<pre class="cell-text" tabindex="0">'title: Mini course\\n'</pre>""" in page(mini_course)


def test_what_cells_import_from_outside_the_course_is_not_timed_as_a_cell(mini_course, tmp_path, monkeypatch):
    """A cell's import of an installed package (matplotlib, on a busy machine) counts against the import limit,
    not the cell's: the module sleeps past the cell limit, so timing it as the cell fails however fast the machine."""
    installed = tmp_path / "installed"
    installed.mkdir()
    (installed / "slow_to_import.py").write_text("import time\ntime.sleep(1.5)\nVALUE = 42\n")
    monkeypatch.syspath_prepend(str(installed))  # the worker is a fork of this process: it has the same path
    yaml = mini_course / "course.yaml"
    yaml.write_text(yaml.read_text().replace("seconds: 120", "seconds: 1\n  import_seconds: 600"))
    put(mini_course, cell("import slow_to_import\nslow_to_import.VALUE"))
    assert '<pre class="cell-text" tabindex="0">42</pre>' in page(mini_course)
