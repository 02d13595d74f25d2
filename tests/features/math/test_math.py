"""Math: Temml's MathML for the constructs latex2mathml got wrong, numbered equations and their references."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading

import pytest
from helpers import REPO

from coursegen.errors import ContentError
from coursegen.features.math import temml
from coursegen.features.math.primes import unscript_primes
from coursegen.features.math.temml import convert_all
from coursegen.parallel import can_fork, parallel_map
from coursegen.pipeline import BuildOptions, build_site


def mathml(latex: str, display: bool = False) -> str:
    ok, text = convert_all([(latex, display)])[0]
    assert ok, text
    return text


def put(course, text: str) -> None:
    """Replace the mini course's 'Text.' paragraph in lesson 2 (unit 2) with `text`."""
    lesson = course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", text))


def second_page(course) -> str:
    return build_site(course, BuildOptions(jobs=1)).outputs["second.html"].decode()


def problems_of(course) -> list[str]:
    with pytest.raises(ContentError) as caught:
        build_site(course, BuildOptions(jobs=1))
    return [p.format() for p in caught.value.problems]


# ---- the constructs of issue 41 ---------------------------------------------------------


def test_a_prime_is_a_prime_beside_its_letter_not_an_accent_or_a_speck(mini_course):
    # Raised again as a script, the math font's prime (drawn high already, no `ssty` variant) was a speck.
    put(mini_course, "$f'(x) + f''(x)$ and $\\frac{f''(r)}{2f'(r)}$")
    page = second_page(mini_course)
    assert re.search(r"<mrow><mi>f</mi><mo[^>]*>′</mo></mrow>", page)
    assert re.search(r"<mrow><mi>f</mi>(<mo[^>]*>′</mo>){2}</mrow>", page)
    assert "<mover" not in page and "<msup" not in page


@pytest.mark.parametrize(
    ("latex", "shape"),
    [
        ("f'^2", r"<msup><mrow><mi>f</mi><mo[^>]*>′</mo></mrow><mn>2</mn></msup>"),  # f′ squared
        ("f'_1", r"<mrow><msub><mi>f</mi><mn>1</mn></msub><mo[^>]*>′</mo></mrow>"),  # f₁′
        ("(a+b)'", r"<mrow><mrow><mo[^>]*>\(</mo>.*<mo[^>]*>\)</mo></mrow><mo[^>]*>′</mo></mrow>"),
        ("y^\\prime", r"<mrow><mi>y</mi><mo[^>]*>′</mo></mrow>"),
        ("e^{x'}", r"<msup><mi>e</mi><mrow><mi>x</mi><mo[^>]*>′</mo></mrow></msup>"),  # a prime inside a script stays
    ],
)
def test_primes_leave_the_superscript_and_what_else_it_holds_stays_there(latex, shape):
    assert re.fullmatch(f"<math>{shape}</math>", unscript_primes(mathml(latex)))


def test_a_formula_without_primes_is_left_byte_for_byte():
    for latex in ("x^2 + e^{i\\pi}", "\\sum_{k=1}^n k^{2}", "a^{b^{c}}"):
        assert unscript_primes(mathml(latex)) == mathml(latex)


def test_aligned_is_a_table_of_rows_with_no_ampersand_left():
    out = mathml(r"\begin{aligned} a &= b \\ c &= d \end{aligned}", True)
    assert "<mtable" in out and out.count("<mtr>") == 2 and "&amp;" not in out and "&" not in out


def test_boxed_draws_a_border():
    assert re.search(r'<mrow[^>]*style="[^"]*border:1px solid', mathml(r"\boxed{x = 1}", True))


def test_temmls_styles_reach_the_page_through_math_css_not_style_attributes(mini_course):
    """The pages' policy (style-src 'self') blocks style attributes: \\boxed's border would vanish."""
    put(mini_course, "$$\\boxed{x = 1}$$")
    outputs = build_site(mini_course, BuildOptions(jobs=1)).outputs
    page = outputs["second.html"].decode()
    assert ' style="' not in page and 'data-tml-style="padding:3pt;border:1px solid;"' in page
    sheet = next(data.decode() for name, data in outputs.items() if re.fullmatch(r"assets/math\.\w+\.css", name))
    assert '[data-tml-style="padding:3pt;border:1px solid;"] { padding:3pt;border:1px solid; }' in sheet


