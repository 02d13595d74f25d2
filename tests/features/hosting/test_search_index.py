"""The search index made at build time: every published unit, its sections, answers left out, and
postings that name exactly the pages holding each term."""

from __future__ import annotations

import hashlib
import json
import os
import re

from helpers import TRICKY_TEXTS as TRICKY

from coursegen.features.search.index import ENTRY, FOLDER, FRAGMENT_SIZE, PREFIX, search_files
from coursegen.features.search.sections import page_sections, page_text, terms
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


def with_a_question(course):
    review = course / "reviews" / "03-check.md"
    review.write_text(review.read_text() + QUESTION)
    return course


def fragments(outputs: dict[str, bytes]) -> dict[str, dict]:
    """Return the index's pages by URL, in the entry file's order (a page's place is its number)."""
    entry = json.loads(outputs[ENTRY])
    pages = []
    for name, count in entry["fragments"]:
        held = json.loads(outputs[f"{FOLDER}/{name}"])
        assert len(held) == count
        pages += held
    return {page["url"]: page for page in pages}


def postings(outputs: dict[str, bytes]) -> dict[str, list[tuple[int, int]]]:
    """Return every term's (page number, weight) pairs, decoded from the gaps the files hold."""
    entry = json.loads(outputs[ENTRY])
    found = {}
    for prefix, name in entry["terms"].items():
        for term, flat in json.loads(outputs[f"{FOLDER}/{name}"]).items():
            if term == "":  # the terms near this shard's prefix, filed in others (index.near_keys)
                continue
            assert term.startswith(prefix) and len(prefix) == min(PREFIX, len(term))
            numbers, at = [], 0
            for gap in flat[::2]:
                at += gap
                numbers.append(at)
            found[term] = list(zip(numbers, flat[1::2]))
    return found


def test_a_page_is_cut_at_its_headings_and_questions_and_text_after_a_question_goes_back_to_its_heading():
    html = (
        "<p>Before any heading.</p>\n"
        '<h2 id="intro">Intro <em>part</em></h2><p>Text with <math><mi>x</mi><mn>1</mn></math> in it.</p>\n'
        '<section class="question question-recall" id="q-why" data-question="why" data-kind="recall">\n'
        '<p class="question-kind">Free recall · lesson 1</p>\n<div class="question-prompt"><p>Why?</p></div>'
        "<div data-answer hidden><p>Hidden answer.</p></div></section>\n"
        "<p>After the question.<sup>[1]</sup></p><button>Show</button>"
    )
    sections = [
        ("", "", "Before any heading."),
        ("intro", "Intro part", "Text with x 1 in it. After the question."),
        ("q-why", "Free recall · lesson 1", "Why?"),
    ]
    assert page_sections(html) == sections
    text = page_text(html)
    assert json.loads(text.sections) == [list(section) for section in sections]
    assert text.counts["intro"] == 3 and text.counts["text"] == 1  # a heading's words count three times
    assert text.counts["recall"] == 3 and "hidden" not in text.counts and "show" not in text.counts
    assert page_sections('<h2 id="a">A</h2><p>Text.</p>')[0] == ("", "", "")  # the page's own top is always first


def test_terms_are_lower_case_letters_and_digits_and_the_index_leaves_long_runs_out():
    assert terms("K3's g_min: 2×Tile—ÉTÉ") == ["k3", "s", "g", "min", "2", "tile", "ete"]
    files = search_files([("a.html", "A", "Lesson 1", page_text("<p>word " + "x" * 41 + " " + "y" * 40 + "</p>"))])
    assert set(postings(files)) == {"a", "word", "y" * 40}


