"""Incremental builds: a warm Session redoes little, and its output always equals a full build."""

from __future__ import annotations

import os
import random
import re

import pytest
from helpers import without_time_limit

from coursegen.errors import ContentError
from coursegen.pipeline import BuildOptions, build_site
from coursegen.session import Session


@pytest.fixture(autouse=True)
def no_time_limit(request):
    """No test here is about the time limit: the kernels (numpy) may import as slowly as the machine makes them."""
    if "mini_course" in request.fixturenames:
        without_time_limit(request.getfixturevalue("mini_course"))


def outcome(root, cache=None):
    """Return what a build gives: ('ok', outputs, warnings) or ('error', problem texts)."""
    try:
        result = build_site(root, session=cache)
    except ContentError as err:
        return "error", [p.format() for p in err.problems]
    return "ok", result.outputs, [w.format() for w in result.warnings]


def append(file, text):
    file.write_text(file.read_text() + text)


def replace(file, old, new):
    text = file.read_text()
    assert old in text, f"{old!r} not in {file}"
    file.write_text(text.replace(old, new, 1))


def lessons(root):
    return sorted((root / "lessons").glob("*.md"))


EDITS = {
    "append a paragraph": lambda root, rng: append(rng.choice(lessons(root)), f"\nAn added line {rng.random()}.\n"),
    "retitle a lesson": lambda root, rng: replace(
        rng.choice(lessons(root)), "title: ", f"title: Re{rng.randint(0, 99)} "
    ),
    "add a heading": lambda root, rng: append(
        rng.choice(lessons(root)), f"\n## Added heading {rng.randint(0, 9)}\n\nText.\n"
    ),
    "break then keep a link": lambda root, rng: append(rng.choice(lessons(root)), "\nSee [nothing](99-none.md).\n"),
    "edit a template": lambda root, rng: append(root / "templates" / "lesson.html", "{# edited #}\n"),
    "edit the stylesheet": lambda root, rng: append(root / "templates" / "assets" / "style.css", "\n/* edited */\n"),
    "edit course.yaml": lambda root, rng: replace(root / "course.yaml", "description: ", "description: Edited "),
    "edit a kernel": lambda root, rng: replace(root / "kernels" / "kda.py", "TILE = ", "TILE = 1 + "),
    "add a calc role": lambda root, rng: append(rng.choice(lessons(root)), "\nTile {calc}`kda.TILE`.\n"),
    "mark a lesson draft": lambda root, rng: replace(rng.choice(lessons(root)), "---\n", "---\ndraft: true\n"),
}


def undo_broken_links(root):
    """Remove the deliberately broken links again, so later steps can build."""
    for file in lessons(root):
        file.write_text(file.read_text().replace("\nSee [nothing](99-none.md).\n", ""))


@pytest.mark.parametrize("seed", [1, 2])
def test_incremental_builds_equal_full_builds_over_random_edits(mini_course, seed):
    rng = random.Random(seed)
    cache = Session()
    assert outcome(mini_course, cache) == outcome(mini_course)
    for step in range(14):
        name = rng.choice(sorted(EDITS))
        EDITS[name](mini_course, rng)
        assert outcome(mini_course, cache) == outcome(mini_course), f"step {step}: {name}"
        if name == "break then keep a link":
            undo_broken_links(mini_course)
            assert outcome(mini_course, cache) == outcome(mini_course), f"step {step}: repaired link"


def test_incremental_equals_full_on_the_sample_course_with_widgets_and_questions(sample_course):
    cache = Session()
    assert outcome(sample_course, cache) == outcome(sample_course)
    lesson = sorted((sample_course / "lessons").glob("*.md"))[0]
    append(lesson, "\nOne more sentence for the search index.\n")
    assert outcome(sample_course, cache) == outcome(sample_course)
    assert cache.parsed == [lesson.relative_to(sample_course).as_posix()]
    append(sample_course / "kernels" / "overflow.py", "\n# touched\n")
    assert outcome(sample_course, cache) == outcome(sample_course)


