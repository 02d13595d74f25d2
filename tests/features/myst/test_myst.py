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
    assert (
        f'<aside class="callout callout-{look}" aria-label="{title}">\n<p class="callout-title">{title}</p>\n' in html
    )
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


# ---- tabs ---------------------------------------------------------------------------------


def test_a_tab_set_holds_each_label_above_its_content(mini_course):
    put(
        mini_course,
        "````{tab-set}\n```{tab-item} Python\nIn *Python*.\n```\n```{tab-item} R\n:selected:\nIn R.\n```\n````",
    )
    html = page(mini_course)
    assert (
        '<div class="tab-set" data-tab-set>\n'
        '<div class="tab-item" data-tab-item>\n<p class="tab-label" data-tab-label>Python</p>\n'
        '<div class="tab-panel" data-tab-panel>\n<p>In <em>Python</em>.</p>\n</div>\n</div>\n'
        '<div class="tab-item" data-tab-item data-tab-selected>\n<p class="tab-label" data-tab-label>R</p>\n'
        '<div class="tab-panel" data-tab-panel>\n<p>In R.</p>\n</div>\n</div>\n</div>\n'
    ) in html


def test_tab_mistakes_are_located(mini_course):
    put(
        mini_course,
        "::::{tab-set}\nStray text.\n:::{tab-item}\nNo label.\n:::\n::::\n\n:::{tab-item} Alone\nText.\n:::\n\n"
        "```{tab-set}\n```\n",
    )
    found = "\n".join(problems(mini_course))
    path = "lessons/02-second.md"
    assert f"{path}:{line_of(mini_course, 'Stray')}: only '{{tab-item}}' blocks go inside a '{{tab-set}}'" in found
    assert f"{path}:{line_of(mini_course, ':::{tab-item}')}: '{{tab-item}}' needs a label" in found
    assert f"{path}:{line_of(mini_course, 'Alone')}: '{{tab-item}}' outside a '{{tab-set}}'" in found
    assert f"{path}:{line_of(mini_course, '```{tab-set}')}: '{{tab-set}}' holds no '{{tab-item}}'" in found


# ---- include ------------------------------------------------------------------------------


def write(course, path: str, text: str) -> None:
    (course / path).parent.mkdir(parents=True, exist_ok=True)
    (course / path).write_text(text)


def test_an_included_file_is_parsed_in_the_page_as_markdown(mini_course):
    write(mini_course, "shared/notation.md", "## Notation\n\nWe write $x$.\n\n```{include} more.md\n```\n")
    write(mini_course, "shared/more.md", ":::{tip}\nFrom the nested file.\n:::")
    put(mini_course, "Before.\n```{include} ../shared/notation.md\n```\nAfter.")
    html = body(page(mini_course))
    assert '<h2 id="notation"' in html and "<math" in html and "From the nested file." in html
    assert html.index("Before.") < html.index("Notation") < html.index("From the nested file.") < html.index("After.")
    assert "{include}" not in html


def test_a_problem_in_an_included_file_is_reported_at_its_path_and_line(mini_course):
    write(
        mini_course,
        "shared/notation.md",
        "Fine.\n\n:::{note}\nSee [a](missing.md) and ::: nope\n:::\n\n```{dropdown}\nx\n```\n",
    )
    put(mini_course, "Before.\n\n```{include} /shared/notation.md\n```\n\nAfter [b](gone.md).")
    found = problems(mini_course, strict=True)
    joined = "\n".join(found)
    assert "shared/notation.md:7: warning: unknown directive '{dropdown}'" in joined
    assert "shared/notation.md:4: broken link 'missing.md'" in joined
    assert f"lessons/02-second.md:{line_of(mini_course, 'gone.md')}: broken link 'gone.md'" in joined


