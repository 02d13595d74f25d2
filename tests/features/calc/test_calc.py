"""The {calc} role: numbers computed by the kernels, formatted, checked against the stated value."""

from __future__ import annotations

import math

import pytest
from helpers import REPO

import kernels
from coursegen.course_code import kernel_names
from coursegen.errors import ContentError
from coursegen.features.calc.evaluate import CalcError
from coursegen.features.calc.extension import compute, format_number, read_number, spec_from_stated
from coursegen.pipeline import build_site


def put(course, text: str) -> None:
    """Replace the mini course's 'Text.' paragraph in lesson 2 with `text`."""
    lesson = course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", text))


@pytest.fixture(scope="module")
def names():
    return kernel_names(REPO)


@pytest.mark.parametrize(
    "content, shown",
    [
        ("overflow.BF16_MAX_LOG | .2f | = 88.72", "88.72"),
        ("overflow.BF16_MAX_LOG | .2f nats", "88.72\u00a0nats"),
        ("overflow.BF16_MAX | sci:3", "3.39 × 10³⁸"),
        ("math.exp(80) | sci:2 | = 5.5 × 10³⁴", "5.5 × 10³⁴"),
        ("overflow.largest_safe_tile(-5)", "17"),
        ("sizes.kda_state(32, 128, 128) | ,d bytes", "1,048,576\u00a0bytes"),
        ("overflow.analyse(-5, 16)['margin_nats'] | .3g", "8.72"),
        ("-overflow.BF16_MAX_LOG | .1f", "\u221288.7"),
        ("overflow.BF16_MAX_LOG | = 88.7", "88.7"),
        ("math.exp(-20) | sci:2", "2.1 × 10⁻⁹"),
        ("overflow.reciprocal_profile_bf16(-5, 4).max() | sci:3", "4.84 × 10⁸"),
        ("2 ** 10 | , | = 1,024", "1,024"),
        ("overflow.reciprocal_profile_bf16(-5, 1) | sci:3", "1.48 × 10²"),
    ],
)
def test_a_role_shows_the_kernel_value_in_the_requested_format(names, content, shown):
    assert compute(content, names)[1] == shown


def test_the_shown_number_follows_the_kernel_not_a_copy(names):
    expected = f"{kernels.overflow.largest_safe_tile(-2.5)}"
    assert compute("overflow.largest_safe_tile(-2.5)", names)[1] == expected
    assert compute("overflow.BF16_MAX_LOG | .4f", names)[1] == f"{math.log(kernels.overflow.BF16_MAX):.4f}"


@pytest.mark.parametrize(
    "content, message, hint",
    [
        ("overflw.BF16_MAX", "unknown name 'overflw' in {calc}", "did you mean 'overflow'?"),
        ("overflow.BF16_MX", "module 'overflow' has no 'BF16_MX'", "did you mean 'BF16_MAX'?"),
        ("overflow.BF16_MAX +", "cannot read {calc} expression 'overflow.BF16_MAX +': invalid syntax", ""),
        (
            "overflow.largest_safe_tile(5)",
            "{calc} 'overflow.largest_safe_tile(5)' failed: ValueError: g_min must be a finite negative number; got 5",
            "",
        ),
        ("overflow.BF16_MAX | .2q", "bad {calc} format '.2q': Unknown format code 'q'", "sci:N"),
        ("overflow.BF16_MAX | sci:0", "bad {calc} format 'sci:0': sci needs 1 to 17 significant figures", ""),
        (
            "overflow.BF16_MAX_LOG | .2f | = 88.7",
            "{calc} 'overflow.BF16_MAX_LOG' gives 88.72, but the text states 88.7",
            "correct the stated number",
        ),
        ("overflow.BF16_MAX_LOG | = abc", "cannot read the stated number 'abc'", ""),
        ("overflow.analyse(-5, 16)", "{calc} 'overflow.analyse(-5, 16)' gives a dict, not a number", "pick one entry"),
        (
            "sizes.moe_params(10, 20, 8, 2)['totl']",
            "{calc} 'sizes.moe_params(10, 20, 8, 2)['totl']' failed: KeyError",
            "did you mean 'total'?",
        ),
        (" | .2f", "{calc} has no expression", ""),
        (
            "overflow.reciprocal_profile_bf16(-5, 2)",
            "{calc} 'overflow.reciprocal_profile_bf16(-5, 2)' gives a ndarray, not a number",
            "",
        ),
        ("1 | .2f | .3f", "{calc} has more than one format: '.3f'", ""),
    ],
)
def test_each_mistake_has_its_own_message(names, content, message, hint):
    with pytest.raises(CalcError) as caught:
        compute(content, names)
    assert caught.value.message.startswith(message)
    assert hint in caught.value.hint