def test_editing_one_lesson_body_reparses_and_rerenders_only_that_lesson(mini_course):
    cache = Session()
    build_site(mini_course, session=cache)
    append(mini_course / "lessons" / "02-second.md", "\nOne more paragraph.\n")
    build_site(mini_course, session=cache)
    assert cache.parsed == ["lessons/02-second.md"]
    assert cache.rerendered == ["second"]


def test_an_unchanged_course_rebuilds_nothing(mini_course):
    cache = Session()
    build_site(mini_course, session=cache)
    build_site(mini_course, session=cache)
    assert cache.parsed == [] and cache.rerendered == []


def test_a_new_title_rerenders_the_pages_that_show_it(mini_course):
    cache = Session()
    build_site(mini_course, session=cache)
    replace(mini_course / "lessons" / "02-second.md", "title: Second lesson", "title: Second, renamed")
    outputs = build_site(mini_course, session=cache).outputs
    assert cache.parsed == ["lessons/02-second.md"]
    assert {"first", "second", "check"} <= set(cache.rerendered)  # neighbours name it in their navigation
    assert "index.html" in cache.rerendered  # the course map lists it
    assert "Second, renamed" in outputs["first.html"].decode()
    assert "Second, renamed" in outputs["index.html"].decode()


def test_a_template_edit_rerenders_every_page_but_reparses_none(mini_course):
    cache = Session()
    build_site(mini_course, session=cache)
    append(mini_course / "templates" / "lesson.html", "{# a comment #}\n")
    build_site(mini_course, session=cache)
    assert cache.parsed == []
    assert sorted(cache.rerendered) == ["404.html", "check", "first", "index.html", "review-session.html", "second"]


def test_a_kernel_edit_reparses_only_pages_that_compute_with_kernels(mini_course):
    append(mini_course / "lessons" / "02-second.md", "\nTile {calc}`kda.TILE`.\n")
    cache = Session()
    build_site(mini_course, session=cache)
    append(mini_course / "kernels" / "kda.py", "\n# touched\n")
    build_site(mini_course, session=cache)
    assert cache.parsed == ["lessons/02-second.md"]


def test_asset_urls_are_filled_in_after_rendering(mini_course):
    outputs = build_site(mini_course).outputs
    page = outputs["second.html"].decode()
    assert "\ue000" not in page and "\ue001" not in page
    assert re.search(r'href="assets/style\.[0-9a-f]{10}\.css"', page)


def test_a_render_from_a_warm_memo_equals_one_from_a_fresh_memo(sample_course):
    from coursegen.errors import Problems
    from coursegen.extensions import built_in_extensions
    from coursegen.incremental import Changes, ParseKept, RenderKept, SourcesRead
    from coursegen.memo import Memo
    from coursegen.stages.assets import Assets
    from coursegen.stages.config import load_config
    from coursegen.stages.link import link_course
    from coursegen.stages.load import load_sources
    from coursegen.stages.parse import ParseContext, parse_pages, parser
    from coursegen.stages.render import RenderOptions, render_site

    root, problems, memo = sample_course, Problems(), Memo()
    changes = Changes(memo)
    config, sources = load_config(root, problems), load_sources(root, problems)
    session = Session()
    extensions = built_in_extensions(session)
    ctx = ParseContext(root, {s.path: s.slug for s in sources}, extensions.prepare(root, config, problems), memo=memo)
    kept = ParseKept(memo, changes, SourcesRead.of(sources), None, None)
    pages, _ = parse_pages(parser(extensions, memo)[0], sources, ctx, problems, kept)
    course = link_course(config, pages, problems)
    assets = Assets()
    extensions.add_files(course, root, assets, problems)
    shown = extensions.page_context(config)  # what templates get from the extensions (logo, favicon, …)
    first, record = render_site(
        course, root, RenderOptions(), assets, kept=RenderKept(memo, changes), page_context=shown
    )
    assert record.rerendered  # the memo was cold: every page rendered
    again, record = render_site(
        course, root, RenderOptions(), assets, kept=RenderKept(memo, changes, record), page_context=shown
    )
    assert record.rerendered == ()  # warm: every page came from the memo
    assert first == again == render_site(course, root, RenderOptions(), assets, page_context=shown)[0]
    assets.cancel()  # the index and service worker, made after rendering, are not needed here


