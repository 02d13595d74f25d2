"""Citations (issue 41): course.yaml's `bibliography:`, the {cite} roles, the References section, their errors."""

from __future__ import annotations

import contextlib
import re

import pytest

from coursegen.errors import ContentError
from coursegen.pipeline import BuildOptions, build_site
from coursegen.session import Session

BIB = """\
@misc{raschka-k3,
  author = {Raschka},
  title = {Commentary on {K3}},
  note = {Secondary source},
}

@techreport{k3-report,
  title = {Kimi K3 technical report},
}

@article{knuth,
  author = {Donald E. Knuth and Leslie Lamport},
  title = {Literate programming},
  journal = {The Computer Journal},
  year = {1984},
}

@book{unused,
  author = {Nobody},
  title = {Never cited},
}
"""


def cite_course(course, text: str, bib: str = BIB, config: str = "bibliography: [references.bib]\n"):
    """Put `text` in lesson 2 of the mini course, with `bib` as references.bib and `config` added to course.yaml."""
    (course / "references.bib").write_text(bib)
    with (course / "course.yaml").open("a") as out:
        out.write(config)
    lesson = course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", text))
    return course


def page(course, session=None) -> str:
    return build_site(course, BuildOptions(jobs=1), session).outputs["second.html"].decode()


def problems_of(course) -> list[str]:
    with pytest.raises(ContentError) as caught:
        build_site(course, BuildOptions(jobs=1))
    return [p.format() for p in caught.value.problems]


def references(html: str, back_links: bool = False) -> str:
    """Return the page's References section (without the links back to the citations unless `back_links`)."""
    listed = html[html.index('<section class="references"') : html.index("</section>", html.index("references-list"))]
    return (
        listed
        if back_links
        else re.sub(r' (<a class="cite-back"[^>]*>[^<]*</a>|<span class="cite-backs">.*?</a></span>)', "", listed)
    )


def links(html: str) -> list[str]:
    """Return each citation link's text, in page order."""
    return re.findall(r'<a href="#bib-[^"]*" aria-describedby="[^"]*" id="[^"]*">([^<]*)</a>', html)


def test_author_year_citations_link_to_a_references_section_of_the_works_cited(mini_course):
    html = page(cite_course(mini_course, "As {cite:t}`raschka-k3` says {cite:p}`k3-report, knuth`; {cite}`knuth`."))
    assert links(html) == ["Raschka (n.d.)", "Kimi K3 technical report, n.d.", "Knuth and Lamport, 1984"] + [
        "Knuth and Lamport, 1984"
    ]
    assert '(<span class="cite">' in html and "</span>; <span" in html  # one pair of parentheses, keys by ';'
    listed = references(html)
    assert '<h2 id="references">References</h2>' in listed
    assert re.findall(r'<li id="bib-([^"]*)"', listed) == ["k3-report", "knuth", "raschka-k3"]  # sorted, cited only
    assert "Never cited" not in html


def test_a_reference_gives_only_the_facts_its_entry_has(mini_course):
    html = page(cite_course(mini_course, "See {cite:p}`k3-report,raschka-k3,knuth`."))
    listed = references(html)
    assert '<li id="bib-k3-report"><cite>Kimi K3 technical report</cite> (n.d.).</li>' in listed
    assert '<li id="bib-raschka-k3">Raschka (n.d.). <cite>Commentary on K3</cite>. Secondary source.</li>' in listed
    assert (
        "Donald E. Knuth and Leslie Lamport (1984). <cite>Literate programming</cite>. The Computer Journal." in listed
    )


def test_each_citation_carries_its_reference_as_a_preview_hidden_from_screen_readers(mini_course):
    html = page(cite_course(mini_course, "See {cite:p}`knuth`."))
    assert (
        '<span class="cite-preview" aria-hidden="true">Donald E. Knuth and Leslie Lamport (1984). '
        "<cite>Literate programming</cite>. The Computer Journal.</span>"
    ) in html
    assert 'aria-describedby="bib-knuth"' in html  # a screen reader reads the reference itself as the description


