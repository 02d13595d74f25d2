"""Numbered figures and tables, section labels, and {numref}/{ref}: in a page, across pages, and their errors."""

from __future__ import annotations

import json
import re

import pytest

from coursegen.errors import ContentError
from coursegen.features.search.index import ENTRY, FOLDER
from coursegen.pipeline import BuildOptions, build_site
from coursegen.session import Session
from coursegen.stages.directive_options import read_directive

SQUARE = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>\n'


def put(course, text: str, lesson: str = "02-second.md") -> None:
    """Replace the 'Text.' paragraph of lesson 2 with `text` (or append `text` to another lesson)."""
    file = course / "lessons" / lesson
    old = file.read_text()
    file.write_text(old.replace("Text.", text) if lesson == "02-second.md" else old + "\n" + text)


def page(course, name: str = "second.html", session=None) -> str:
    return build_site(course, BuildOptions(jobs=1), session).outputs[name].decode()


def problems_of(course, strict: bool = False) -> list[str]:
    with pytest.raises(ContentError) as caught:
        build_site(course, BuildOptions(jobs=1, strict=strict))
    return [p.format() for p in caught.value.problems]


@pytest.fixture
def course(mini_course):
    (mini_course / "media").mkdir(exist_ok=True)
    (mini_course / "media" / "square.svg").write_text(SQUARE)
    return mini_course


def figure(name: str = "fig-square", caption: str = "A black *square*.", extra: str = "") -> str:
    return f"```{{figure}} ../media/square.svg\n:name: {name}\n:alt: A black square.\n{extra}\n{caption}\n```"


# ---- figures ---------------------------------------------------------------------------------------


def test_a_figure_is_a_numbered_figure_with_its_caption_in_a_figcaption(course):
    put(course, figure(extra=":width: 320px\n") + "\n\n" + figure("fig-two", "Two.", ":width: 60%\n"))
    html = page(course)
    assert (
        '<figure class="figure numbered" id="fig-square">\n'
        '<img src="media/media-square.svg" alt="A black square." width="320" />'
        '<figcaption><span class="caption-number">Figure 2.1</span> A black <em>square</em>.</figcaption>\n'
        "</figure>"
    ) in html
    assert '<figure class="figure numbered" id="fig-two">' in html and 'data-width="60"' in html
    assert '<span class="caption-number">Figure 2.2</span> Two.' in html
    assert ' style="' not in html


def test_a_figure_s_legend_follows_its_caption_and_a_figure_without_a_name_has_no_number(course):
    put(course, "```{figure} ../media/square.svg\n:alt: Square.\n\nThe caption.\n\nA legend.\n```")
    html = page(course)
    assert '<figure class="figure">\n<img src="media/media-square.svg" alt="Square." />' in html
    assert "<figcaption>The caption.\n<p>A legend.</p>\n</figcaption>" in html


def test_numref_shows_the_number_and_ref_the_caption_both_linked(course):
    put(
        course,
        "See {numref}`fig-square`, {numref}`Fig. %s <fig-square>`, {numref}`Pic {number}: {name} <fig-square>`"
        " and {ref}`fig-square`, {ref}`this one <fig-square>`.\n\n" + figure(),
    )
    html = page(course)
    assert '<a class="numref" href="#fig-square">Figure 2.1</a>' in html
    assert '<a class="numref" href="#fig-square">Fig. 2.1</a>' in html
    assert '<a class="numref" href="#fig-square">Pic 2.1: A black square.</a>' in html
    assert '<a class="ref" href="#fig-square">A black square.</a>' in html
    assert '<a class="ref" href="#fig-square">this one</a>' in html


def test_numbers_follow_the_course_s_language(course):
    config = course / "course.yaml"
    config.write_text(config.read_text() + "language: de\n")
    put(course, "{numref}`fig-square`\n\n" + figure())
    assert '<a class="numref" href="#fig-square">Abbildung 2.1</a>' in page(course)


