"""Citations in Chromium (issue 41): the preview shows on hover and on keyboard focus, by CSS alone, and the link
leads to the reference."""

from __future__ import annotations

import contextlib

import pytest
from helpers import FIXTURES, copy_course, serving
from pages import open_page
from playwright.sync_api import expect

from coursegen.cli import main as cli_main

BIB = "@book{knuth, author = {Donald E. Knuth}, title = {Literate Programming}, year = {1992}}\n"


@contextlib.contextmanager
def cited_site(folder, text: str):
    """Serve the mini course built with the .bib above and lesson 2's 'Text.' replaced by `text`."""
    root = copy_course(FIXTURES / "mini", folder / "course")
    (root / "references.bib").write_text(BIB)
    with (root / "course.yaml").open("a") as config:
        config.write("bibliography: [references.bib]\n")
    lesson = root / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", text))
    assert cli_main(["--root", str(root), "build"]) == 0
    with serving(root / "site") as base:
        yield base


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with cited_site(tmp_path_factory.mktemp("cite"), "As {cite:t}`knuth` shows, prose is code.") as base:
        yield base


@pytest.mark.parametrize("javascript", [True, False])
def test_the_preview_shows_on_focus_and_hover_and_the_link_leads_to_the_reference(site, context_factory, javascript):
    page = open_page(context_factory(java_script_enabled=javascript), site, "second.html")
    preview = page.locator("p .cite-preview")
    expect(preview).to_be_hidden()
    for _ in range(100):  # to the citation, as a keyboard user gets there
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('href')") == "#bib-knuth":
            break
    expect(preview).to_be_visible()
    expect(preview).to_have_text("Donald E. Knuth (1992). Literate Programming.")
    page.locator("h1").first.click()  # focus leaves the link
    expect(preview).to_be_hidden()
    page.locator("p .cite a").hover()
    expect(preview).to_be_visible()
    page.locator("p .cite a").click()
    assert page.url.endswith("second.html#bib-knuth")
    expect(page.locator("#bib-knuth")).to_be_in_viewport()


@pytest.fixture(scope="module")
def cited_twice(tmp_path_factory):
    text = "As {cite:t}`knuth` shows, prose is code.\n\nSaid twice {cite:p}`knuth`."
    with cited_site(tmp_path_factory.mktemp("cite-twice"), text) as base:
        yield base


@pytest.mark.parametrize("javascript", [True, False])
def test_a_keyboard_follows_a_reference_back_to_each_of_its_citations(cited_twice, context_factory, javascript):
    page = open_page(context_factory(java_script_enabled=javascript), cited_twice, "second.html")
    back = page.locator("#bib-knuth a.cite-back")
    expect(back).to_have_count(2)
    expect(back.nth(0)).to_have_accessible_name("Back to citation a")
    expect(back.nth(1)).to_have_accessible_name("Back to citation b")
    for _ in range(100):  # to the second back-link, as a keyboard user gets there
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('href')") == "#cite-knuth-2":
            break
    ring = page.evaluate(
        "(s => [s.outlineStyle, parseFloat(s.outlineWidth)])(getComputedStyle(document.activeElement))"
    )
    assert ring[0] == "solid" and ring[1] >= 2  # the focus is visible
    page.keyboard.press("Enter")
    assert page.url.endswith("second.html#cite-knuth-2")
    citation = page.locator("#cite-knuth-2")
    expect(citation).to_be_in_viewport()
    expect(citation).to_have_text("Knuth, 1992")
    page.locator("h1").first.click()
    citation.hover()  # the citation led back to still shows its preview
    expect(page.locator(".cite:has(#cite-knuth-2) .cite-preview")).to_be_visible()
