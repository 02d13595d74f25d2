"""Inputs that are odd but not wrong, or wrong in ways the bad-input catalogue cannot write (issue #42):
images named with a space or an accent, a locale name for `language:`, a course's own partial English
catalogue, a lesson too large to read, a file name the system's encoding cannot decode."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers import run_cli

LIMIT = 5 * 1024 * 1024  # the documented limit of a source (docs/authoring.md)


def site_files(course) -> dict:
    return {p: p.read_bytes() for p in (course / "site").rglob("*") if p.is_file()}


def test_images_named_with_a_space_or_an_accent_are_found_and_published(mini_course, capsys):
    (mini_course / "lessons" / "my chart.png").write_bytes(b"space")
    (mini_course / "lessons" / "caf\u00e9.png").write_bytes(b"accent")
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", "![a](<my chart.png>) and ![b](caf\u00e9.png)"))
    status, _, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 0, err
    page = (mini_course / "site" / "second.html").read_text()
    assert 'src="media/lessons-my%20chart.png"' in page and 'src="media/lessons-caf%C3%A9.png"' in page
    assert (mini_course / "site" / "media" / "lessons-my chart.png").read_bytes() == b"space"
    assert (mini_course / "site" / "media" / "lessons-caf\u00e9.png").read_bytes() == b"accent"


def test_a_locale_name_for_the_language_falls_back_to_its_language_with_a_hint(mini_course, capsys):
    config = mini_course / "course.yaml"
    config.write_text(config.read_text().replace("title: Mini course\n", "title: Mini course\nlanguage: de_DE\n"))
    status, _, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 0, err
    assert "course.yaml:2: warning: language 'de_DE' is not a BCP 47 tag: the pages use 'de'" in err
    assert "hint: write 'de-DE', with a hyphen" in err
    assert '<html lang="de"' in (mini_course / "site" / "index.html").read_text()
    assert run_cli(capsys, "--root", mini_course, "build", "--strict")[0] == 1


def test_a_course_s_own_partial_english_catalogue_keeps_the_theme_s_text_for_the_rest(mini_course, capsys):
    (mini_course / "templates" / "messages" / "en.yaml").write_text('header.search: "Find"\n')
    status, _, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 0, err
    page = (mini_course / "site" / "index.html").read_text()
    assert "Find <kbd" in page and "Search <kbd" not in page
    assert "Skip to" in page  # page.skip, which the course's file leaves out: the theme's English


def test_a_lesson_larger_than_the_limit_is_refused_before_it_is_parsed(mini_course, capsys):
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    before = site_files(mini_course)
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text() + "A line of prose.\n" * (LIMIT // 17 + 1))
    status, _, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 1
    assert err.startswith("lessons/02-second.md:1: file is larger than 5 MB, the most a text file of a course may be")
    assert "1 problem(s); nothing was written" in err
    assert site_files(mini_course) == before


def test_a_file_name_the_system_encoding_cannot_read_is_a_located_problem(mini_course, capsys):
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    before = site_files(mini_course)
    (mini_course / "lessons" / "caf\u00e9.png").write_bytes(b"x")
    env = {**os.environ, "PYTHONUTF8": "0", "LANG": "C", "LC_ALL": "C", "PYTHONCOERCECLOCALE": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "coursegen", "--root", os.fsencode(mini_course), "build"],
        capture_output=True,
        env=env,
        timeout=600,
    )
    err = done.stderr.decode("ascii", "backslashreplace")
    assert done.returncode == 1, err
    assert "Traceback" not in err
    assert err.startswith("lessons/caf\\xe9.png:1: the name of 'lessons/caf\\xe9.png' is not text in this system")
    assert "PYTHONUTF8=1" in err
    assert site_files(mini_course) == before