# ---- tables ---------------------------------------------------------------------------------------


TABLE = "```{table} Speeds\n:name: tab-speeds\n\n| a | b |\n|---|---|\n| 1 | 2 |\n```"
LIST_TABLE = "```{list-table} Listed\n:header-rows: 1\n:name: tab-listed\n\n* - H1\n  - H2\n* - x\n  - *y*\n```"


def test_a_table_fence_captions_and_numbers_its_markdown_table(course):
    put(course, TABLE + "\n\n" + LIST_TABLE + "\n\nSee {numref}`tab-listed`.")
    html = page(course)
    assert (
        '<table id="tab-speeds">\n<caption><span class="caption-number">Table 2.1</span> Speeds</caption>\n<thead>'
        in html
    )
    assert (
        '<table id="tab-listed">\n<caption><span class="caption-number">Table 2.2</span> Listed</caption>\n'
        "<thead>\n<tr>\n<th>H1</th>\n<th>H2</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>x</td>\n<td><em>y</em></td>\n"
        "</tr>\n</tbody>\n</table>"
    ) in html
    assert '<a class="numref" href="#tab-listed">Table 2.2</a>' in html


def test_figures_and_tables_are_counted_apart(course):
    put(course, TABLE + "\n\n" + figure())
    html = page(course)
    assert "Table 2.1</span>" in html and "Figure 2.1</span>" in html


# ---- sections -------------------------------------------------------------------------------------


def test_a_label_before_a_heading_or_an_id_after_it_names_the_section(course):
    put(course, "(why-it-works)=\n## Why it works\n\nA.\n\n## The cost {#cost}\n\n{ref}`why-it-works`, {ref}`cost`.")
    html = page(course)
    assert '<h2 id="why-it-works">Why it works</h2>' in html and "(why-it-works)=" not in html
    assert '<h2 id="cost">The cost</h2>' in html and "{#cost}" not in html
    assert '<a class="ref" href="#why-it-works">Why it works</a>, <a class="ref" href="#cost">The cost</a>' in html
    assert '<a href="#cost">The cost</a>' in html  # the table of contents uses the label too


# ---- across pages ---------------------------------------------------------------------------------


def test_a_figure_of_another_unit_is_named_with_its_number_and_caption(course):
    put(course, figure("fig-one", "First."), lesson="01-first.md")
    put(
        course,
        "As {numref}`01-first.md#fig-one` shows ({ref}`01-first.md#fig-one`, {numref}`F%s <01-first.md#fig-one>`).",
    )
    html = page(course)
    assert '<a class="numref" href="first.html#fig-one">Figure 1.1</a>' in html
    assert '<a class="ref" href="first.html#fig-one">First.</a>' in html
    assert '<a class="numref" href="first.html#fig-one">F1.1</a>' in html
    assert "data-xref" not in html


def test_a_renumbered_figure_renders_again_the_pages_that_name_it(course):
    put(course, figure("fig-one", "First."), lesson="01-first.md")
    put(course, "See {numref}`01-first.md#fig-one`.")
    session = Session()
    session.trust_watcher()
    assert '<a class="numref" href="first.html#fig-one">Figure 1.1</a>' in page(course, session=session)
    first = course / "lessons" / "01-first.md"
    # A figure before it, below every heading: lesson 1's headings (and their lines) stay as they were.
    one = figure("fig-one", "First.")
    first.write_text(first.read_text().replace(one, figure("fig-zero", "Zero.") + "\n\n" + one))
    session.note_changes(course, ["lessons/01-first.md"])  # as serve's watcher reports it: lesson 2 is untouched
    assert '<a class="numref" href="first.html#fig-one">Figure 1.2</a>' in page(course, session=session)
    assert "index.html" not in session.records.render.rerendered  # the pages that link to lesson 1, no more


