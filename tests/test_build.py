"""The whole build: outputs, determinism, relative URLs, sitemap, CLI behaviour."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import urllib.request
from html.parser import HTMLParser

import pytest
from helpers import REPO, run_cli, serving

from coursegen.pipeline import build_site


def test_sample_course_builds_every_page_type(sample_course, capsys):
    status, out, err = run_cli(capsys, "--root", sample_course, "build")
    assert status == 0, err
    site = sample_course / "site"
    for name in ("index.html", "404.html", ".nojekyll"):
        assert (site / name).is_file()
    pages = {p.name for p in site.glob("*.html")}
    assert {"kda.html", "review-a.html"} <= pages
    assert "built" in out


def test_two_builds_are_byte_identical(mini_course):
    first = build_site(mini_course).outputs
    second = build_site(mini_course).outputs
    assert first == second


def test_assets_have_content_hashed_names(mini_course):
    outputs = build_site(mini_course).outputs
    assets = [p for p in outputs if p.startswith("assets/")]
    assert assets and all(re.search(r"\.[0-9a-f]{10}\.(css|js|json|svg|txt|woff2)$", p) for p in assets)


def test_every_internal_url_is_relative(mini_course):
    outputs = build_site(mini_course).outputs
    for path, data in outputs.items():
        if path.endswith(".html") and path != "404.html":
            for url in re.findall(r'(?:href|src)="([^"]*)"', data.decode()):
                assert not url.startswith("/"), f"{path} has a root-relative URL {url}"
                if "://" in url:
                    assert url.startswith("https://example.org/mini/"), f"{path} links out to {url}"


def test_sitemap_lists_published_units_when_base_url_is_set(mini_course):
    sitemap = build_site(mini_course).outputs["sitemap.xml"].decode()
    assert "<loc>https://example.org/mini/first.html</loc>" in sitemap
    assert "later" not in sitemap  # upcoming units have no page


def test_no_sitemap_without_base_url(sample_course):
    assert "sitemap.xml" not in build_site(sample_course).outputs


def test_course_map_shows_upcoming_units_without_links(mini_course):
    index = build_site(mini_course).outputs["index.html"].decode()
    assert 'href="first.html"' in index
    assert "Still to come" in index and "later.html" not in index


def test_pages_have_title_toc_and_prev_next(mini_course):
    outputs = build_site(mini_course).outputs
    second = outputs["second.html"].decode()
    assert "<title>Second lesson · Lesson 2 · Mini course</title>" in second
    assert "Lesson 2 of 4" in second
    assert 'rel="prev" href="first.html"' in second and 'rel="next" href="check.html"' in second
    assert '<a href="#details">Details</a>' in second


def test_the_table_of_contents_nests_sub_sections_inside_their_section(mini_course):
    """Numbers count sections only: each h3 sits in a list inside its h2's item."""
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text() + "\n### Inner one\n\nText.\n\n### Inner two\n\nText.\n\n## Outer\n\nText.\n")
    page = build_site(mini_course).outputs["second.html"].decode()
    toc = page[page.index('<nav class="toc"') : page.index("</nav>", page.index('<nav class="toc"'))]

    class Depths(HTMLParser):
        depth, found = 0, []

        def handle_starttag(self, tag, attrs):
            self.depth += tag == "ol"
            if tag == "li":
                self.found.append((dict(attrs)["class"], self.depth))

        def handle_endtag(self, tag):
            self.depth -= tag == "ol"

    parser = Depths()
    parser.feed(toc)
    assert ("toc-level-3", 2) in parser.found and ("toc-level-2", 1) in parser.found
    assert all(depth == (1 if level == "toc-level-2" else 2) for level, depth in parser.found)
    assert parser.depth == 0  # every list closed


def test_site_works_under_a_sub_path(mini_course, tmp_path):
    outputs = build_site(mini_course).outputs
    (tmp_path / "host" / "repo").mkdir(parents=True)
    for path, data in outputs.items():
        (tmp_path / "host" / "repo" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "host" / "repo" / path).write_bytes(data)
    with serving(tmp_path / "host") as base:
        for page in ("index.html", "first.html", "check.html"):
            html = urllib.request.urlopen(base + "repo/" + page).read().decode()
            for url in re.findall(r'(?:href|src)="([^"]*)"', html):
                if "://" not in url and not url.startswith("#"):
                    assert urllib.request.urlopen(base + "repo/" + url.split("#")[0]).status == 200