def test_the_index_holds_every_published_unit_and_links_each_section_to_an_anchor_that_exists(mini_course):
    outputs = build_site(with_a_question(mini_course)).outputs
    pages = fragments(outputs)
    assert list(pages) == ["first.html", "second.html", "check.html"]  # the course's order
    assert [page["title"] for page in pages.values()] == ["First lesson", "Second lesson", "Check yourself"]
    assert pages["check.html"]["label"] == "Review 3"
    for url, page in pages.items():
        ids = ID_ATTR.findall(outputs[url].decode())
        anchors = [anchor for anchor, _, _ in page["sections"]]
        assert anchors[0] == "" and page["sections"][0][1] == ""  # the page's own top (search.js names it by the page)
        assert len(anchors) > 1 and all(anchor in ids for anchor in anchors[1:]), url
    question = [s for s in pages["check.html"]["sections"] if s[0].startswith("q-")]
    assert len(question) == 1 and "recall" in question[0][1].lower() and "secret ingredient" in question[0][2]


def test_answers_diagrams_and_footnote_markers_stay_out_of_the_index(mini_course):
    outputs = build_site(with_a_question(mini_course)).outputs
    assert "Secretanswer" in outputs["check.html"].decode()
    everything = " ".join(text for page in fragments(outputs).values() for _, _, text in page["sections"])
    for hidden in ("Secretanswer", "Model answer", "──", "[1]"):
        assert hidden not in everything
    assert "secretanswer" not in postings(outputs)


def test_each_term_lists_exactly_the_pages_that_hold_it_in_order_with_whole_weights(mini_course):
    outputs = build_site(with_a_question(mini_course)).outputs
    expected: dict[str, set[int]] = {}
    for number, page in enumerate(fragments(outputs).values()):
        for term in terms(" ".join([page["title"], *(f"{title} {text}" for _, title, text in page["sections"])])):
            expected.setdefault(term, set()).add(number)
    found = postings(outputs)
    assert set(found) == set(expected)
    for term, pairs in found.items():
        numbers = [number for number, _ in pairs]
        assert numbers == sorted(expected[term]), term
        assert all(isinstance(weight, int) and weight >= 1 for _, weight in pairs)


def test_a_word_in_a_heading_or_on_a_short_page_weighs_more():
    files = search_files(
        [
            ("a.html", "A", "Lesson 1", page_text('<h2 id="gate">Gate</h2><p>Other words here.</p>')),
            ("b.html", "B", "Lesson 2", page_text('<h2 id="x">X</h2><p>The gate.</p>')),
            ("c.html", "C", "Lesson 3", page_text('<h2 id="y">Y</h2><p>' + "word " * 2000 + "gate.</p>")),
            ("d.html", "D", "Lesson 4", page_text("<p>No such word.</p>")),
        ]
    )
    weights = dict(postings(files)["gate"])
    assert set(weights) == {0, 1, 2}
    assert weights[0] > weights[1] > weights[2]