def test_numbered_citations_count_in_order_of_first_citation(mini_course):
    course = cite_course(mini_course, "{cite:p}`knuth,raschka-k3`, then {cite:t}`k3-report`, {cite}`knuth`.")
    with (course / "course.yaml").open("a") as out:
        out.write("citations: numbered\n")
    html = page(course)
    assert links(html) == ["1", "2", "Kimi K3 technical report [3]", "1"]
    assert '[<span class="cite">' in html
    listed = references(html)
    assert '<ol class="references-list">' in listed
    assert re.findall(r'<li id="bib-([^"]*)"', listed) == ["knuth", "raschka-k3", "k3-report"]
    assert "Literate programming</cite>. The Computer Journal. 1984.</li>" in listed  # the year after, once


def test_a_page_that_cites_nothing_has_no_references_section(mini_course):
    course = cite_course(mini_course, "No citation here.")
    outputs = build_site(course, BuildOptions(jobs=1)).outputs
    assert all(b'class="references"' not in outputs[name] for name in ("first.html", "second.html", "check.html"))


def test_the_reference_lists_words_come_from_the_message_catalogue(mini_course):
    config = (
        'bibliography: [references.bib]\nmessages: {citations.references: "Referencias", citations.no_date: "s. f."}\n'
    )
    html = page(cite_course(mini_course, "Véase {cite:p}`k3-report`.", config=config))
    assert '<h2 id="references">Referencias</h2>' in html
    assert links(html) == ["Kimi K3 technical report, s. f."]


def test_an_unknown_key_is_an_error_at_its_line_and_column_with_a_did_you_mean(mini_course):
    course = cite_course(mini_course, "See {cite:p}`knuth,raschka`.")
    assert problems_of(course) == [
        "lessons/02-second.md:12:5: unknown citation key 'raschka'\n    hint: did you mean 'raschka-k3'?"
    ]


def test_a_citation_without_a_bibliography_is_an_error(mini_course):
    course = cite_course(mini_course, "See {cite}`knuth`.", config="")
    assert problems_of(course) == [
        "lessons/02-second.md:12:5: {cite}`knuth` cites, but the course has no bibliography\n"
        "    hint: list a .bib file in course.yaml: bibliography: [references.bib]"
    ]


def test_an_empty_key_is_an_error(mini_course):
    (problem,) = problems_of(cite_course(mini_course, "See {cite:p}`knuth,`."))
    assert problem.startswith("lessons/02-second.md:12:5: {cite:p}`knuth,` has an empty key")


def test_a_malformed_entry_is_an_error_at_its_line_in_the_bib(mini_course):
    bib = BIB + "\n@misc{broken,\n  title = {never closed,\n}\n\n@misc{after, title = {After}}\n"
    (problem,) = problems_of(cite_course(mini_course, "See {cite:p}`knuth`.", bib=bib))
    assert problem.startswith("references.bib:23: malformed BibTeX entry: '}' expected (noticed at line 27)")
    assert "hint: an entry reads @type{key, field = {value}, …}" in problem


def test_a_key_defined_twice_in_the_bib_is_an_error_at_the_second(mini_course):
    bib = BIB + "\n@misc{knuth, title = {Again}}\n"
    (problem,) = problems_of(cite_course(mini_course, "See {cite:p}`knuth`.", bib=bib))
    assert problem == "references.bib:23: BibTeX entry 'knuth' is defined twice"


def test_a_bibliography_outside_the_course_is_an_error_at_its_line_of_course_yaml(mini_course, tmp_path):
    (tmp_path / "elsewhere.bib").write_text(BIB)
    (mini_course / "linked.bib").symlink_to(tmp_path / "elsewhere.bib")
    course = cite_course(mini_course, "See {cite:p}`knuth`.", config="bibliography: [../elsewhere.bib]\n")
    problems = problems_of(course)
    assert problems == [
        "course.yaml:15: bibliography '../elsewhere.bib' is outside the course\n"
        "    hint: copy the file into the course folder instead of naming or linking to it"
    ]
    (mini_course / "course.yaml").write_text(
        (mini_course / "course.yaml").read_text().replace("../elsewhere.bib", "linked.bib")
    )
    assert problems_of(course)[0].startswith("course.yaml:15: bibliography 'linked.bib' is outside the course")