def test_check_writes_nothing(mini_course, capsys):
    status, out, _ = run_cli(capsys, "--root", mini_course, "check")
    assert status == 0 and out.startswith("ok:")
    assert not (mini_course / "site").exists()


def test_build_replaces_the_previous_site_completely(mini_course, capsys):
    from coursegen.stages.write import write_site

    # The previous site, one coursegen wrote (its marker lists these), with pages the next one lacks.
    write_site({"index.html": b"old", "stale.html": b"old", "old/page.html": b"old"}, mini_course / "site")
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    assert not (mini_course / "site" / "stale.html").exists() and not (mini_course / "site" / "old").exists()
    assert (mini_course / "site" / "first.html").exists()


def test_drafts_build_only_with_the_drafts_flag(mini_course):
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("title: Second lesson", "title: Second lesson\ndraft: true"))
    (mini_course / "lessons" / "01-first.md").write_text(
        (mini_course / "lessons" / "01-first.md").read_text().replace("[the second lesson](02-second.md#details)", "it")
    )
    (mini_course / "reviews" / "03-check.md").write_text("---\ntitle: Check\n---\n\nText.\n")
    from coursegen.pipeline import BuildOptions

    assert "second.html" not in build_site(mini_course).outputs
    assert "second.html" in build_site(mini_course, BuildOptions(drafts=True)).outputs


def test_help_is_available_for_every_command(capsys):
    for command in ([], ["build"], ["serve"], ["check"]):
        status, out, _ = run_cli(capsys, *command, "--help")
        assert status == 0 and "usage:" in out


def test_console_script_is_declared():
    assert 'coursegen = "coursegen.cli:run"' in (REPO / "pyproject.toml").read_text()


def test_the_entry_point_exits_with_the_commands_status_and_its_output_flushed(tmp_path):
    """`run` leaves through os._exit, so the status and every printed line must survive that."""
    enter = "import sys; from coursegen.cli import run; sys.argv[0] = 'coursegen'; run()"
    good = subprocess.run(
        [sys.executable, "-c", enter, "--root", str(REPO), "check"], capture_output=True, text=True, cwd=REPO
    )
    assert good.returncode == 0 and good.stdout.startswith("ok: ")
    bad = subprocess.run(
        [sys.executable, "-c", enter, "--root", str(tmp_path), "build"], capture_output=True, text=True, cwd=REPO
    )
    assert bad.returncode == 1
    assert "course.yaml:1: no course.yaml found" in bad.stderr and "nothing was written" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_build_py_is_thin():
    assert len((REPO / "build.py").read_text().splitlines()) < 20
    assert shutil.which("python3")


def test_the_cycle_collector_is_paused_during_a_build_and_back_after_it(mini_course, tmp_path):
    import gc

    import pytest

    from coursegen.errors import ContentError
    from coursegen.pipeline import collector_paused

    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    build_site(mini_course)
    assert gc.isenabled()
    with pytest.raises(ContentError):
        build_site(tmp_path)  # no course.yaml
    assert gc.isenabled()


def test_a_command_line_build_writes_with_its_objects_frozen_and_unfreezes_them_after(
    mini_course, tmp_path, monkeypatch
):
    import gc

    import coursegen.cli as cli
    import coursegen.stages.write as writing

    seen = []
    write = writing.write_site

    def watched(*args, **kwargs):
        seen.append((gc.isenabled(), gc.get_freeze_count()))
        return write(*args, **kwargs)

    monkeypatch.setattr(writing, "write_site", watched)  # imported by the command when it writes
    assert cli.main(["--root", str(mini_course), "build", "--out", str(tmp_path / "site")]) == 0
    # While the site is written, the collector runs, but over what was made since the build alone.
    assert len(seen) == 1 and seen[0][0] and seen[0][1] > 10_000
    assert gc.get_freeze_count() == 0 and gc.isenabled()


def test_a_lesson_saved_with_a_byte_order_mark_builds_like_one_without(mini_course):
    lesson = mini_course / "lessons" / "02-second.md"
    plain = build_site(mini_course).outputs
    lesson.write_bytes(b"\xef\xbb\xbf" + lesson.read_bytes())
    assert build_site(mini_course).outputs == plain