def test_include_mistakes_are_errors_at_the_directive(mini_course):
    write(mini_course, "shared/a.md", "```{include} b.md\n```\n")
    write(mini_course, "shared/b.md", "```{include} a.md\n```\n")
    write(mini_course, "shared/front.md", "---\ntitle: x\n---\nText.\n")
    put(
        mini_course,
        "```{include} ../shared/a.md\n```\n\n```{include} ../shared/absent.md\n```\n\n"
        "```{include} ../../outside.md\n```\n\n```{include} 01-first.md\n```\n\n```{include} ../shared/front.md\n```\n\n"
        "```{include} ../course.yaml\n```\n",
    )
    found = "\n".join(problems(mini_course))
    path = "lessons/02-second.md"
    assert "shared/b.md:1: '{include}' cycle: shared/a.md → shared/b.md → shared/a.md" in found
    assert f"{path}:{line_of(mini_course, 'absent')}: included file '../shared/absent.md' not found" in found
    assert f"{path}:{line_of(mini_course, 'outside')}: '../../outside.md' is outside the course" in found
    assert f"{path}:{line_of(mini_course, 'include} 01-first')}: 'lessons/01-first.md' is a unit of the course" in found
    assert "shared/front.md:1: an included file has no front matter" in found
    assert f"{path}:{line_of(mini_course, 'course.yaml')}: '../course.yaml' is not a Markdown file" in found


def test_an_include_inside_a_code_block_is_shown_not_included(mini_course):
    write(mini_course, "shared/n.md", "Included text.")
    put(mini_course, "````markdown\n```{include} ../shared/n.md\n```\n````")
    html = page(mini_course)
    assert "Included text." not in html and "{include}" in html


# ---- what other tools' authors type -------------------------------------------------------


def test_unknown_directives_are_warnings_naming_the_coursegen_way(mini_course):
    put(
        mini_course,
        "```{dropdown} More\nHidden.\n```\n\n:::{margin}\nSide.\n:::\n\n```{mystery}\nx\n```\n\n"
        "```{code-block} python\n:linenos:\nx = 1\n```",
    )
    found = warnings(mini_course)
    path = "lessons/02-second.md"
    assert (
        f"{path}:{line_of(mini_course, '{dropdown}')}: warning: unknown directive '{{dropdown}}': shown as a code block"
        "\n    hint: coursegen has no dropdown" in "\n".join(found)
    )
    assert f"{path}:{line_of(mini_course, '{margin}')}: warning: unknown directive '{{margin}}'" in "\n".join(found)
    mystery = next(p for p in found if "{mystery}" in p)
    assert mystery.startswith(f"{path}:{line_of(mini_course, '{mystery}')}: warning: unknown directive")
    assert "coursegen reads these directives: admonition, " in mystery and "tab-set" in mystery
    code = next(p for p in found if "{code-block}" in p)
    assert code == (
        f"{path}:{line_of(mini_course, '{code-block}')}: warning: '{{code-block}}' is MyST's code fence"
        "\n    hint: write ```python"
    )
    html = page(mini_course)
    assert '<code class="language-python">' in html and ":linenos:" not in html


def test_directives_other_features_read_are_not_warned(mini_course):
    put(mini_course, "```{math}\nx^2\n```\n\n:::{math}\ny^2\n:::")
    assert not any("directive" in p for p in warnings(mini_course))


def test_mkdocs_syntax_is_a_warning_naming_the_coursegen_way(mini_course):
    put(
        mini_course,
        '!!! warning "Mind the gap"\n    Indented text.\n\n??? note\n    Folded.\n\n=== "Python"\n    Code.\n\n'
        '--8<-- "shared/snippet.md"\n\n```python\n--8<-- "code.py"\n```',
    )
    found = "\n".join(warnings(mini_course))
    path = "lessons/02-second.md"
    assert (
        f"{path}:{line_of(mini_course, '!!!')}: warning: MkDocs admonition '!!! warning' is not coursegen syntax\n"
        "    hint: write ```{warning} Mind the gap, the text without its indent, then ```"
    ) in found
    assert f"{path}:{line_of(mini_course, '???')}: warning: MkDocs admonition '??? note'" in found
    assert "hint: coursegen has no folded callout: write ```{note}" in found
    assert (
        f"{path}:{line_of(mini_course, '===')}: warning: MkDocs content tab '=== \"Python\"' is not coursegen syntax\n"
        "    hint: write a ````{tab-set} holding a ```{tab-item} Python block per tab"
    ) in found
    assert (
        f"{path}:{line_of(mini_course, 'snippet.md')}: warning: MkDocs snippet '--8<--' is not coursegen syntax\n"
        "    hint: write ```{include} shared/snippet.md"
    ) in found
    assert f"{path}:{line_of(mini_course, 'code.py')}: warning: MkDocs snippet" in found