def test_a_limit_in_display_math_goes_under_lim():
    assert re.search(
        r"<munder><mi>lim</mi><mrow><mi>x</mi><mo>→</mo><mn>0</mn></mrow></munder>", mathml(r"\lim_{x\to 0} f(x)", True)
    )


def test_a_leading_minus_is_a_prefix_operator():
    assert '<mo form="prefix" stretchy="false">−</mo><mi>∞</mi>' in mathml(r"(-\infty, 0)")


def test_label_is_accepted_in_display_math(mini_course):
    put(mini_course, "$$x = 1 \\label{one}$$\n\nSee {eq}`one`.")
    page = second_page(mini_course)
    assert 'id="eq-one"' in page and "\\label" not in page and '<a class="eqref" href="#eq-one">(2.1)</a>' in page


def test_a_formula_temml_refuses_is_an_error_at_its_line_with_temmls_message(mini_course):
    put(mini_course, "Fine.\n\nA $\\frac{1}{2$ here and $\\nosuchcommand$.")
    found = problems_of(mini_course)
    assert found == [
        "lessons/02-second.md:14: cannot read math '\\frac{1}{2': "
        "Unexpected end of input in a macro argument, expected '}'",
        "lessons/02-second.md:14: cannot read math '\\nosuchcommand': Unsupported function name: \\nosuchcommand",
    ]


# ---- numbered equations ------------------------------------------------------------------


NUMBERED = """$$
x_{n+1} = x_n - \\frac{f(x_n)}{f'(x_n)}
$$ (newton)

```{math}
:label: second-order
f''(x) > 0
```

$$\\lim_{h\\to 0} \\frac{f(x+h)-f(x)}{h} \\label{derivative}$$

$$y = 1$$

Step {eq}`newton`, then {eq}`derivative`; inside math, $\\eqref{second-order}$ and $\\ref{newton}$."""


def test_labelled_equations_are_numbered_per_unit_and_references_link_to_them(mini_course):
    put(mini_course, NUMBERED)
    page = second_page(mini_course)
    numbers = re.findall(
        r'<div class="math block numbered" id="([^"]+)" tabindex="0" role="group" aria-label="Equation [\d.]+">.*?'
        r'<span class="eq-number">\(([^)]+)\)</span>',
        page,
        re.S,
    )
    assert numbers == [("eq-newton", "2.1"), ("eq-second-order", "2.2"), ("eq-derivative", "2.3")]
    assert page.count('class="math block" tabindex="0"') == 1  # the unlabelled one has no number
    assert '<a class="eqref" href="#eq-newton">(2.1)</a>' in page
    assert '<a class="eqref" href="#eq-derivative">(2.3)</a>' in page
    assert '<mtext><a class="eqref" href="#eq-second-order">(2.2)</a></mtext>' in page  # \eqref
    assert '<mtext><a class="eqref" href="#eq-newton">2.1</a></mtext>' in page  # \ref: no parentheses


def test_an_unknown_label_is_an_error_at_its_line_with_a_did_you_mean(mini_course):
    put(mini_course, "$$a = b$$ (newton)\n\nSee {eq}`nwton` and $\\eqref{newtn}$.")
    assert problems_of(mini_course) == [
        "lessons/02-second.md:14: '\\eqref{newtn}' names no equation of this page\n    hint: did you mean 'newton'?",
        "lessons/02-second.md:14:5: {eq} 'nwton' names no equation of this page\n    hint: did you mean 'newton'?",
    ]


def test_a_label_defined_twice_is_an_error_at_both_lines(mini_course):
    put(mini_course, "$$a = b$$ (same)\n\n```{math}\n:label: same\nc = d\n```")
    assert problems_of(mini_course) == [
        "lessons/02-second.md:12: equation label 'same' is defined twice (again at line 14)",
        "lessons/02-second.md:14: equation label 'same' is defined twice (first at line 12)",
    ]


