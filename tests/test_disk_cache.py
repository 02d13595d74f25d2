"""A command-line rebuild reuses .coursegen-cache/: the same site as a cold build, redoing only what changed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import replace

import pytest
from helpers import REPO, clean_env, run_cli, without_time_limit
from markdown_it import MarkdownIt

from coursegen import disk_cache
from coursegen.cache import CACHE_FOLDER
from coursegen.stages import render
from coursegen.stages.write import MARKER

RENDERED = disk_cache.RENDERED_FILE


def cached_pages(course) -> list[str]:
    """The source paths whose parsed pages .coursegen-cache/ holds, from every shard."""
    identity, found = disk_cache.coursegen_identity(), []
    for shard in range(disk_cache.SHARDS):
        kept = disk_cache._load(disk_cache.shard_file(course, shard), identity)
        found += [path for path in kept[2] if disk_cache.shard_of(path) == shard]
    return sorted(found)


@pytest.fixture
def renders(monkeypatch) -> list[str]:
    """The unit pages Jinja renders from now on, by slug."""
    found: list[str] = []
    original = render.render_unit

    def counting(env, unit, course, common):
        found.append(unit.slug)
        return original(env, unit, course, common)

    monkeypatch.setattr(render, "render_unit", counting)
    return found


def site_bytes(site) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The sources markdown-it parses from now on (their first line of text after the front matter)."""
    found: list[str] = []
    original = MarkdownIt.parse

    def counting(self, src, env=None):
        found.append((env or {}).get("path", "?"))
        return original(self, src, env)

    monkeypatch.setattr(MarkdownIt, "parse", counting)
    return found


def cold_site(course, tmp_path, name: str = "cold") -> dict[str, bytes]:
    """Build a copy of `course` with no cache at all; return its site."""
    copy = tmp_path / name
    shutil.copytree(course, copy, ignore=shutil.ignore_patterns("site", CACHE_FOLDER))
    assert run_cli_quiet(copy) == 0
    return {
        path: data.replace(str(copy).encode(), str(course).encode()) for path, data in site_bytes(copy / "site").items()
    }


def run_cli_quiet(course) -> int:
    from coursegen.cli import main

    return main(["--root", str(course), "build"])


def build(capsys, course, *options) -> str:
    status, out, err = run_cli(capsys, "--root", course, "build", *options)
    assert status == 0 and "Traceback" not in err, err
    return out


def edit(file, old: str, new: str) -> None:
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new, 1))


def stamps(site) -> dict[str, tuple]:
    """Each file's (inode, mtime) by its site path: the same when the file was linked into a new site."""
    return {
        p.relative_to(site).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in site.rglob("*")
        if p.is_file() and p.name != MARKER
    }


def test_a_rebuild_with_nothing_changed_parses_nothing_and_keeps_the_pages_and_says_the_same(
    mini_course, capsys, parses
):
    first = build(capsys, mini_course)
    site = mini_course / "site"
    before, files = stamps(site), site_bytes(site)
    parses.clear()
    assert build(capsys, mini_course) == first
    assert parses == []
    assert site_bytes(site) == files
    assert stamps(site) == before  # every file linked into the new site, not written


def test_one_changed_lesson_is_the_only_one_parsed_and_the_site_is_a_cold_builds(mini_course, capsys, parses, tmp_path):
    build(capsys, mini_course)
    before = stamps(mini_course / "site")
    edit(mini_course / "lessons" / "02-second.md", "Text.", "Text, changed since the last build.")
    parses.clear()
    build(capsys, mini_course)
    assert parses == ["lessons/02-second.md"]
    after = stamps(mini_course / "site")
    assert after["first.html"] == before["first.html"]  # unchanged: linked from the last site
    assert after["second.html"] != before["second.html"]
    assert b"changed since the last build" in (mini_course / "site" / "second.html").read_bytes()
    assert site_bytes(mini_course / "site") == cold_site(mini_course, tmp_path)


@pytest.mark.parametrize("forked", [True, False], ids=["saved by a fork", "saved in the build's process"])
def test_the_pages_are_saved_whole_whether_a_fork_saves_them_beside_the_write_or_not(
    mini_course, capsys, parses, monkeypatch, forked
):
    """save_pages_aside pickles the pages in a fork while the site is written; where forking is not
    safe it saves them itself. Either way the command ends with every page saved."""
    import os

    forks = []
    real_fork = os.fork

    def counting_fork():
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(os, "fork", counting_fork)
    monkeypatch.setattr(disk_cache, "can_fork", lambda: forked)
    build(capsys, mini_course)
    assert len(forks) == (1 if forked else 0)  # the parse and render pools start no fork for two lessons
    sources = sorted(p.relative_to(mini_course).as_posix() for p in (mini_course / "lessons").glob("*.md"))
    assert [path for path in cached_pages(mini_course) if path.startswith("lessons/")] == sources
    edit(mini_course / "lessons" / "02-second.md", "Text.", "Text, changed since the last build.")
    parses.clear()
    build(capsys, mini_course)
    assert parses == ["lessons/02-second.md"]


