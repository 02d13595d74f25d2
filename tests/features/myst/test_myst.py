"""What Jupyter Book (MyST) and MkDocs authors type: admonitions, tabs and include read the coursegen way,
everything else a warning at its line naming what to write instead."""

from __future__ import annotations

import re

import pytest

from coursegen.errors import ContentError
from coursegen.pipeline import BuildOptions, build_site


def put(course, text: str) -> None:
    """Replace the mini course's 'Text.' paragraph in lesson 2 with `text`."""
    lesson = course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", text))


def line_of(course, needle: str) -> int:
    """Return the 1-based line of lesson 2 that holds `needle`."""
    lines = (course / "lessons" / "02-second.md").read_text().split("\n")
    return next(number for number, line in enumerate(lines, 1) if needle in line)


def build(course, strict: bool = False):
    return build_site(course, BuildOptions(jobs=1, strict=strict))


def page(course) -> str:
    return build(course).outputs["second.html"].decode()


def warnings(course) -> list[str]:
    return [p.format() for p in build(course).warnings]


def problems(course, strict: bool = False) -> list[str]:
    with pytest.raises(ContentError) as caught:
        build(course, strict)
    return [p.format() for p in caught.value.problems]


def body(html: str) -> str:
    return html[html.index('<div class="unit-body') :]


# ---- admonitions -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fence", "look", "title"),
    [
        ("```{note}", "note", "Note"),
        ("```{warning}", "caveat", "Warning"),
        ("```{tip}", "tip", "Tip"),
        ("```{important}", "key", "Important"),
        ("```{caution}", "caveat", "Caution"),
        ("```{seealso}", "aside", "See also"),
        ("```{admonition} Newton's method", "note", "Newton's method"),
        ("```{note} A title of its own", "note", "A title of its own"),
    ],
)
def test_a_myst_admonition_is_a_callout_with_its_kinds_look_and_title(mini_course, fence, look, title):
    put(mini_course, f"{fence}\nThe **body** is Markdown.\n```\n\nAfter.")
    html = page(mini_course)
    assert f'<aside class="callout callout-{look}" aria-label="{title}">\n<p class="callout-title">{title}</p>\n' in html
    assert "<p>The <strong>body</strong> is Markdown.</p>\n</aside>" in html
    assert "<p>After.</p>" in html and "language-{" not in html


def test_a_colon_fence_admonition_nests_and_takes_a_class(mini_course):
    put(
        mini_course,
        "::::{admonition} Outer\n:class: tip extra-wide\n\nOuter text.\n\n:::{warning}\nInner text.\n:::\n::::\n\nAfter.",
    )
    html = page(mini_course)
    outer = '<aside class="callout callout-tip extra-wide" aria-label="Outer">'
    inner = '<aside class="callout callout-caveat" aria-label="Warning">'
    assert outer in html and inner in html
    assert html.index(outer) < html.index("Outer text.") < html.index(inner) < html.index("Inner text.")
    assert html.count("</aside>") >= 2 and "<p>After.</p>" in html


def test_a_backtick_admonition_holds_a_code_fence_when_its_own_fence_is_longer(mini_course):
    put(mini_course, "````{note}\n```python\nx = 1\n```\n````")
    html = page(mini_course)
    assert re.search(r'<aside class="callout callout-note"[^>]*>\n<p class="callout-title">Note</p>\n<pre', html)


def test_problems_inside_an_admonition_are_at_their_own_line(mini_course):
    put(mini_course, "```{note}\nFirst.\n\nSee [nowhere](missing.md).\n```")
    line = line_of(mini_course, "missing.md")
    assert any(p.startswith(f"lessons/02-second.md:{line}: broken link 'missing.md'") for p in problems(mini_course))


def test_admonition_mistakes_are_located(mini_course):
    put(mini_course, "```{admonition}\nNo title.\n```\n\n```{note}\n:name: here\nText.\n```\n\n:::{tip}\nNever closed.")
    found = problems(mini_course, strict=True)
    assert f"lessons/02-second.md:{line_of(mini_course, '{admonition}')}: '{{admonition}}' needs a title" in "\n".join(
        found
    )
    assert any(
        p.startswith(f"lessons/02-second.md:{line_of(mini_course, ':name:')}: warning: unknown option ':name:'")
        for p in found
    )
    assert any(
        p.startswith(f"lessons/02-second.md:{line_of(mini_course, ':::{tip}')}: directive '{{tip}}' is never closed")
        for p in found
    )