def test_an_equation_of_another_unit_shows_its_number_and_its_label_is_checked_as_links_are(mini_course):
    first = mini_course / "lessons" / "01-first.md"
    first.write_text(first.read_text() + "\n$$E = mc^2$$ (energy)\n")
    put(mini_course, "As in {eq}`01-first.md#energy`.")
    page = second_page(mini_course)
    assert '<a class="eqref" href="first.html#eq-energy">(1.1)</a>' in page  # filled after linking
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("#energy", "#enrgy"))
    assert problems_of(mini_course) == [
        "lessons/02-second.md:12: link to '#eq-enrgy' in 'first', which has no such anchor\n"
        "    hint: did you mean 'eq-energy'?"
    ]


# ---- the converter: packaged, per process ----------------------------------------------------


def test_a_build_inside_a_running_event_loop_converts_its_formulas(mini_course):
    """A notebook or Playwright's sync API runs an asyncio loop in the calling thread."""
    import asyncio

    put(mini_course, "$$f'(x)$$")

    async def build() -> str:
        return second_page(mini_course)

    assert "′</mo></mrow>" in asyncio.run(build())
    assert threading.active_count() == 1  # the helper thread ended with its call


def test_a_process_that_converted_inside_an_event_loop_exits_cleanly():
    """Freeing the converter at the interpreter's teardown crashed such a process (exit status 139,
    all tests passed): a pytest run whose first formula came from a Playwright test."""
    code = (
        "import asyncio\nfrom coursegen.features.math.temml import convert_all\n"
        "async def main():\n    assert convert_all([('x^2', False)])[0][0]\nasyncio.run(main())\n"
    )
    ended = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert ended.returncode == 0, ended.stderr


def test_the_vendored_temml_is_the_pinned_npm_packages_file():
    vendored = REPO / "coursegen/features/math/vendor/temml.min.js"
    package = REPO / "node_modules/temml"
    pinned = json.loads((REPO / "package.json").read_text())["devDependencies"]["temml"]
    assert json.loads((package / "package.json").read_text())["version"] == pinned
    assert vendored.read_bytes() == (package / "dist/temml.min.js").read_bytes()
    assert f"Temml {pinned} (MIT)" in (vendored.parent / "temml.LICENSE.txt").read_text()


def test_converting_starts_no_thread_so_the_build_can_still_fork():
    mathml("x")
    assert threading.active_count() == 1 and can_fork()


def test_forked_workers_make_their_own_converter_after_the_parent_used_one():
    formulas = [f"x^{{{n}}} + f'(x)" for n in range(40)]
    expected = [mathml(latex) for latex in formulas]  # the parent's converter exists before the fork
    assert parallel_map(mathml, formulas, jobs=2) == expected
    assert list(temml._CONVERTERS) == [os.getpid()]  # the workers' own stayed in theirs


def test_a_fork_never_frees_the_converter_it_inherited(mini_course, sample_course):
    """A build's session, dropped, must not take the converter with it into a fork's garbage: the author-code
    worker forked for the next build would free an isolate whose thread it has not (a hang, or SIGABRT)."""
    put(mini_course, "$$x = 1$$")
    second_page(mini_course)  # a session that converted a formula, then dropped
    assert build_site(sample_course, BuildOptions(jobs=1)).outputs  # its {calc} worker is a fork of this process


def test_an_author_code_worker_forked_after_v8_keeps_its_memory_cap_and_works(tmp_path):
    """V8 reserves a terabyte of address space, which a fork inherits: the cap (RLIMIT_AS) must not count it."""
    import builtins

    from coursegen.author_code import AuthorCode, Limits

    mathml("x")
    assert can_fork()  # the worker is a fork of this process, V8's reservation and all
    runner, small = AuthorCode(), Limits(seconds=5, memory_mb=512)
    try:
        with pytest.raises(MemoryError):
            runner.call(small, tmp_path, builtins.exec, "bytearray(1 << 30)")  # 1 GiB: beyond the cap
        # 64 MiB: a new mapping, refused if the cap counted the inherited terabyte
        assert runner.call(small, tmp_path, builtins.eval, "len(bytearray(64 << 20))") == 64 << 20
    finally:
        runner.close()
