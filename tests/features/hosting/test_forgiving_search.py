"""Search that forgives: a mistyped word, a word no page holds beside words they do, accents and
Unicode forms, checked on the index files the build makes, queried by search-index.js under Node."""

from __future__ import annotations

import json
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

from coursegen.features.search.index import near_keys, search_files
from coursegen.features.search.sections import folded, page_text, terms

SCRIPT = Path(__file__).parent / "search_checks.mjs"
NODE = shutil.which("node")
PAGES = {
    "inverse.html": ("Inverses", "<h2 id='reciprocal'>The reciprocal</h2><p>The reciprocal of a decay rate.</p>"),
    "gates.html": ("Gates", "<h2 id='decay'>Decay</h2><p>Each gate lets the state decay by a factor.</p>"),
    "precision.html": ("Precision", "<h2 id='bits'>Bits</h2><p>Precision of the exponent and its mantissa.</p>"),
    "metodo.html": ("Método", "<h2 id='maquina'>La máquina</h2><p>El método de Newton en una máquina.</p>"),
    # the same words stored decomposed (NFD), as some editors save them
    "nfd.html": ("Cafe", unicodedata.normalize("NFD", "<h2 id='cafe'>Café</h2><p>Un café crème.</p>")),
}


def queried(tmp_path: Path, *queries: str) -> dict[str, dict]:
    """Return what search-index.js answers for each query on an index of PAGES."""
    pages = [(url, title, "Lesson", page_text(html)) for url, (title, html) in PAGES.items()]
    for name, data in search_files(pages).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    result = subprocess.run(
        [NODE, str(SCRIPT), str(tmp_path), *queries], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def first_pages(answers: dict[str, dict]) -> dict[str, str]:
    return {query: (found["urls"][0].split("#")[0] if found["urls"] else "") for query, found in answers.items()}


@pytest.mark.skipif(NODE is None, reason="node is needed (Node 20 is part of the setup)")
def test_a_word_with_one_letter_missing_added_changed_or_swapped_finds_its_page(tmp_path):
    typos = ["recipocal", "reciprocals", "recaprocal", "reicprocal", "decya", "deacy", "ecay", "rpecision"]
    typos += ["precisoin", "pprecision", "erciprocal", "eciprocal", "xeciprocal", "rxciprocal"]
    assert first_pages(queried(tmp_path, *typos)) == {
        **dict.fromkeys(["recipocal", "reciprocals", "recaprocal", "reicprocal"], "inverse.html"),
        **dict.fromkeys(["erciprocal", "eciprocal", "xeciprocal", "rxciprocal"], "inverse.html"),
        **dict.fromkeys(["decya", "deacy"], "gates.html"),
        "ecay": "",  # four letters: too short to forgive, too many words are one edit from it
        **dict.fromkeys(["rpecision", "precisoin", "pprecision"], "precision.html"),
    }


@pytest.mark.skipif(NODE is None, reason="node is needed (Node 20 is part of the setup)")
def test_a_mistyped_word_marks_the_word_it_found(tmp_path):
    assert queried(tmp_path, "recipocal")["recipocal"]["marked"][0] == ["reciprocal"]


@pytest.mark.skipif(NODE is None, reason="node is needed (Node 20 is part of the setup)")
def test_a_query_with_a_word_no_page_holds_ranks_the_pages_holding_the_others(tmp_path):
    answers = queried(tmp_path, "decay zyxwvut", "reciprocal decay qqqq", "zyxwvut")
    assert first_pages(answers)["decay zyxwvut"] == "gates.html"
    # the page holding both known words comes before the one holding one of them
    assert [url.split("#")[0] for url in answers["reciprocal decay qqqq"]["urls"]][:2] == [
        "inverse.html",
        "gates.html",
    ]
    assert answers["zyxwvut"]["urls"] == []


@pytest.mark.skipif(NODE is None, reason="node is needed (Node 20 is part of the setup)")
def test_accents_and_unicode_forms_are_folded_on_both_sides(tmp_path):
    nfc, nfd = unicodedata.normalize("NFC", "método"), unicodedata.normalize("NFD", "método")
    answers = queried(tmp_path, "metodo", "maquina", "MAQUINA", nfc, nfd, "cafe", "café", "creme")
    assert first_pages(answers) == {
        **dict.fromkeys(["metodo", "maquina", "MAQUINA", nfc, nfd], "metodo.html"),
        **dict.fromkeys(["cafe", "café", "creme"], "nfd.html"),
    }
    # the text quoted keeps its accents, and the accented word is marked whole
    assert answers["maquina"]["marked"][0] == ["máquina"]
    assert answers["creme"]["marked"][0] == [unicodedata.normalize("NFD", "crème")]


def test_terms_are_folded_the_same_whether_written_composed_or_decomposed():
    text = "Método Máquina ﬁn Ça"
    assert terms(text) == terms(unicodedata.normalize("NFD", text)) == ["metodo", "maquina", "fin", "ca"]
    assert folded("ÉTÉ") == "ete"
    assert page_text(unicodedata.normalize("NFD", "<p>été</p>")).counts == {"ete": 1}


def test_a_term_is_listed_near_the_shards_a_typo_in_its_first_letters_looks_in():
    assert near_keys("reciprocal") == ["ec", "rc"]
    assert near_keys("gate") == [] and near_keys("12345") == []  # too short to forgive; a number
