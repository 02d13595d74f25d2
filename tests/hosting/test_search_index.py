"""The search corpus written at build time: one document per section and per question, answers left out."""
from __future__ import annotations

import json

from coursegen.markdown import ID_ATTR
from coursegen.pipeline import build_site
from coursegen.search import INDEX_NAME, STORED, page_sections

PAGE = """
<p>Opening words before any heading.</p>
<h2 id="first-part">First <em>part</em></h2>
<p>Alpha text.<br>Beta text.</p>
<pre class="diagram" tabindex="0">[box] ──▶ [box]</pre>
<script>var hidden = "scriptword";</script>
<section class="question question-recall" id="q-why" data-question="why">
<p class="question-kind">Free recall · lesson 1</p>
<div class="question-prompt"><p>Why does gamma matter?</p></div>
<details class="question-answer" data-answer><summary>Model answer</summary><p>Secretanswer here.</p></details>
</section>
<p>Delta text after the question.</p>
<figure data-widget="w"><div data-widget-live><p>Showing results computed when built.</p></div>
<details><summary>Show the Python</summary><div data-widget-code><pre>def run(): pass</pre></div></details></figure>
<h3 id="second">Second</h3>
<table><tr><td>cell</td><td>next</td></tr></table>
"""


def test_a_page_is_cut_into_sections_at_its_anchored_headings():
    sections = page_sections(PAGE, "The page", "lesson")
    assert [(s.anchor, s.title, s.kind) for s in sections] == [
        ("", "The page", "lesson"), ("first-part", "First part", "lesson"),
        ("q-why", "Why does gamma matter?", "question"), ("second", "Second", "lesson")]
    assert sections[0].text == "Opening words before any heading."


def test_text_after_a_question_belongs_to_the_section_around_it():
    first = page_sections(PAGE, "The page", "lesson")[1]
    assert first.text == "Alpha text. Beta text. Delta text after the question. Show the Python"


def test_scripts_diagrams_and_answers_stay_out_of_the_index_and_cells_stay_apart():
    sections = page_sections(PAGE, "The page", "lesson")
    everything = " ".join(s.text + " " + s.title for s in sections)
    for hidden in ("scriptword", "Secretanswer", "──▶", "Model answer", "def run", "computed when built"):
        assert hidden not in everything
    assert sections[-1].text == "cell next"


def test_a_question_keeps_its_kind_label_apart_from_its_text():
    question = page_sections(PAGE, "The page", "lesson")[2]
    assert question.label == "Free recall · lesson 1"
    assert question.text == "Why does gamma matter?"


def test_every_search_result_links_to_a_page_and_anchor_that_exist(mini_course):
    outputs = build_site(mini_course).outputs
    name = "search-index.json"
    corpus = json.loads(outputs[name])
    assert corpus["fields"] == ["title", "text"]
    documents = corpus["documents"]
    assert {d["url"].split("#")[0] for d in documents} == {"first.html", "second.html", "check.html"}
    for document in documents:
        page, _, anchor = document["url"].partition("#")
        if anchor:
            assert anchor in ID_ATTR.findall(outputs[page].decode()), document["url"]
    assert [d["id"] for d in documents] == list(range(len(documents)))
    assert INDEX_NAME == name


def test_the_corpus_is_exactly_the_json_encoding_of_its_documents(mini_course):
    """search_index assembles the JSON from per-unit pieces; it must equal encoding it in one go."""
    outputs = build_site(mini_course).outputs
    corpus = json.loads(outputs[INDEX_NAME])
    assert corpus["documents"] and corpus["storeFields"] == STORED
    assert outputs[INDEX_NAME] == json.dumps(corpus, ensure_ascii=False, separators=(",", ":"),
                                              sort_keys=True).encode()
    assert "·" in outputs[INDEX_NAME].decode()  # written as itself, not escaped


TRICKY = """
<!-- <h2 id="commented">Not a heading</h2> -->
<h2 id="top">Top<sup class="footnote-ref"><a href="#fn1">[1]</a></sup> &amp; more</h2>
<p>Seen <img data-zoom src="x.png" alt="">after an image.</p>
<div data-answer><div><div>Deep answer</div></div><p>Still hidden</p></div>
<p>Visible again, a&lt;b.</p>
<section id="q-one" data-question="one"><p class="question-kind">Recall</p><p>Asked?</p>
<div class="choice-explanation"><div>Why not</div></div></section>
<p>After.</p>
"""


def test_nested_hidden_elements_void_tags_comments_and_footnotes_in_headings():
    sections = page_sections(TRICKY, "Page", "lesson")
    assert [(s.anchor, s.title) for s in sections] == [("top", "Top & more"), ("q-one", "Asked?")]
    assert sections[0].text == "Seen after an image. Visible again, a<b. After."
    assert (sections[1].label, sections[1].text) == ("Recall", "Asked?")