def indexed_text(outputs: dict, url: str) -> str:
    """Return what the search index holds of the page at `url` (its sections' titles and text)."""
    entry = json.loads(outputs[ENTRY])
    pages = [page for name, _ in entry["fragments"] for page in json.loads(outputs[f"{FOLDER}/{name}"])]
    return " ".join(f"{title} {text}" for page in pages if page["url"] == url for _, title, text in page["sections"])


def test_search_indexes_a_reference_to_another_unit_by_what_the_page_shows(course):
    put(course, figure("fig-one", "First."), lesson="01-first.md")
    put(course, "As {numref}`01-first.md#fig-one` shows.")
    session = Session()
    session.trust_watcher()
    assert "As Figure 1.1 shows." in indexed_text(
        build_site(course, BuildOptions(jobs=1), session).outputs, "second.html"
    )
    first = course / "lessons" / "01-first.md"
    one = figure("fig-one", "First.")
    first.write_text(first.read_text().replace(one, figure("fig-zero", "Zero.") + "\n\n" + one))
    session.note_changes(course, ["lessons/01-first.md"])  # lesson 2 is untouched: its index entry is made again
    assert "As Figure 1.2 shows." in indexed_text(
        build_site(course, BuildOptions(jobs=1), session).outputs, "second.html"
    )


# ---- errors ---------------------------------------------------------------------------------------


def test_an_unknown_label_is_an_error_at_its_place_with_a_did_you_mean(course):
    put(course, figure() + "\n\nSee {numref}`fig-sqare` and {ref}`nothing-like-it`.")
    assert problems_of(course) == [
        "lessons/02-second.md:19:5: {numref} 'fig-sqare' names no figure, table or section label of this page\n"
        "    hint: did you mean 'fig-square'?",
        "lessons/02-second.md:19:29: {ref} 'nothing-like-it' names no figure, table or section label of this page\n"
        "    hint: name one with :name: (a figure, a table) or (label)= (a section), or another page's: 03-x.md#label",
    ]


def test_a_label_defined_twice_is_an_error_at_both_places(course):
    put(course, figure("same") + "\n\n" + TABLE.replace("tab-speeds", "same"))
    assert problems_of(course) == [
        "lessons/02-second.md:13: label 'same' is defined twice (again at line 20)\n    hint: rename one of them",
        "lessons/02-second.md:20: label 'same' is defined twice (first at line 13)\n    hint: rename one of them",
    ]


def test_a_label_of_another_unit_that_does_not_exist_is_an_error_at_the_reference(course):
    put(course, figure("fig-one", "First."), lesson="01-first.md")
    put(course, "See {numref}`01-first.md#fig-onе` and {ref}`01-frist.md#fig-one`.")
    assert problems_of(course) == [
        "lessons/02-second.md:12:5: {numref} 'fig-onе' names no figure, table or section label of lessons/01-first.md\n"
        "    hint: did you mean 'fig-one'?",
        "lessons/02-second.md:12:39: {ref} '01-frist.md#fig-one': no source file 'lessons/01-frist.md'\n"
        "    hint: did you mean '01-first.md'?",
    ]