@pytest.mark.parametrize(
    "text",
    [
        "Icons \ue000b\ue001 and \ue001\ue000 and \ue000 here.",  # reads as markers: the page is kept whole
        "Icons \ue001 and \ue001\ue001 here.",  # closing ones alone: the page splits as any other
    ],
)
def test_private_use_characters_in_the_text_are_published_as_written(mini_course, text):
    """U+E000 and U+E001 are the render cache's own markers; text holding them must still come out intact."""
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", text))
    from coursegen.session import Session

    cache = Session()
    for _ in range(2):  # the second build answers from the cache
        page = build_site(mini_course, session=cache).outputs["second.html"].decode()
        assert text in page
        assert re.search(r'href="assets/style\.[0-9a-f]{10}\.css"', page)


def test_a_heading_without_letters_gets_a_stable_non_empty_anchor(mini_course):
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", "## ???\n\nMore.\n\n## !!!\n\nEven more."))
    page = build_site(mini_course).outputs["second.html"].decode()
    assert 'id=""' not in page
    assert '<h2 id="section">' in page and '<h2 id="section-1">' in page


def test_site_files_are_world_readable_whatever_the_umask(mini_course, capsys):
    import os

    previous = os.umask(0o077)
    try:
        assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    finally:
        os.umask(previous)
    site = mini_course / "site"
    modes = {p.relative_to(site).as_posix(): p.stat().st_mode & 0o777 for p in [site, *site.rglob("*")]}
    assert {mode for path, mode in modes.items() if (site / path).is_dir()} == {0o755}
    assert {mode for path, mode in modes.items() if (site / path).is_file()} == {0o644}


def test_leftovers_of_a_build_killed_mid_swap_are_removed_by_the_next(mini_course, capsys):
    """A build is judged by its lock, not its pid: a pid may be another namespace's, or reused."""
    import os

    from coursegen import file_lock

    dead = 2**22 + 12345  # above Linux's largest process id: no process has it
    for kind in ("staging", "retired"):
        (mini_course / f".site.{kind}-{dead}" / "assets").mkdir(parents=True)
    reused = mini_course / f".site.staging-{os.getppid()}-0badc0de"  # a running pid, but its lock is free
    reused.mkdir()
    (mini_course / f".site.lock-{os.getppid()}-0badc0de").touch()
    (mini_course / ".site.lock-7-00ff00ff").touch()  # a lock whose folders are gone: an orphan
    alive = mini_course / f".site.staging-{dead}-12345678"  # a pid no process has here, but its lock is held
    held = file_lock.hold(mini_course / f".site.lock-{dead}-12345678")
    try:
        alive.mkdir()
        assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
        assert sorted(p.name for p in mini_course.glob(".site.*")) == [f".site.lock-{dead}-12345678", alive.name]
    finally:
        os.close(held)


def test_a_file_that_cannot_be_read_is_a_located_problem(tmp_path):
    """Tests run as root, where chmod 000 still reads: a folder in the file's place fails the read instead."""
    from coursegen.errors import Problems
    from coursegen.stages.config import read_text

    problems = Problems()
    (tmp_path / "lesson.md").mkdir()
    assert read_text(tmp_path / "lesson.md", "lessons/lesson.md", problems) is None
    assert [p.format() for p in problems.items] == [
        "lessons/lesson.md:1: cannot read 'lessons/lesson.md': Is a directory"
    ]


def test_a_site_folder_that_is_a_symbolic_link_is_replaced_and_its_target_left_alone(mini_course, tmp_path, capsys):
    """A course may ship `site -> somewhere`: the build must not swap out (and delete) that somewhere."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.txt").write_text("keep me")
    (mini_course / "site").symlink_to(elsewhere)
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    assert (elsewhere / "precious.txt").read_text() == "keep me"
    assert not (mini_course / "site").is_symlink() and (mini_course / "site" / "first.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "mini"]


def test_a_site_path_that_climbs_out_writes_nothing_anywhere(tmp_path):
    import pytest

    from coursegen.stages.write import update_site, write_site

    for bad in ("pyodide/../../escaped.txt", "/tmp/escaped.txt", ""):
        with pytest.raises(ValueError):
            write_site({"index.html": b"x", bad: b"y"}, tmp_path / "site")
        with pytest.raises(ValueError):
            update_site({"index.html": b"x", bad: b"y"}, {}, tmp_path / "site")
    assert list(tmp_path.iterdir()) == []


def test_build_out_creates_the_folders_above_the_site(mini_course, tmp_path, capsys):
    assert run_cli(capsys, "--root", mini_course, "build", "--out", tmp_path / "new" / "folder")[0] == 0
    assert (tmp_path / "new" / "folder" / "index.html").is_file()