@pytest.mark.parametrize(
    "content, refused",
    [
        ("__import__('os')", "unknown name '__import__'"),
        ("open('x')", "unknown name 'open'"),
        ("(1).__class__", "private name '__class__'"),
        ("overflow._check(1)", "private name '_check'"),
        ("overflow.np.save('x', 1)", "module 'overflow' has no 'np'"),
        ("overflow.reciprocal_profile_bf16(-5, 4).tofile('x')", "cannot use '.tofile' on a ndarray"),
        ("[x for x in ()]", "cannot use ListComp syntax"),
        ("lambda: 1", "cannot use Lambda syntax"),
        ("10 ** 10 ** 10", "exponent 10000000000 is too large"),
        ("'ab' * 3", "arithmetic works on numbers"),
        ("1j * 2", "cannot use the constant 1j"),
        ("1 << 2", "cannot use the operator LShift"),
        ("~1", "cannot use the operator Invert"),
        ("sizes.kda_state(*[1, 2, 3])", "calls cannot unpack arguments with * or **"),
        ("math.pi()", "can only call functions (of the course's package, or math), not math.pi"),
    ],
)
def test_expressions_cannot_reach_beyond_the_kernels(names, content, refused):
    with pytest.raises(CalcError, match=None) as caught:
        compute(content, names)
    assert refused in caught.value.message


@pytest.mark.parametrize(
    "stated, spec",
    [
        ("88.72", ".2f"),
        ("17", ".0f"),
        ("1,024", ",.0f"),
        ("5.5 × 10³⁴", "sci:2"),
        ("3.390e38", "sci:4"),
        ("12.5%", ".1f%"),
    ],
)
def test_a_stated_number_sets_the_displayed_precision(stated, spec):
    assert spec_from_stated(stated) == spec


@pytest.mark.parametrize(
    "text, value",
    [
        ("88.72", 88.72),
        ("\u22125", -5.0),
        ("1,048,576", 1048576.0),
        ("5.5 × 10³⁴", 5.5e34),
        ("2.1 × 10⁻⁹", 2.1e-9),
        ("3e8", 3e8),
    ],
)
def test_displayed_numbers_read_back_as_numbers(text, value):
    assert read_number(text) == pytest.approx(value, rel=1e-15)


def test_infinity_is_written_as_a_symbol():
    assert format_number(float("inf"), "sci:3") == "∞"


def test_a_lesson_role_renders_in_the_page_and_in_a_table(mini_course):
    put(
        mini_course,
        (
            "Ceiling {calc}`overflow.BF16_MAX_LOG | .2f nats | = 88.72`.\n\n"
            "| tile | ok |\n|---|---|\n| {calc}`overflow.largest_safe_tile(-5) \\| d \\| = 17` | yes |\n"
        ),
    )
    html = build_site(mini_course).outputs["second.html"].decode()
    assert '<span class="calc" data-calc="overflow.BF16_MAX_LOG">88.72\u00a0nats</span>' in html
    assert '<td><span class="calc" data-calc="overflow.largest_safe_tile(-5)">17</span></td>' in html


def test_a_wrong_stated_number_fails_the_build_at_its_line(mini_course):
    put(mini_course, "First line,\nthen {calc}`overflow.largest_safe_tile(-5) | = 18`.")
    with pytest.raises(ContentError) as caught:
        build_site(mini_course)
    assert (
        caught.value.problems[0]
        .format()
        .startswith(
            "lessons/02-second.md:13:6: {calc} 'overflow.largest_safe_tile(-5)' gives 17, but the text states 18"
        )
    )


def test_an_edited_kernel_is_reloaded_by_the_next_build(mini_course):
    put(mini_course, "Tile {calc}`kda.TILE`.")
    assert ">16</span>" in build_site(mini_course).outputs["second.html"].decode()
    kda = mini_course / "kernels" / "kda.py"
    kda.write_text(kda.read_text().replace("TILE = 16", "TILE = 32  # edited"))
    assert ">32</span>" in build_site(mini_course).outputs["second.html"].decode()


def computes_then_refuses(course, good: str, shown: str, bad: str, refusal: str) -> None:
    """Check that {calc}`good` renders `shown` in lesson 2, and that {calc}`bad` there fails with `refusal`."""
    put(course, "Value {calc}`" + good + "`.")
    assert f">{shown}</span>" in build_site(course).outputs["second.html"].decode()
    lesson = course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace(good, bad))
    with pytest.raises(ContentError, match=refusal):
        build_site(course)


