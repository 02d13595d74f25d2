"""Search that forgives, in Chromium: mistyped words on the sample course, a query with a word no
page holds, and a Spanish lesson found by words typed without accents, or with them decomposed."""

from __future__ import annotations

import re
import unicodedata

import pytest
from helpers import run_cli, serving
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def search_for(page, query: str):
    """Type `query` into search (opened with "/" when closed); return the results' links once shown."""
    if not page.locator("[data-search]").evaluate("dialog => dialog.open"):
        page.keyboard.press("/")
    page.locator("[data-search] input").fill(query)
    expect(page.locator("[data-search-status]")).to_contain_text(f"for “{query}”")
    return page.locator("[data-search-results] a")


def test_mistyped_words_find_their_sections_in_the_sample_course(sample_course, capsys, page_and_watch):
    assert run_cli(capsys, "--root", sample_course, "build")[0] == 0
    page, watch = page_and_watch
    with serving(sample_course / "site") as base:
        page.goto(base + "index.html")
        results = search_for(page, "recipocal")  # a letter missing
        expect(results.first).to_have_attribute("href", base + "sequence-axis.html#the-reciprocal-hazard")
        expect(page.locator("[data-search-results] mark").first).to_have_text(re.compile("^reciprocal$", re.I))
        results = search_for(page, "decya")  # two letters swapped
        expect(results.first).to_have_attribute("href", re.compile(r"\.html#"))
        expect(page.locator("[data-search-results] mark").first).to_have_text(re.compile("^decay$", re.I))
        for typo in ("erciprocal", "reciprocak", "reciprocall"):  # swapped first letters, changed, added
            expect(search_for(page, typo).first).to_have_attribute("href", re.compile(r"sequence-axis\.html#"))
        # a word the course never uses beside one it does: the pages holding that one, not "No results"
        expect(search_for(page, "reciprocal zyxwvut").first).to_have_attribute(
            "href", base + "sequence-axis.html#the-reciprocal-hazard"
        )
    watch.assert_clean()


SPANISH = """

## La máquina

El método converge rápido en una máquina con aritmética de coma flotante.

## Decomposed

{nfd}
"""


def test_words_typed_without_accents_or_decomposed_find_the_accented_text(mini_course, capsys, page_and_watch):
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(
        lesson.read_text() + SPANISH.format(nfd=unicodedata.normalize("NFD", "Una canción sobre el corazón."))
    )
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    page, watch = page_and_watch
    with serving(mini_course / "site") as base:
        page.goto(base + "index.html")
        for query in ("metodo", "maquina", "Máquina", unicodedata.normalize("NFD", "método")):
            expect(search_for(page, query).first).to_have_attribute("href", base + "second.html#la-m%C3%A1quina")
        expect(page.locator("[data-search-results] mark").first).to_have_text(re.compile("^método$", re.I))
        expect(search_for(page, "cancion").first).to_have_attribute("href", base + "second.html#decomposed")
        expect(search_for(page, "corazón").first).to_have_attribute("href", base + "second.html#decomposed")
    watch.assert_clean()