def test_a_missing_bib_and_an_unknown_style_are_errors_at_their_lines(mini_course):
    config = "bibliography: [refs.bib]\ncitations: numberd\n"
    course = cite_course(mini_course, "Plain.", config=config)
    assert problems_of(course) == [
        "course.yaml:15: bibliography 'refs.bib' not found\n    hint: name a .bib file of the course, e.g. references.bib",
        "course.yaml:16: citations must be 'author-year' or 'numbered', found 'numberd'\n"
        "    hint: did you mean 'numbered'?",
    ]


def test_an_edited_bib_changes_the_pages_of_the_next_build_of_a_session(mini_course):
    course = cite_course(mini_course, "See {cite:p}`knuth`.")
    with contextlib.closing(Session()) as session:
        assert "Literate programming" in page(course, session)
        bib = course / "references.bib"
        bib.write_text(bib.read_text().replace("Literate programming", "Literate Programming, revised"))
        assert "Literate Programming, revised" in page(course, session)


def test_the_references_heading_is_in_the_pages_contents(mini_course):
    html = page(cite_course(mini_course, "See {cite:p}`knuth`."))
    assert '<a href="#references">References</a>' in html


def test_a_heading_of_the_page_that_takes_the_references_anchor_is_an_error(mini_course):
    course = cite_course(mini_course, "See {cite:p}`knuth`.\n\n## References\n\nMine.")
    assert problems_of(course) == [
        "lessons/02-second.md:14: the heading's anchor '#references' is the one of the References section the "
        "citations add\n    hint: rename the heading (e.g. 'Notes'): the build lists the works cited under their own "
        "References"
    ]


def test_a_key_in_two_bib_files_is_an_error_in_the_second(mini_course):
    (mini_course / "more.bib").write_text("@misc{other, title = {Other}}\n\n@misc{knuth, title = {Again}}\n")
    config = "bibliography: [references.bib, more.bib]\n"
    (problem,) = problems_of(cite_course(mini_course, "See {cite:p}`knuth,other`.", config=config))
    assert problem == "more.bib:3: citation key 'knuth' is defined in two .bib files"


def test_a_bibliography_entry_that_is_no_bib_file_is_an_error(mini_course):
    course = cite_course(mini_course, "Plain.", config="bibliography: [refs.txt, 3]\n")
    assert problems_of(course) == [
        "course.yaml:15: bibliography 'refs.txt' must name a .bib file\n"
        "    hint: for example: bibliography: [references.bib]",
        "course.yaml:15: bibliography 3 must name a .bib file\n    hint: for example: bibliography: [references.bib]",
    ]


def test_latex_in_a_bib_field_becomes_plain_text():
    from coursegen.errors import Problems
    from coursegen.features.citations.bibliography import parse_bib

    works = parse_bib('@book{m, author = {M{\\"o}bius, August}, title = {Der {K3} \\& co}}', "a.bib", Problems())
    assert (works["m"].authors, works["m"].full_authors, works["m"].title) == (
        ("Möbius",),
        ("August Möbius",),
        "Der K3 & co",
    )


def test_tex_dashes_in_a_bib_field_become_en_and_em_dashes_but_not_in_its_url():
    from coursegen.errors import Problems
    from coursegen.features.citations.bibliography import parse_bib

    bib = "@misc{n, title = {The {Newton}--{Raphson} method---a history}, url = {https://example.org/a--b}}"
    work = parse_bib(bib, "a.bib", Problems())["n"]
    assert (work.title, work.url) == ("The Newton\u2013Raphson method\u2014a history", "https://example.org/a--b")


def test_a_jupyter_book_bibliography_fence_places_the_references_under_the_heading_above_it(mini_course):
    text = "See {cite:p}`knuth`.\n\n## References\n\n```{bibliography}\n```\n\n## After\n\nMore."
    build = build_site(cite_course(mini_course, text), BuildOptions(jobs=1))
    html = build.outputs["second.html"].decode()
    assert not build.warnings and "{bibliography}" not in html
    assert html.count('id="references"') == 1  # the author's heading, once, and no second one appended
    section = '<section class="references" aria-labelledby="references">\n<h2 id="references">References</h2>\n'
    assert section + '<ul class="references-list">\n<li id="bib-knuth">' in html
    assert html.index("references-list") < html.index('id="after"')  # where the fence stood, not at the end