def test_one_changed_lesson_is_the_only_page_rendered_and_the_others_are_linked_unread(
    mini_course, capsys, renders, tmp_path, monkeypatch
):
    build(capsys, mini_course)
    before = stamps(mini_course / "site")
    edit(mini_course / "lessons" / "02-second.md", "Text.", "Text, changed again.")
    renders.clear()
    read: list[str] = []
    original = type(mini_course).read_bytes
    with monkeypatch.context() as patched:
        patched.setattr(type(mini_course), "read_bytes", lambda self: read.append(self) or original(self))
        build(capsys, mini_course)
    assert renders == ["second"]
    site = (mini_course / "site").resolve()
    pages_read = {path.name for path in read if path.resolve().parent == site}
    assert not {"first.html", "check.html", "index.html", "404.html"} & pages_read  # neither compared nor read back
    after = stamps(mini_course / "site")
    for page in ("first.html", "check.html", "index.html", "404.html"):
        assert after[page] == before[page]
    assert site_bytes(mini_course / "site") == cold_site(mini_course, tmp_path)
    edit(mini_course / "lessons" / "02-second.md", "changed again", "changed a third time")
    renders.clear()
    build(capsys, mini_course)  # pages linked unread last time are known again
    assert renders == ["second"]
    assert site_bytes(mini_course / "site") == cold_site(mini_course, tmp_path, "cold again")


def test_a_changed_title_renders_every_page_again(mini_course, capsys, renders, tmp_path):
    build(capsys, mini_course)
    text = (mini_course / "lessons" / "02-second.md").read_text()
    title = next(line for line in text.splitlines() if line.startswith("title:"))
    edit(mini_course / "lessons" / "02-second.md", title, "title: Second lesson, renamed")
    renders.clear()
    build(capsys, mini_course)
    assert sorted(renders) == ["check", "first", "second"]  # every page lists every unit's title
    assert site_bytes(mini_course / "site") == cold_site(mini_course, tmp_path)


def test_a_page_edited_by_hand_in_the_site_is_rendered_again_by_the_next_build(mini_course, capsys, renders, tmp_path):
    build(capsys, mini_course)
    (mini_course / "site" / "first.html").write_bytes(b"edited by hand")
    edit(mini_course / "lessons" / "02-second.md", "Text.", "Text, changed.")
    renders.clear()
    build(capsys, mini_course)
    assert sorted(renders) == ["first", "second"]
    assert site_bytes(mini_course / "site") == cold_site(mini_course, tmp_path)


def test_a_written_page_whose_asset_urls_changed_is_read_back_and_filled_anew(mini_course, capsys, renders, tmp_path):
    """As when an asset's bytes change but no template does: the page's own parts are reused, its URLs not."""
    build(capsys, mini_course)
    page, identity = mini_course / "site" / "first.html", disk_cache.coursegen_identity()
    out, package, code, kept = disk_cache._load(mini_course / CACHE_FOLDER / RENDERED, identity)
    _, entry = kept["first"]
    style = next(url for url in entry.urls if url.startswith("assets/style."))  # as an older build's style.css
    assert page.read_bytes().count(style.encode()) == entry.urls.count(style)  # only where the markers were
    page.write_bytes(page.read_bytes().replace(style.encode(), b"assets/style.0123456789.css"))
    urls = tuple("assets/style.0123456789.css" if url == style else url for url in entry.urls)
    found = page.stat()
    kept["first"] = ((found.st_size, found.st_mtime_ns, found.st_ino), replace(entry, urls=urls))
    disk_cache._save(mini_course / CACHE_FOLDER / RENDERED, identity, (out, package, code, kept))
    edit(mini_course / "lessons" / "02-second.md", "Text.", "Text, changed.")
    renders.clear()
    build(capsys, mini_course)
    assert renders == ["second"]  # first.html was filled again from its parts, not rendered
    assert site_bytes(mini_course / "site") == cold_site(mini_course, tmp_path)


def test_an_edited_template_renders_every_page_again(mini_course, capsys, tmp_path):
    build(capsys, mini_course)
    edit(mini_course / "templates" / "lesson.html", "{% block content %}", "{% block content %}<p>edited template</p>")
    build(capsys, mini_course)
    assert b"<p>edited template</p>" in (mini_course / "site" / "first.html").read_bytes()
    assert site_bytes(mini_course / "site") == cold_site(mini_course, tmp_path)


def test_an_edited_kernel_parses_the_pages_that_compute_with_it_again(mini_course, capsys, parses, tmp_path):
    without_time_limit(
        mini_course
    )  # importing numpy on a busy machine takes longer than any number that assumes a speed
    (mini_course / "kernels" / "speed.py").write_text("ANSWER = 41\n")
    edit(mini_course / "lessons" / "02-second.md", "Text.", "The answer is {calc}`speed.ANSWER | d`.")
    build(capsys, mini_course)
    assert '<span class="calc" data-calc="speed.ANSWER">41</span>' in (mini_course / "site" / "second.html").read_text()
    (mini_course / "kernels" / "speed.py").write_text("ANSWER = 42\n")
    parses.clear()
    build(capsys, mini_course)
    assert parses == ["lessons/02-second.md"]  # the page with {calc}; the others do not run the kernels
    assert '<span class="calc" data-calc="speed.ANSWER">42</span>' in (mini_course / "site" / "second.html").read_text()
    assert site_bytes(mini_course / "site") == cold_site(mini_course, tmp_path)