def test_parsing_in_worker_processes_gives_the_same_site(tmp_path, monkeypatch):
    from helpers import REPO

    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))  # for this test only: it has a kernels.py too
    from generated_course import copy_engine_parts, write_course

    root = write_course(tmp_path / "gen", count=30)
    copy_engine_parts(REPO, root)
    serial = build_site(root, BuildOptions(jobs=1), Session()).outputs
    parallel_cache = Session()
    assert build_site(root, BuildOptions(jobs=3), parallel_cache).outputs == serial
    assert build_site(root, BuildOptions(jobs=2), Session()).outputs == serial
    assert len(parallel_cache.parsed) == 30
    # Templates compile while the pages parse; one that does not compile is still reported, with its line.
    append(root / "templates" / "partials" / "toc.html", "{% if %}\n")
    for jobs in (2, 1):
        with pytest.raises(ContentError) as raised:
            build_site(root, BuildOptions(jobs=jobs), Session())
        assert raised.value.problems[0].path == "templates/partials/toc.html"


def test_a_retitled_section_rerenders_the_review_that_sends_learners_there(sample_course):
    cache = Session()
    build_site(sample_course, session=cache)
    replace(sample_course / "lessons" / "02-kda.md", "## Fade, erase, write", "## Fade, Erase, Write")
    assert outcome(sample_course, cache) == outcome(sample_course)
    assert "review-a" in cache.rerendered


