"""Incremental builds: a warm BuildCache redoes little, and its output always equals a full build."""
from __future__ import annotations

import os
import random
import re

import pytest

from coursegen.errors import ContentError
from coursegen.incremental import BuildCache
from coursegen.pipeline import build_site


def outcome(root, cache=None):
    """Return what a build gives: ('ok', outputs, warnings) or ('error', problem texts)."""
    try:
        result = build_site(root, cache=cache)
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
    "retitle a lesson": lambda root, rng: replace(rng.choice(lessons(root)), "title: ", f"title: Re{rng.randint(0, 99)} "),
    "add a heading": lambda root, rng: append(rng.choice(lessons(root)), f"\n## Added heading {rng.randint(0, 9)}\n\nText.\n"),
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
    cache = BuildCache()
    assert outcome(mini_course, cache) == outcome(mini_course)
    for step in range(14):
        name = rng.choice(sorted(EDITS))
        EDITS[name](mini_course, rng)
        assert outcome(mini_course, cache) == outcome(mini_course), f"step {step}: {name}"
        if name == "break then keep a link":
            undo_broken_links(mini_course)
            assert outcome(mini_course, cache) == outcome(mini_course), f"step {step}: repaired link"


def test_incremental_equals_full_on_the_sample_course_with_widgets_and_questions(sample_course):
    cache = BuildCache()
    assert outcome(sample_course, cache) == outcome(sample_course)
    lesson = sorted((sample_course / "lessons").glob("*.md"))[0]
    append(lesson, "\nOne more sentence for the search index.\n")
    assert outcome(sample_course, cache) == outcome(sample_course)
    assert cache.parsed == [lesson.relative_to(sample_course).as_posix()]
    append(sample_course / "kernels" / "overflow.py", "\n# touched\n")
    assert outcome(sample_course, cache) == outcome(sample_course)


def test_editing_one_lesson_body_reparses_and_rerenders_only_that_lesson(mini_course):
    cache = BuildCache()
    build_site(mini_course, cache=cache)
    append(mini_course / "lessons" / "02-second.md", "\nOne more paragraph.\n")
    build_site(mini_course, cache=cache)
    assert cache.parsed == ["lessons/02-second.md"]
    assert cache.rerendered == ["second"]


def test_an_unchanged_course_rebuilds_nothing(mini_course):
    cache = BuildCache()
    build_site(mini_course, cache=cache)
    build_site(mini_course, cache=cache)
    assert cache.parsed == [] and cache.rerendered == []


def test_a_new_title_rerenders_the_pages_that_show_it(mini_course):
    cache = BuildCache()
    build_site(mini_course, cache=cache)
    replace(mini_course / "lessons" / "02-second.md", "title: Second lesson", "title: Second, renamed")
    outputs = build_site(mini_course, cache=cache).outputs
    assert cache.parsed == ["lessons/02-second.md"]
    assert {"first", "second", "check"} <= set(cache.rerendered)  # neighbours name it in their navigation
    assert "index.html" in cache.rerendered  # the course map lists it
    assert "Second, renamed" in outputs["first.html"].decode()
    assert "Second, renamed" in outputs["index.html"].decode()


def test_a_template_edit_rerenders_every_page_but_reparses_none(mini_course):
    cache = BuildCache()
    build_site(mini_course, cache=cache)
    append(mini_course / "templates" / "lesson.html", "{# a comment #}\n")
    build_site(mini_course, cache=cache)
    assert cache.parsed == []
    assert sorted(cache.rerendered) == ["404.html", "check", "first", "index.html", "second"]


def test_a_kernel_edit_reparses_only_pages_that_compute_with_kernels(mini_course):
    append(mini_course / "lessons" / "02-second.md", "\nTile {calc}`kda.TILE`.\n")
    cache = BuildCache()
    build_site(mini_course, cache=cache)
    append(mini_course / "kernels" / "kda.py", "\n# touched\n")
    build_site(mini_course, cache=cache)
    assert cache.parsed == ["lessons/02-second.md"]