def test_strict_makes_the_warnings_errors(mini_course):
    put(mini_course, "```{dropdown}\nx\n```")
    assert any("unknown directive '{dropdown}'" in p for p in problems(mini_course, strict=True))


def test_a_link_of_an_included_file_checked_after_parsing_is_reported_at_its_include(mini_course):
    write(mini_course, "shared/a.md", "See [x](01-first.md#no-such-anchor).\n")
    put(mini_course, "Before.\n\n```{include} ../shared/a.md\n```\n")
    found = "\n".join(problems(mini_course))
    assert f"lessons/02-second.md:{line_of(mini_course, '{include}')}: link to '#no-such-anchor' in 'first'" in found


def test_includes_that_double_at_every_level_stop_at_the_size_limit(mini_course):
    write(mini_course, "shared/f0.md", "x" * 1000 + "\n")
    for level in range(1, 14):  # 2**13 copies of 1 KB: 8 MB, past the 5 MB of a source
        twice = f"```{{include}} f{level - 1}.md\n```\n\n" * 2
        write(mini_course, f"shared/f{level}.md", twice)
    put(mini_course, "```{include} ../shared/f13.md\n```")
    assert sum("the page's included text passes 5 MB" in p for p in problems(mini_course)) == 1


def test_a_directive_fence_with_a_space_before_its_name_is_still_warned(mini_course):
    put(mini_course, "``` {dropdown}\nx\n```")
    assert any("unknown directive '{dropdown}'" in p for p in warnings(mini_course))


# ---- a Jupyter Book page's `# Title` -------------------------------------------------------


def test_a_leading_h1_that_repeats_the_front_matter_title_is_not_shown_twice(mini_course):
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("---\n\n## Details", "---\n\n# Second  lesson\n\n## Details"))
    html = page(mini_course)
    assert html.count("<h1") == 1 and "<h1" not in body(html)


def test_a_leading_h1_of_other_words_stays(mini_course):
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("---\n\n## Details", "---\n\n# Another title\n\n## Details"))
    assert re.search(r"<h1[^>]*>Another title</h1>", body(page(mini_course)))


def test_a_page_without_front_matter_takes_its_title_from_its_leading_h1(mini_course):
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(
        lesson.read_text().split("---\n", 2)[2].replace("\n## Details", "# The *secant* `method`\n\n## Details", 1)
    )
    html = page(mini_course)
    assert re.search(r"<h1[^>]*>The secant method</h1>", html)
    assert "<title>The secant method" in html and "<h1" not in body(html)


def test_front_matter_without_a_title_takes_the_leading_h1_and_keeps_its_other_keys(mini_course):
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(
        lesson.read_text()
        .replace("title: Second lesson\n", "")
        .replace("---\n\n## Details", "---\n\n# Root finding\n\n## Details")
    )
    html = page(mini_course)
    assert re.search(r"<h1[^>]*>Root finding</h1>", html) and "Links back and forth." in html
    assert "<h1" not in body(html)


def test_a_page_with_neither_front_matter_nor_a_leading_h1_is_still_an_error(mini_course):
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().split("---\n", 2)[2])
    found = problems(mini_course)
    assert any(p.startswith("lessons/02-second.md:1: no YAML front matter") and "'# Title' heading" in p for p in found)


def test_a_notebook_straight_from_jupyter_takes_its_title_from_its_first_heading(mini_course):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    (mini_course / "lessons" / "02-second.md").unlink()
    first = mini_course / "lessons" / "01-first.md"
    first.write_text(first.read_text().replace("02-second.md", "02-second.ipynb"))
    notebook = new_notebook(
        cells=[
            new_markdown_cell("# Newton's method\n\n## Details\n\nBack to [the table](01-first.md)."),
            new_code_cell("1 + 1"),
        ]
    )
    nbformat.write(notebook, mini_course / "lessons" / "02-second.ipynb")
    html = page(mini_course)
    assert re.search(r"<h1[^>]*>Newton(&#39;|')s method</h1>", html) and "<h1" not in body(html)