def test_a_same_size_edit_in_the_same_clock_tick_is_seen_once_the_watcher_reports_it(mini_course):
    lesson = mini_course / "lessons" / "02-second.md"
    cache = Session()
    build_site(mini_course, session=cache)
    stat = lesson.stat()
    lesson.write_text(lesson.read_text().replace("title: Second lesson", "title: Second lessoN"))
    os.utime(lesson, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # as if saved within one clock tick
    cache.forget([lesson])
    assert "Second lessoN" in build_site(mini_course, session=cache).outputs["second.html"].decode()


def test_a_missing_front_matter_template_is_found_once_it_is_written(mini_course):
    """A missing `template:` is reported until the template is written, then the page builds as from scratch."""
    cache = Session()
    assert outcome(mini_course, cache)[0] == "ok"
    lesson = mini_course / "lessons" / "02-second.md"
    replace(lesson, "title: Second lesson", "title: Second lesson\ntemplate: wide.html")
    cache.forget([lesson])
    assert outcome(mini_course, cache)[1][0].startswith(
        "lessons/02-second.md:3: template 'wide.html' is in neither templates/ nor the theme"
    )
    (mini_course / "templates" / "wide.html").write_text((mini_course / "templates" / "lesson.html").read_text())
    assert outcome(mini_course, cache) == outcome(mini_course)


# ---- serve's rebuilds: the watcher names what changed, and nothing else is looked at again ----


def snapshot(root):
    """Return {course path: bytes} of every file a build may read (the site and caches left out)."""
    return {
        f.relative_to(root).as_posix(): f.read_bytes()
        for f in sorted(root.rglob("*"))
        if f.is_file()
        and not f.is_symlink()
        and f.relative_to(root).parts[0] not in ("site", ".coursegen-cache", "node_modules")
        and "__pycache__" not in f.parts
    }


def toggle(file, one, other):
    """Replace `one` by `other` in the file, or back when `other` is what it holds."""
    text = file.read_text()
    file.write_text(text.replace(one, other, 1) if one in text else text.replace(other, one, 1))


FIRST_UNIT, SECOND_UNIT = "  - slug: first\n    part: Part one\n", "  - slug: second\n    part: Part one\n"
WATCHED_EDITS = {
    **EDITS,
    "rename an anchor others link to": lambda root, rng: toggle(
        root / "lessons" / "02-second.md", "## Details", "## Fine details"
    ),
    "link to an anchor": lambda root, rng: append(
        root / "reviews" / "03-check.md", "\nSee [the details](../lessons/02-second.md#details).\n"
    ),
    "swap two units in course.yaml": lambda root, rng: toggle(
        root / "course.yaml", FIRST_UNIT + SECOND_UNIT, SECOND_UNIT + FIRST_UNIT
    ),
    "add a widget": lambda root, rng: append(root / "lessons" / "02-second.md", "\n```widget overflow-slider\n```\n"),
    "edit a widget spec": lambda root, rng: toggle(
        root / "widgets" / "overflow-slider" / "spec.yaml", "default: -5\n", "default: -6\n"
    ),
    "add or remove a draft": lambda root, rng: (
        (root / "lessons" / "05-extra.md").unlink()
        if (root / "lessons" / "05-extra.md").exists()
        else (root / "lessons" / "05-extra.md").write_text("---\ntitle: Extra\ndraft: true\n---\n\nText.\n")
    ),
}


def undo_anchor_links(root):
    file = root / "reviews" / "03-check.md"
    file.write_text(file.read_text().replace("\nSee [the details](../lessons/02-second.md#details).\n", ""))


def watched_build(root, cache, before):
    """Tell the cache what changed since `before` (as serve's watcher does), build, return the outcome."""
    after = snapshot(root)
    cache.note_changes(
        root, sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
    )
    return outcome(root, cache), after


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_watched_rebuilds_equal_full_builds_over_random_edits(mini_course, seed):
    rng = random.Random(seed)
    cache = Session()
    assert outcome(mini_course, cache) == outcome(mini_course)
    cache.trust_watcher()
    before = snapshot(mini_course)
    for step in range(16):
        name = rng.choice(sorted(WATCHED_EDITS))
        WATCHED_EDITS[name](mini_course, rng)
        got, before = watched_build(mini_course, cache, before)
        assert got == outcome(mini_course), f"step {step}: {name}"
        if name in ("break then keep a link", "rename an anchor others link to", "link to an anchor"):
            undo_broken_links(mini_course)
            if rng.random() < 0.5:
                undo_anchor_links(mini_course)
            got, before = watched_build(mini_course, cache, before)
            assert got == outcome(mini_course), f"step {step}: after {name}, links repaired"


def test_a_watched_edit_reads_lists_and_stats_no_other_source(mini_course, monkeypatch):
    import coursegen.incremental

    cache = Session()
    build_site(mini_course, session=cache)
    cache.trust_watcher()
    build_site(mini_course, session=cache)  # the look at everything after the watches are in place
    read, looked = [], []
    real_read, real_stat, real_scandir = coursegen.incremental.read_text, os.stat, os.scandir
    monkeypatch.setattr(
        coursegen.incremental, "read_text", lambda file, *rest: read.append(file.name) or real_read(file, *rest)
    )

    def stat(path, *args, **kwargs):
        looked.append(str(path))
        return real_stat(path, *args, **kwargs)

    def scandir(path="."):
        looked.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "scandir", scandir)
    lesson = mini_course / "lessons" / "02-second.md"
    append(lesson, "\nOne more paragraph.\n")
    cache.note_changes(mini_course, ["lessons/02-second.md"])
    outputs = build_site(mini_course, session=cache).outputs
    monkeypatch.undo()
    assert read == ["02-second.md"]
    sources = [path for path in looked if "/lessons" in path or "/reviews" in path]
    assert sources and all(path == str(lesson) for path in sources), sources
    assert cache.parsed == ["lessons/02-second.md"] and cache.rerendered == ["second"]
    assert outputs == build_site(mini_course).outputs


