"""Links, anchors and image paths written with accents: compared percent-decoded and NFC-normalised."""

from __future__ import annotations

import unicodedata

import pytest

from coursegen.errors import ContentError
from coursegen.pipeline import build_site

SECOND = "lessons/02-second.md"


def _edit(course, path: str, old: str, new: str) -> None:
    file = course / path
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new, 1))


def _accented_heading(course) -> None:
    _edit(course, "lessons/01-first.md", "\n## ", "\n## Cancelación catastrófica\n\nTexto.\n\n## ")


@pytest.mark.parametrize(
    "link",
    [
        "[ver](01-first.md#cancelación-catastrófica)",
        "[ver](01-first.md#cancelaci%C3%B3n-catastr%C3%B3fica)",
        "[ver](<01-first.md#cancelación-catastrófica>)",
        "[ver](01-first.md#" + unicodedata.normalize("NFD", "cancelación-catastrófica") + ")",
    ],
)
def test_a_link_to_an_accented_heading_is_accepted_in_every_spelling(mini_course, link):
    _accented_heading(mini_course)
    _edit(mini_course, SECOND, "Back to [the table](01-first.md#a-table-and-math).", link)
    page = build_site(mini_course).outputs["second.html"].decode()
    assert 'href="first.html#cancelaci%C3%B3n-catastr%C3%B3fica"' in page
    first = build_site(mini_course).outputs["first.html"].decode()
    assert 'id="cancelación-catastrófica"' in first


def test_a_same_page_link_to_an_accented_heading_is_accepted(mini_course):
    _edit(mini_course, SECOND, "## Details", "## Détails\n\nTexte.\n\n## Details")
    _edit(mini_course, SECOND, "Back to [the table](01-first.md#a-table-and-math).", "[arriba](#détails)")
    page = build_site(mini_course).outputs["second.html"].decode()
    assert 'href="#d%C3%A9tails"' in page and 'id="détails"' in page


def test_a_wrong_accented_anchor_is_reported_decoded(mini_course):
    _accented_heading(mini_course)
    _edit(mini_course, SECOND, "(01-first.md#a-table-and-math)", "(01-first.md#cancelación-catastrófca)")
    with pytest.raises(ContentError) as caught:
        build_site(mini_course)
    problem = caught.value.problems[0]
    assert problem.message == "link to '#cancelación-catastrófca' in 'first', which has no such anchor"
    assert problem.hint == "did you mean 'cancelación-catastrófica'?"


def test_an_image_with_an_accented_name_is_found_and_published(mini_course):
    (mini_course / "lessons" / "imágenes").mkdir()
    (mini_course / "lessons" / "imágenes" / "gráfica.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    _edit(
        mini_course,
        SECOND,
        "Back to [the table](01-first.md#a-table-and-math).",
        "![una gráfica](imágenes/gráfica.svg)",
    )
    outputs = build_site(mini_course).outputs
    assert "media/lessons-imágenes-gráfica.svg" in outputs
    assert 'src="media/lessons-im%C3%A1genes-gr%C3%A1fica.svg"' in outputs["second.html"].decode()


def test_a_link_to_a_course_file_that_is_not_a_page_is_published_beside_the_images(mini_course):
    (mini_course / "lessons" / "datos.csv").write_text("x,y\n1,2\n")
    _edit(mini_course, SECOND, "(01-first.md#a-table-and-math)", "(datos.csv)")
    outputs = build_site(mini_course).outputs
    assert outputs["media/lessons-datos.csv"] == b"x,y\n1,2\n"
    assert 'href="media/lessons-datos.csv"' in outputs["second.html"].decode()