def test_a_course_without_a_package_computes_with_math_and_names_no_module(mini_course):
    import shutil

    shutil.rmtree(mini_course / "kernels")
    computes_then_refuses(
        mini_course, "math.sqrt(2) | .3f | = 1.414", "1.414", "kda.TILE", "unknown name 'kda' in {calc}"
    )


def test_calc_sees_every_public_module_of_a_package_named_in_course_yaml(mini_course):
    import shutil

    shutil.rmtree(mini_course / "kernels")
    (mini_course / "tides").mkdir()
    (mini_course / "tides" / "__init__.py").write_text("")  # imports none of its modules
    (mini_course / "tides" / "moon.py").write_text("PERIOD_HOURS = 12.42\n")
    (mini_course / "tides" / "_private.py").write_text("SECRET = 1\n")
    config = mini_course / "course.yaml"
    config.write_text(config.read_text() + "python:\n  package: tides\n")
    computes_then_refuses(
        mini_course, "moon.PERIOD_HOURS * 2 | .2f | = 24.84", "24.84", "_private.SECRET", "unknown name '_private'"
    )


def test_calc_messages_name_the_course_package_by_its_own_name(mini_course):
    """A course whose package is `tides` is not told what "the kernels" compute."""
    import shutil

    shutil.rmtree(mini_course / "kernels")
    (mini_course / "tides").mkdir()
    (mini_course / "tides" / "__init__.py").write_text("")
    (mini_course / "tides" / "moon.py").write_text("PERIOD_HOURS = 12.42\n")
    config = mini_course / "course.yaml"
    config.write_text(config.read_text() + "python:\n  package: tides\n")
    put(mini_course, "Twice {calc}`moon.PERIOD_HOURS * 2 | .1f | = 24.9` hours.")
    with pytest.raises(ContentError) as caught:
        build_site(mini_course)
    problem = caught.value.problems[0]
    assert problem.message == "{calc} 'moon.PERIOD_HOURS * 2' gives 24.8, but the text states 24.9"
    assert problem.hint == "the course's package 'tides' computes 24.84; correct the stated number or the expression"
    assert "kernel" not in problem.format()


def test_an_unknown_role_is_an_error_listing_the_known_ones(mini_course):
    put(mini_course, "A {calcc}`1` here.")
    with pytest.raises(ContentError) as caught:
        build_site(mini_course)
    problem = caught.value.problems[0]
    assert problem.format().startswith("lessons/02-second.md:12:3: unknown role '{calcc}'")
    assert "did you mean 'calc'?" in problem.hint


def test_kernels_that_do_not_import_are_reported_at_the_role(mini_course):
    sizes = mini_course / "kernels" / "sizes.py"
    sizes.write_text("def broken(:\n" + sizes.read_text())
    put(mini_course, "Tile {calc}`kda.TILE`.")
    with pytest.raises(ContentError) as caught:
        build_site(mini_course)
    assert (
        caught.value.problems[0]
        .format()
        .startswith(
            "lessons/02-second.md:12:6: kernels/ cannot be imported: SyntaxError: invalid syntax (sizes.py, line 1)"
        )
    )


def test_an_unknown_name_that_looks_like_a_package_says_which_package_calc_reads(mini_course):
    """An author whose package folder is `flotante/` but who left course.yaml alone learns that the
    course's package is `kernels` unless `python: {package: …}` names another."""
    import shutil

    shutil.rmtree(mini_course / "kernels")
    (mini_course / "flotante").mkdir()
    (mini_course / "flotante" / "__init__.py").write_text("")
    (mini_course / "flotante" / "errores.py").write_text("EPS = 2.0 ** -52\n")
    put(mini_course, "Epsilon {calc}`flotante.errores.EPS | sci:2`.")
    with pytest.raises(ContentError) as caught:
        build_site(mini_course)
    problem = caught.value.problems[0]
    assert problem.message == "unknown name 'flotante' in {calc}"
    assert problem.hint == (
        "known names are: math; {calc} knows math and the modules of the course's package 'kernels' (the default); "
        "if 'flotante' is your package's folder, write python: {package: flotante} in course.yaml "
        "and name its modules directly"
    )


def test_a_package_name_written_before_its_module_is_told_to_go(names):
    with pytest.raises(CalcError) as caught:
        compute("kernels.overflow.BF16_MAX", names)
    assert caught.value.hint.endswith(
        "{calc} names the modules of the package 'kernels' directly: write {calc}`MODULE.NAME`"
    )


def test_a_near_miss_keeps_its_short_did_you_mean_hint(names):
    with pytest.raises(CalcError) as caught:
        compute("overflw.BF16_MAX", names)
    assert caught.value.hint.startswith("did you mean 'overflow'?") and "package" not in caught.value.hint