def test_asset_urls_are_filled_in_after_rendering(mini_course):
    outputs = build_site(mini_course).outputs
    page = outputs["second.html"].decode()
    assert "\ue000" not in page and "\ue001" not in page
    assert re.search(r'href="assets/style\.[0-9a-f]{10}\.css"', page)


def test_a_cached_render_equals_rendering_without_the_cache(sample_course):
    from coursegen.assets import Assets
    from coursegen.config import load_config
    from coursegen.errors import Problems
    from coursegen.link import link_course
    from coursegen.markdown import ParseContext
    from coursegen.pipeline import EXTENSIONS, prepare_extensions
    from coursegen.render import RenderOptions, render_site
    from coursegen.sources import load_sources
    root, problems, cache = sample_course, Problems(), BuildCache()
    config, sources = load_config(root, problems), load_sources(root, problems)
    ctx = ParseContext(root, {s.path: s.slug for s in sources}, prepare_extensions(root, config, problems))
    course = link_course(config, cache.parse_pages(cache.markdown(EXTENSIONS), sources, ctx, problems), problems)
    assets = Assets()
    for extension in EXTENSIONS:
        getattr(extension, "add_files", lambda *args: None)(course, root, assets, problems)
    assert render_site(course, root, RenderOptions(), assets) == render_site(course, root, RenderOptions(), assets,
                                                                            cache=cache)


def test_parsing_in_worker_processes_gives_the_same_site(tmp_path):
    import sys
    from helpers import REPO
    sys.path.insert(0, str(REPO / "benchmarks"))
    from generated_course import copy_engine_parts, write_course
    root = write_course(tmp_path / "gen", count=30)
    copy_engine_parts(REPO, root)
    serial = build_site(root, cache=BuildCache(parallel=False)).outputs
    parallel_cache = BuildCache(parallel=True)
    assert build_site(root, cache=parallel_cache).outputs == serial
    assert len(parallel_cache.parsed) == 30
    # Templates compile while the pages parse; one that does not compile is still reported, with its line.
    append(root / "templates" / "partials" / "toc.html", "{% if %}\n")
    for parallel in (True, False):
        with pytest.raises(ContentError) as raised:
            build_site(root, cache=BuildCache(parallel=parallel))
        assert raised.value.problems[0].path == "templates/partials/toc.html"


def test_a_retitled_section_rerenders_the_review_that_sends_learners_there(sample_course):
    cache = BuildCache()
    build_site(sample_course, cache=cache)
    replace(sample_course / "lessons" / "02-kda.md", "## Fade, erase, write", "## Fade, Erase, Write")
    assert outcome(sample_course, cache) == outcome(sample_course)
    assert "review-a" in cache.rerendered


def test_a_same_size_edit_in_the_same_clock_tick_is_seen_once_the_watcher_reports_it(mini_course):
    lesson = mini_course / "lessons" / "02-second.md"
    cache = BuildCache()
    build_site(mini_course, cache=cache)
    stat = lesson.stat()
    lesson.write_text(lesson.read_text().replace("title: Second lesson", "title: Second lessoN"))
    os.utime(lesson, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # as if saved within one clock tick
    cache.forget([lesson])
    assert "Second lessoN" in build_site(mini_course, cache=cache).outputs["second.html"].decode()


def test_a_missing_front_matter_template_is_found_once_it_is_written(mini_course):
    """A missing `template:` is reported until the template is written, then the page builds as from scratch."""
    cache = BuildCache(parallel=False)
    assert outcome(mini_course, cache)[0] == "ok"
    lesson = mini_course / "lessons" / "02-second.md"
    replace(lesson, "title: Second lesson", "title: Second lesson\ntemplate: wide.html")
    cache.forget([lesson])
    assert outcome(mini_course, cache)[1][0].startswith("lessons/02-second.md:3: template 'wide.html' is in neither templates/ nor the theme")
    (mini_course / "templates" / "wide.html").write_text((mini_course / "templates" / "lesson.html").read_text())
    assert outcome(mini_course, cache) == outcome(mini_course)