def command_line_build(course) -> subprocess.CompletedProcess:
    """Build `course` in a process of its own, as an author would (a course extension is imported afresh)."""
    return subprocess.run(
        [sys.executable, str(REPO / "build.py"), "--root", str(course), "build"],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=600,
    )


def test_an_edited_extension_parses_every_page_again(mini_course, tmp_path):
    (mini_course / "extensions").mkdir()
    shout = mini_course / "extensions" / "shout.py"
    shout.write_text(
        "from coursegen.stages.roles import register_role\n\n\ndef install(md):\n"
        "    register_role(md, 'shout', lambda token, env, line: token.content.upper())\n"
    )
    edit(mini_course / "course.yaml", "limits:", "extensions: [extensions/shout.py]\nlimits:")
    edit(mini_course / "lessons" / "02-second.md", "Text.", "Say {shout}`hello`.")
    assert command_line_build(mini_course).returncode == 0
    assert "Say HELLO." in (mini_course / "site" / "second.html").read_text()
    assert cached_pages(mini_course) == ["lessons/01-first.md", "lessons/02-second.md", "reviews/03-check.md"]
    edit(shout, "token.content.upper()", "token.content.upper() + '!'")
    done = command_line_build(mini_course)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "Say HELLO!." in (mini_course / "site" / "second.html").read_text()
    assert site_bytes(mini_course / "site") == cold_site(mini_course, tmp_path)


@pytest.mark.parametrize("damage", [b"", b"not a pickle at all", b"\x80\x05garbage"])
def test_a_damaged_cache_is_ignored_and_the_build_is_cold(mini_course, capsys, parses, tmp_path, damage):
    build(capsys, mini_course)
    shards = [disk_cache.shard_file(mini_course, shard) for shard in range(disk_cache.SHARDS)]
    for file in [mini_course / CACHE_FOLDER / disk_cache.SITE_FILE, mini_course / CACHE_FOLDER / RENDERED, *shards]:
        file.write_bytes(damage)
    parses.clear()
    build(capsys, mini_course)
    assert len(parses) == 3
    assert site_bytes(mini_course / "site") == cold_site(mini_course, tmp_path)


def test_a_cache_of_another_coursegen_is_ignored(mini_course, capsys, parses, monkeypatch):
    build(capsys, mini_course)
    monkeypatch.setattr(disk_cache, "__version__", "0.0.0-other")  # as if coursegen were upgraded
    parses.clear()
    build(capsys, mini_course)
    assert len(parses) == 3


def test_deleting_the_cache_is_fine(mini_course, capsys, tmp_path):
    build(capsys, mini_course)
    shutil.rmtree(mini_course / CACHE_FOLDER)
    build(capsys, mini_course)
    assert cached_pages(mini_course) == ["lessons/01-first.md", "lessons/02-second.md", "reviews/03-check.md"]
    assert (mini_course / CACHE_FOLDER / RENDERED).is_file()
    assert site_bytes(mini_course / "site") == cold_site(mini_course, tmp_path)


def test_a_hand_edited_or_missing_site_is_built_again(mini_course, capsys):
    build(capsys, mini_course)
    first = site_bytes(mini_course / "site")
    (mini_course / "site" / "first.html").write_text("edited by hand")
    build(capsys, mini_course)
    assert site_bytes(mini_course / "site") == first
    shutil.rmtree(mini_course / "site")
    build(capsys, mini_course)
    assert site_bytes(mini_course / "site") == first


def test_other_options_or_another_output_folder_build_again(mini_course, capsys, tmp_path, parses):
    build(capsys, mini_course)
    parses.clear()
    out = build(capsys, mini_course, "--out", tmp_path / "elsewhere")
    assert out.endswith(f"into {tmp_path / 'elsewhere'}\n")
    assert site_bytes(tmp_path / "elsewhere") == site_bytes(mini_course / "site")
    assert parses == []  # the pages were kept
    build(capsys, mini_course, "--drafts")
    assert (mini_course / "site" / "index.html").is_file()


def test_warnings_are_printed_again_whether_nothing_or_another_page_changed(mini_course, capsys, parses):
    edit(mini_course / "lessons" / "02-second.md", "Text.", "Text.\n\n## Same\n\nOne.\n\n## Same\n\nTwo.")
    first = run_cli(capsys, "--root", mini_course, "build")
    assert first[0] == 0 and "repeats the anchor '#same'" in first[2], first
    assert run_cli(capsys, "--root", mini_course, "build") == first  # nothing built
    edit(
        mini_course / "lessons" / "01-first.md", "Display math:", "Display math, display math:"
    )  # no new word: no new index file
    parses.clear()
    assert run_cli(capsys, "--root", mini_course, "build") == first  # the warning came with the kept page
    assert parses == ["lessons/01-first.md"]