def test_pages_share_a_fragment_file_up_to_its_size_and_a_big_page_has_one_of_its_own():
    small = page_text("<p>" + "word " * 100 + "</p>")
    big = page_text("<p>" + "word " * (FRAGMENT_SIZE // 4) + "</p>")
    pages = [(f"{n}.html", f"P{n}", f"Lesson {n}", big if n == 3 else small) for n in range(60)]
    files = search_files(pages)
    entry = json.loads(files[ENTRY])
    counts = [count for _, count in entry["fragments"]]
    assert sum(counts) == 60 and 1 in counts and len(counts) < 20
    for name, count in entry["fragments"]:
        data = files[f"{FOLDER}/{name}"]
        assert count == 1 or len(data) <= FRAGMENT_SIZE + 2
    assert [page["url"] for page in fragments(files).values()] == [f"{n}.html" for n in range(60)]


def test_every_file_but_the_entry_is_named_by_its_content_and_the_pages_name_the_entry(mini_course):
    outputs = build_site(mini_course).outputs
    index = sorted(path for path in outputs if path.startswith(f"{FOLDER}/"))
    entry = json.loads(outputs[ENTRY])
    listed = {f"{FOLDER}/{name}" for name, _ in entry["fragments"]} | {f"{FOLDER}/{n}" for n in entry["terms"].values()}
    assert set(index) == listed | {ENTRY}
    for path in listed:
        assert re.search(r"\.([0-9a-f]{12})\.json$|/([0-9a-f]{12})\.json$", path)
        assert hashlib.sha256(outputs[path]).hexdigest()[:12] in path
    assert f'data-search-index="{ENTRY}"' in outputs["first.html"].decode()


def test_the_service_worker_precaches_the_index(mini_course):
    outputs = build_site(mini_course).outputs
    precached = outputs["sw.js"].decode()
    for path in (p for p in outputs if p.startswith(f"{FOLDER}/")):
        assert f'"{path}"' in precached


def test_a_rebuild_with_the_same_pages_reuses_the_index_and_an_edit_changes_only_some_files(mini_course):
    from coursegen.features.search import index
    from coursegen.session import Session

    cache = Session()
    made = []
    original = index.search_files

    def counted(pages):
        made.append(len(pages))
        return original(pages)

    import coursegen.features.search.extension as extension

    extension.search_files, saved = counted, extension.search_files
    try:
        first = build_site(mini_course, session=cache).outputs
        again = build_site(mini_course, session=cache).outputs
        lesson = mini_course / "lessons" / "02-second.md"
        lesson.write_text(lesson.read_text() + "\nA brandnewword here.\n")
        edited = build_site(mini_course, session=cache).outputs
    finally:
        extension.search_files = saved
    assert made == [3, 3]  # the second build kept the first one's index, the edit made a new one
    assert {p: again[p] for p in again if p.startswith(FOLDER)} == {p: first[p] for p in first if p.startswith(FOLDER)}
    assert "brandnewword" in postings(edited)
    old = {p for p in first if p.startswith(FOLDER)}
    new = {p for p in edited if p.startswith(FOLDER)}
    assert len(old & new) > len(old) // 2  # most term files and the other pages' fragments stay as they were


def test_the_fast_count_gives_what_counting_the_terms_gives():
    from collections import Counter

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from coursegen.features.search.sections import term_counts

    for text in TRICKY:
        assert term_counts(text) == Counter(terms(text)), text

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
    def same(text):
        assert term_counts(text) == Counter(terms(text))

    same()


def test_the_index_is_made_while_another_process_renders_when_rendering_is_shared_and_after_it_otherwise(
    mini_course, monkeypatch
):
    from coursegen.features.search import extension
    from coursegen.pipeline import BuildOptions
    from coursegen.stages import render

    steps: list[str] = []
    made, units = extension.index_files, render.render_units
    monkeypatch.setattr(
        extension, "index_files", lambda course, texts, memo: (steps.append("index"), made(course, texts, memo))[1]
    )
    monkeypatch.setattr(
        render, "render_units", lambda *a: (steps.append("render"), units(*a), steps.append("rendered"))[1]
    )
    alone = build_site(mini_course, BuildOptions(jobs=1)).outputs
    assert steps == ["render", "rendered", "index"]

    def shared(work, items, jobs=None, meanwhile=None):  # what parallel_map does once its workers run
        if meanwhile:
            meanwhile()
        return [work(item) for item in items]

    monkeypatch.setattr(render, "parallel_map", shared)
    steps.clear()
    outputs = build_site(mini_course, BuildOptions(jobs=2)).outputs
    assert steps == ["render", "index", "rendered"]
    assert outputs == alone and ENTRY in outputs
    assert f'"{ENTRY}"' in outputs["sw.js"].decode()  # the service worker, made after, lists the index


def test_serves_index_process_answers_with_the_files_that_changed_and_they_make_the_whole_index():
    from coursegen.features.search.extension import IndexProcess

    def pages(texts):
        return [(f"{n}.html", f"Page {n}", f"Lesson {n}", page_text(f"<p>{text}</p>")) for n, text in texts.items()]

    texts = {n: f"common words and the word{n} of page {n}" for n in range(30)}
    process = IndexProcess()
    try:
        first = pages(texts)
        assert process.changed_files(first) == search_files(first)
        texts[7] = "common words and a brandnew one"
        second = first[:7] + pages({7: texts[7]}) + first[8:]  # the other pages keep their text objects
        diff = process.changed_files(second)
        whole = search_files(second)
        assert 0 < len(diff) < len(whole) // 2 and ENTRY in diff
        assert {p: d for p, d in {**search_files(first), **diff}.items() if d is not None} == whole
        third = second[:-1]  # the last page is gone
        diff = process.changed_files(third)
        assert {p: d for p, d in {**whole, **diff}.items() if d is not None} == search_files(third)
        assert None in diff.values()  # a file of the old index that the new one lacks
        # background work: it yields the cores to the rebuild and the browser
        assert os.getpriority(os.PRIO_PROCESS, process.process.pid) >= os.getpriority(os.PRIO_PROCESS, 0) + 10
    finally:
        process.close()
    process.close()  # serve's stop and its indexing thread may both close it


def test_the_index_process_ends_when_the_serve_that_started_it_is_killed(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from helpers import REPO

    script = """
import os, sys
from coursegen.features.search.extension import IndexProcess
from coursegen.features.search.sections import page_text
process = IndexProcess()
process.changed_files([("a.html", "A", "Lesson 1", page_text("<p>Words.</p>"))])
print(process.process.pid, flush=True)
os.kill(os.getpid(), 9)  # as a killed serve: nothing is closed or joined
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert run.returncode == -signal.SIGKILL, run.stderr
    child = int(run.stdout.split()[0])
    deadline = time.monotonic() + 600  # only a hang guard: a loaded machine may take long to end it
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{child}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":  # ended, not yet reaped by init
                    return
        except FileNotFoundError:
            return
        time.sleep(0.1)
    os.kill(child, signal.SIGKILL)
    raise AssertionError(f"the index process {child} outlived the process that started it")


def test_serves_background_index_waits_for_a_pause_in_the_rebuilds():
    """A run of saves is indexed after its last: the index's turn would otherwise slow every rebuild of the run.
    The clock is the test's own, so the outcome cannot depend on how the machine schedules threads."""
    from coursegen.features.search.extension import QUIET_SECONDS, BackgroundIndex

    index = BackgroundIndex(ready=lambda: None)
    now, asks, slept = [100.0], [100.0], []

    def sleep(seconds: float) -> None:  # while the turn waits, rebuilds ask again, five times
        slept.append(seconds)
        if len(asks) < 6:
            asks.append(now[0] + seconds / 2)
            index.asked = asks[-1]
        now[0] += seconds

    try:
        index.asked = asks[0]
        index._wait_for_quiet(clock=lambda: now[0], sleep=sleep)
        assert len(slept) == 6  # once per ask: each ask during the pause starts it again
        assert now[0] >= asks[-1] + QUIET_SECONDS  # the turn came a whole pause after the last ask
        assert now[0] < asks[-1] + QUIET_SECONDS + 1e-9  # and no later
    finally:
        index.close()


def test_closing_the_index_while_its_process_starts_waits_for_the_start(monkeypatch):
    # serve may stop just after its first build, while the index's thread is starting the process:
    # joining a process made but not started raised "can only join a started process".
    import multiprocessing.context
    import threading

    from coursegen.features.search.extension import IndexProcess

    starting, go = threading.Event(), threading.Event()
    start = multiprocessing.context.SpawnProcess.start

    def held_start(process):
        starting.set()
        go.wait()
        start(process)

    monkeypatch.setattr(multiprocessing.context.SpawnProcess, "start", held_start)
    index, failures = IndexProcess(), []

    def attempt(call):
        try:
            call()
        except Exception as failure:  # noqa: BLE001 - the test collects what each thread raised
            failures.append((call.__name__, failure))

    indexing = threading.Thread(target=attempt, args=(lambda: index.changed_files([]),))
    indexing.start()
    assert starting.wait(600)
    closing = threading.Thread(target=attempt, args=(index.close,))
    closing.start()
    closing.join(0.5)  # the old close() failed here at once; the new one waits for the start
    go.set()
    closing.join(600)
    indexing.join(600)
    assert not any(name == "close" for name, _ in failures), failures
    assert index.process is None and index.connection is None
