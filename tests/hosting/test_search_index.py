"""The search index Pagefind writes at build time: every published unit, its sections, answers left out."""

from __future__ import annotations

import gzip
import json
from types import SimpleNamespace

from coursegen.features.search.extension import BUNDLE, ENTRY, indexed_page
from coursegen.pipeline import build_site
from coursegen.stages.parse import ID_ATTR

QUESTION = """
:::: recall {lessons: [1]}
Which sentence of the first lesson names the secret ingredient?

::: answer
Secretanswer, never shown in search.
:::
::::
"""


def fragments(outputs: dict[str, bytes]) -> dict[str, dict]:
    """Return Pagefind's page fragments by page URL (each is gzip, a signature, then JSON)."""
    found = {}
    for path, data in outputs.items():
        if path.startswith(f"{BUNDLE}/fragment/"):
            fragment = json.loads(gzip.decompress(data).removeprefix(b"pagefind_dcd"))
            found[fragment["url"]] = fragment
    return found


def with_a_question(course):
    review = course / "reviews" / "03-check.md"
    review.write_text(review.read_text() + QUESTION)
    return course


def test_a_question_is_headed_by_its_kind_label_in_the_copy_pagefind_indexes():
    html = (
        '<h2 id="intro">Intro</h2><p>Text.</p>\n<section class="question question-recall" id="q-why" '
        'data-question="why" data-kind="recall">\n<p class="question-kind">Free recall · lesson 1</p>\n'
        '<div class="question-prompt"><p>Why?</p></div></section>'
    )
    unit = SimpleNamespace(title="A & B", label="Review 3", page=SimpleNamespace(html=html))
    page = indexed_page(unit, "en")
    assert '<main data-pagefind-body><h1>A &amp; B</h1><h2 id="intro">' in page
    assert '<h6 id="q-why">Free recall · lesson 1</h6>' in page and "question-kind" not in page
    assert '<meta data-pagefind-meta="label[content]" content="Review 3">' in page
    assert page.startswith('<!doctype html><html lang="en">')


def test_the_index_holds_every_published_unit_and_links_each_section_to_an_anchor_that_exists(mini_course):
    outputs = build_site(with_a_question(mini_course)).outputs
    pages = fragments(outputs)
    assert set(pages) == {"/first.html", "/second.html", "/check.html"}
    assert {page["meta"]["title"] for page in pages.values()} == {"First lesson", "Second lesson", "Check yourself"}
    assert pages["/check.html"]["meta"]["label"] == "Review 3"
    for url, page in pages.items():
        ids = ID_ATTR.findall(outputs[url.lstrip("/")].decode())
        headings = [anchor for anchor in page["anchors"] if anchor["element"].startswith("h")]
        assert headings and all(anchor["id"] in ids for anchor in headings), url
    question = [a for a in pages["/check.html"]["anchors"] if a["element"] == "h6"]
    assert len(question) == 1 and question[0]["id"].startswith("q-") and "recall" in question[0]["text"].lower()
    assert "secret ingredient" in pages["/check.html"]["content"]


def test_answers_diagrams_and_footnote_markers_stay_out_of_the_index(mini_course):
    outputs = build_site(with_a_question(mini_course)).outputs
    assert "Secretanswer" in outputs["check.html"].decode()
    everything = " ".join(page["content"] for page in fragments(outputs).values())
    for hidden in ("Secretanswer", "Model answer", "──", "[1]"):
        assert hidden not in everything


def test_the_bundle_is_only_what_search_js_loads(mini_course):
    outputs = build_site(mini_course).outputs
    bundle = sorted(path for path in outputs if path.startswith(f"{BUNDLE}/"))
    assert ENTRY in bundle and f"{BUNDLE}/pagefind-entry.json" in bundle
    assert [path for path in bundle if "/wasm." in path] == [f"{BUNDLE}/wasm.en.pagefind"]
    assert not [
        path for path in bundle if "-ui" in path or "highlight" in path or "playground" in path or "worker" in path
    ]
    entry = json.loads(outputs[f"{BUNDLE}/pagefind-entry.json"])
    assert list(entry["languages"]) == ["en"] and entry["languages"]["en"]["page_count"] == 3
    assert f'data-search-lib="{ENTRY}"' in outputs["first.html"].decode()


def test_pagefind_indexes_while_the_pages_render_and_the_service_worker_lists_its_files(mini_course, monkeypatch):
    from coursegen import pipeline
    from coursegen.features.search import extension as search

    steps = []
    started, render, files = search.PagefindRun.__init__, pipeline.render_site, search.PagefindRun.files
    monkeypatch.setattr(
        search.PagefindRun, "__init__", lambda run, *args: (steps.append("Pagefind started"), started(run, *args))[1]
    )
    monkeypatch.setattr(
        pipeline, "render_site", lambda *args, **kw: (steps.append("pages rendered"), render(*args, **kw))[1]
    )
    monkeypatch.setattr(search.PagefindRun, "files", lambda run: (steps.append("index read"), files(run))[1])
    outputs = build_site(mini_course).outputs
    assert steps == ["Pagefind started", "pages rendered", "index read"]
    assert list(outputs) == sorted(outputs)  # the index's files join the outputs in order
    precached = outputs["sw.js"].decode()
    assert f'"{ENTRY}"' in precached and f'"{BUNDLE}/pagefind-entry.json"' in precached


def test_a_build_that_fails_while_rendering_stops_pagefind_and_removes_its_copy(mini_course, monkeypatch, tmp_path):
    import tempfile

    import pytest

    from coursegen.errors import ContentError
    from coursegen.features.search import extension as search

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(search, "scratch_folder", lambda: str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    runs = []
    started = search.PagefindRun.__init__
    monkeypatch.setattr(search.PagefindRun, "__init__", lambda run, *args: (runs.append(run), started(run, *args))[1])
    templates = mini_course / "templates"
    templates.mkdir(exist_ok=True)
    (templates / "lesson.html").write_text(
        '{% extends "base.html" %}{% block content %}{{ asset("nothing.css") }}{% endblock %}\n'
    )
    with pytest.raises(ContentError) as raised:
        build_site(mini_course)
    assert "nothing.css" in str(raised.value.problems[0].message)
    assert len(runs) == 1 and runs[0].process.poll() is not None  # not left running
    assert list(scratch.iterdir()) == []


def test_a_pagefind_that_fails_fails_the_build_with_its_message(mini_course, monkeypatch, tmp_path):
    import pytest

    from coursegen.features.search import extension as search

    failing = tmp_path / "pagefind"
    failing.write_text("#!/bin/sh\necho 'Error: the index could not be written' >&2\nexit 3\n")
    failing.chmod(0o755)
    monkeypatch.setattr(search, "pagefind_binary", lambda: str(failing))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(search, "scratch_folder", lambda: str(scratch))
    with pytest.raises(RuntimeError, match=r"Pagefind failed \(3\): Error: the index could not be written"):
        build_site(mini_course)
    assert list(scratch.iterdir()) == []