def test_a_bibliography_fence_without_a_heading_above_gets_the_sections_own(mini_course):
    course = cite_course(mini_course, "See {cite:p}`knuth`.\n\n```{bibliography}\n:filter: docname in docnames\n```")
    build = build_site(course, BuildOptions(jobs=1))
    html = build.outputs["second.html"].decode()
    assert '<section class="references" aria-labelledby="references">\n<h2 id="references">References</h2>' in html
    line = (course / "lessons" / "02-second.md").read_text().split("\n").index("```{bibliography}") + 1
    assert [p.format() for p in build.warnings] == [
        f"lessons/02-second.md:{line}: warning: the options of '{{bibliography}}' are not read\n"
        "    hint: the References list the works this page cites, in the style course.yaml's `citations:` sets"
    ]


def test_a_journal_articles_reference_gives_its_volume_issue_and_pages(mini_course):
    bib = BIB + "@article{ypma, author = {Ypma, T.}, title = {Newton}, journal = {SIAM Review},\n"
    bib += "  volume = {37}, number = {4}, pages = {531--551}, year = {1995}}\n"
    bib += "@article{vol, author = {V.}, title = {Only a volume}, journal = {J}, volume = {2}, year = {2000}}\n"
    html = page(cite_course(mini_course, "See {cite:p}`ypma,vol,knuth`.", bib=bib))
    listed = references(html)
    assert "T. Ypma (1995). <cite>Newton</cite>. SIAM Review, 37(4), 531\u2013551.</li>" in listed
    assert "V. (2000). <cite>Only a volume</cite>. J, 2.</li>" in listed
    assert "<cite>Literate programming</cite>. The Computer Journal.</li>" in listed  # none given, none shown


BACK = "\u21a9\ufe0e"  # ↩ drawn as text


def test_each_citation_has_an_id_of_its_own_and_its_entry_links_back_to_it(mini_course):
    text = "{cite:t}`knuth` first, {cite:p}`knuth,raschka-k3` then, and {cite}`knuth` last."
    html = page(cite_course(mini_course, text))
    assert re.findall(r'<a href="#bib-[^"]*" aria-describedby="[^"]*" id="([^"]*)">', html) == [
        "cite-knuth-1",
        "cite-knuth-2",
        "cite-raschka-k3-1",
        "cite-knuth-3",
    ]
    listed = references(html, back_links=True)
    assert (
        '<cite>Commentary on K3</cite>. Secondary source. <a class="cite-back" href="#cite-raschka-k3-1"'
        f' aria-label="Back to the citation">{BACK}</a></li>'
    ) in listed
    assert (
        f'The Computer Journal. <span class="cite-backs"><span aria-hidden="true">{BACK}</span> '
        '<a class="cite-back" href="#cite-knuth-1" aria-label="Back to citation a">a</a> '
        '<a class="cite-back" href="#cite-knuth-2" aria-label="Back to citation b">b</a> '
        '<a class="cite-back" href="#cite-knuth-3" aria-label="Back to citation c">c</a></span></li>'
    ) in listed
    assert listed.count('class="cite-back"') == 4  # one per citation, and no back-link in any preview
    assert "cite-back" not in html[: html.index('<section class="references"')]


def test_the_back_links_names_come_from_the_message_catalogue(mini_course):
    config = "bibliography: [references.bib]\nlanguage: fr\n"
    html = page(
        cite_course(mini_course, "Voir {cite:p}`knuth` et {cite:p}`knuth`, puis {cite:p}`k3-report`.", config=config)
    )
    listed = references(html, back_links=True)
    assert 'aria-label="Retour à la citation">' in listed
    assert 'aria-label="Retour à la citation a">a</a> <a class="cite-back" href="#cite-knuth-2"' in listed


def test_a_works_uses_past_z_are_named_aa_ab_as_spreadsheets_count():
    from coursegen.features.citations.extension import use_letter

    assert [use_letter(n) for n in (1, 2, 26, 27, 28, 52, 53, 702, 703)] == [
        "a",
        "b",
        "z",
        "aa",
        "ab",
        "az",
        "ba",
        "zz",
        "aaa",
    ]