def test_a_new_heading_rerenders_the_review_that_links_there_and_nothing_else(sample_course):
    cache = Session()
    build_site(sample_course, session=cache)
    cache.trust_watcher()
    build_site(sample_course, session=cache)
    replace(sample_course / "lessons" / "02-kda.md", "## Fade, erase, write", "## Fade, Erase, Write")
    cache.note_changes(sample_course, ["lessons/02-kda.md"])
    assert outcome(sample_course, cache) == outcome(sample_course)
    assert "review-a" in cache.rerendered and "kda" in cache.rerendered
    assert "index.html" not in cache.rerendered  # the course map shows titles, not headings
    append(sample_course / "lessons" / "02-kda.md", "\nOne more sentence.\n")
    cache.note_changes(sample_course, ["lessons/02-kda.md"])
    assert outcome(sample_course, cache) == outcome(sample_course)
    assert cache.rerendered == ["kda"]  # same headings: the review is left alone


def test_a_watched_edit_of_a_draft_equals_a_full_build(mini_course):
    cache = Session()
    build_site(mini_course, session=cache)
    cache.trust_watcher()
    before = snapshot(mini_course)
    replace(mini_course / "lessons" / "02-second.md", "---\n", "---\ndraft: true\n")
    for _ in range(2):  # made a draft, then edited as a draft
        got, before = watched_build(mini_course, cache, before)
        assert got == outcome(mini_course)
        append(mini_course / "lessons" / "02-second.md", "\nA draft's new line.\n")


def test_the_records_of_a_build_are_plain_data_that_pickle(sample_course):
    """The records a later on-disk cache would save: every stage's record pickles and comes back equal
    in what the next build compares (the live parser and Jinja environment stay in the memo)."""
    import pickle

    cache = Session()
    build_site(sample_course, BuildOptions(jobs=1), session=cache)
    records = cache.records
    assert None not in (records.config, records.sources, records.parse, records.link, records.render)
    back = pickle.loads(pickle.dumps(records))
    assert back.sources.sources == records.sources.sources and back.parse == records.parse
    assert back.render.inputs == records.render.inputs and back.render.headings == records.render.headings
    assert back.link.linkers == records.link.linkers and back.config.text == records.config.text
    for kind in ("page", "rendered", "filled"):
        assert pickle.loads(pickle.dumps(cache.memo.table(kind))).keys() == cache.memo.table(kind).keys()


def test_per_unit_work_is_done_again_for_replaced_units_alone_and_for_all_when_its_input_changes():
    from dataclasses import dataclass

    from coursegen.memo import Memo
    from coursegen.model import per_unit

    @dataclass(frozen=True)
    class Unit:
        slug: str

    made: list[str] = []

    def make(unit):
        made.append(unit.slug)
        return unit.slug.upper()

    memo, units = Memo(), (Unit("a"), Unit("b"), Unit("c"))
    assert per_unit(memo, "search pages", units, make, "en") == ["A", "B", "C"]
    edited = (units[0], Unit("x"), units[2])  # the link stage kept a and c, made the edited unit again
    made.clear()
    assert per_unit(memo, "search pages", edited, make, "en") == ["A", "X", "C"] and made == ["x"]
    made.clear()
    assert per_unit(memo, "search pages", edited, make, "fr") == ["A", "X", "C"] and made == ["a", "x", "c"]
    made.clear()
    assert per_unit(memo, "search pages", edited[:2], make, "fr") == ["A", "X"] and made == ["a", "x"]


def test_a_watched_retitle_or_edit_gives_the_search_index_and_service_worker_of_a_full_build(mini_course):
    """The index, its key and the service worker's page digests are kept per unit (model.per_unit)."""
    cache = Session()
    build_site(mini_course, session=cache)
    cache.trust_watcher()
    build_site(mini_course, session=cache)
    lesson = mini_course / "lessons" / "02-second.md"
    for old, new in (("\n## ", "\nA searchable zebra.\n\n## "), ("title: ", "title: Renamed ")):
        replace(lesson, old, new)
        cache.note_changes(mini_course, ["lessons/02-second.md"])
        warm, cold = build_site(mini_course, session=cache).outputs, build_site(mini_course).outputs
        kept = {path: data for path, data in warm.items() if path.startswith("search/") or path == "sw.js"}
        assert kept == {path: data for path, data in cold.items() if path.startswith("search/") or path == "sw.js"}
        assert warm == cold
    index = b"".join(data for path, data in warm.items() if path.startswith("search/"))
    assert b"zebra" in index and b"Renamed" in index