def test_numref_to_a_section_is_an_error_saying_to_use_ref(course):
    put(course, "(sec)=\n## Sec\n\n{numref}`sec`")
    assert problems_of(course) == [
        "lessons/02-second.md:15:1: {numref} 'sec' names a section, which has no number\n    hint: write {ref}`sec`"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            figure(extra=":align: center\n"),
            "lessons/02-second.md:15: unknown option ':align:' of a {figure} fence\n"
            "    hint: did you mean ':alt:'? known options are: :alt:, :name:, :width:",
        ),
        (
            "```{figure}\n:alt: x\n\nC.\n```",
            "lessons/02-second.md:12: a {figure} fence names no image\n"
            "    hint: write the image's path after it: ```{figure} images/plot.svg",
        ),
        (
            figure(extra=":width: 33%\n"),
            "lessons/02-second.md:15: figure width '33%' is not a size the figure can take\n"
            "    hint: write pixels (320px) or a percentage in steps of 5 (60%)",
        ),
        (
            figure("fig x"),
            "lessons/02-second.md:13: figure label 'fig x' is not a valid name\n"
            "    hint: a label is letters, digits, '-', '_', ':' or '.', e.g. fig-basins",
        ),
        (
            "```{figure} ../media/missing.svg\n:alt: x\n\nC.\n```",
            "lessons/02-second.md:12: image '../media/missing.svg' not found (looked for 'media/missing.svg')",
        ),
        (
            "```{table} T\nJust words.\n```",
            "lessons/02-second.md:12: a {table} fence holds one Markdown table and nothing else\n"
            "    hint: put the table's rows between the fence's lines",
        ),
        (
            "```{list-table} T\n* - a\n  - b\n* - c\n* - d\n  - e\n```",
            "lessons/02-second.md:15: this row of the {list-table} has 1 cells; the others have 2\n"
            "    hint: give every row the same number of cells",
        ),
        (
            "```{list-table} T\nNot a list.\n```",
            "lessons/02-second.md:12: a {list-table} holds one list of rows, each a list of cells\n"
            "    hint: write '* - a' then '  - b' for a row of two cells",
        ),
        (
            "```{list-table} T\n:header-rows: one\n* - a\n```",
            "lessons/02-second.md:13: :header-rows: 'one' is not a number of rows\n    hint: write :header-rows: 1",
        ),
        (
            "(lonely)=\n\nA paragraph.",
            "lessons/02-second.md:12: the label '(lonely)=' is not followed by a heading\n"
            "    hint: put it on the line just before a heading; a figure or a table takes :name: instead",
        ),
        (
            figure("details"),
            "lessons/02-second.md:13: label 'details' is also the anchor of the heading at line 6\n"
            "    hint: rename the figure's label, e.g. fig-details",
        ),
        (
            "```{figure} ../media/square.svg\n:name: fig-x\n:alt: x\n```",
            "lessons/02-second.md:12: figure 'fig-x' has no caption to number\n"
            "    hint: write the caption as the fence's content",
        ),
    ],
)
def test_each_mistake_in_a_directive_is_an_error_at_its_line(course, text, expected):
    put(course, text)
    assert problems_of(course) == [expected]


def test_a_figure_without_alt_text_is_a_warning(course):
    put(course, "```{figure} ../media/square.svg\n\nC.\n```")
    warnings = [w.format() for w in build_site(course, BuildOptions(jobs=1)).warnings]
    assert warnings == [
        "lessons/02-second.md:12: warning: figure without :alt: text\n"
        "    hint: describe the image for those who cannot see it: :alt: …"
    ]


# ---- the shared options reader -----------------------------------------------------------------------


def test_directive_options_are_read_from_option_lines_or_a_yaml_block_with_their_lines():
    lines = read_directive("{figure} a.png", ":name: x\n:width: 50%\n\nCaption.", 10)
    assert (lines.name, lines.argument, lines.body, lines.body_line) == ("figure", "a.png", "Caption.", 14)
    assert {key: (o.value, o.line) for key, o in lines.options.items()} == {"name": ("x", 11), "width": ("50%", 12)}
    block = read_directive("{table} T", "---\nname: t\nheader-rows: 1\n---\n| a |", 3)
    assert {key: (o.value, o.line) for key, o in block.options.items()} == {"name": ("t", 5), "header-rows": ("1", 6)}
    assert (block.body, block.body_line, block.problems) == ("| a |", 8, ())
    assert read_directive("{table} T", "---\nname: t\n", 3).problems == (
        (4, "the options' '---' block is never closed", "end it with a line '---'"),
    )
    assert re.search("tab", read_directive("{table}", "---\n\tname: t\n---\n", 1).problems[0][1])