def test_a_parse_keys_digest_tells_every_part_apart():
    from coursegen.incremental import key_digest

    keys = [
        ("lessons/a.md", "lesson", "a", "text\n"),
        ("lessons/a.md", "lesson", "a", "text\n", "shared"),
        ("lessons/a.md", "lesson", "a", "text\n\0"),
        ("lessons/a.md", "lesson", "atext\n", ""),  # the same characters, cut elsewhere
        ("1",),
        (1,),
    ]
    digests = [key_digest(key) for key in keys]
    assert len(set(digests)) == len(keys)
    assert key_digest(("lessons/a.md", "lesson", "a", "text\n")) == digests[0]  # the same key, the same digest


def test_a_watched_media_or_theme_edit_gives_the_service_worker_of_a_full_build(mini_course):
    """sw.js keeps the units' media files per unit and the theme's files by the theme's signature: an
    image added to a page, a changed image and a changed theme file each give a cold build's site."""
    cache = Session()
    build_site(mini_course, session=cache)
    cache.trust_watcher()
    build_site(mini_course, session=cache)
    lesson, image = mini_course / "lessons" / "02-second.md", mini_course / "media" / "dot.svg"
    image.parent.mkdir()
    image.write_text('<svg xmlns="http://www.w3.org/2000/svg"/>\n')
    versions = set()
    for changed, edit in (
        (["media/dot.svg", "lessons/02-second.md"], lambda: append(lesson, "\n![A dot](../media/dot.svg)\n")),
        (["media/dot.svg"], lambda: image.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="2"/>\n')),
        (["templates/assets/style.css"], lambda: append(mini_course / "templates" / "assets" / "style.css", "\n")),
        (["templates/lesson.html"], lambda: append(mini_course / "templates" / "lesson.html", "{# edited #}\n")),
    ):
        edit()
        cache.note_changes(mini_course, changed)
        warm, cold = build_site(mini_course, session=cache).outputs, build_site(mini_course).outputs
        assert warm["sw.js"] == cold["sw.js"], changed
        assert warm == cold, changed
        versions.add(re.search(rb'VERSION = "(\w+)"', warm["sw.js"]).group(1))
    assert b'"media/media-dot.svg"' in warm["sw.js"] and len(versions) == 4


def test_watched_rebuilds_give_a_full_builds_csp_warnings_and_question_problems(mini_course):
    """csp.check_pages and the questions' check keep each page's problems (model.per_unit): a page that
    gains or loses one, a policy that changes and a unit withdrawn that a kept page's question draws on
    each give a cold build's outcome."""
    cache = Session()
    outcome(mini_course, cache)
    cache.trust_watcher()
    before = snapshot(mini_course)
    review, config = mini_course / "reviews" / "03-check.md", mini_course / "course.yaml"
    steps = [
        lambda: append(
            mini_course / "lessons" / "02-second.md", "\n![A far chart](https://charts.example.com/a.png)\n"
        ),
        lambda: append(config, "csp:\n  img-src: [https://charts.example.com]\n"),
        lambda: append(
            review,
            "\n:::: recall {lessons: [2]}\nWhat does the second lesson show?\n::: answer\nIts details.\n:::\n::::\n",
        ),
        lambda: replace(mini_course / "lessons" / "02-second.md", "---\n", "---\ndraft: true\n"),
    ]
    results = []
    for number, step in enumerate(steps):
        step()
        got, before = watched_build(mini_course, cache, before)
        assert got == outcome(mini_course), f"step {number}"
        results.append(got)
    assert any("will block https://charts.example.com/a.png" in w for w in results[0][2])
    assert results[1][0] == "ok" and not any("will block" in w for w in results[1][2])
    assert results[3][0] == "error" and any("draws on unit 2 ('second')" in p for p in results[3][1])
