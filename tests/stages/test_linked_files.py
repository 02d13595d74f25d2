"""Files a lesson links to (issue 41): a Markdown link or image, or raw HTML's <video>, <source>, <a download>,
naming any file of the course is checked and published at a stable address beside the images."""

from __future__ import annotations

import contextlib
import os

import pytest

from coursegen.errors import ContentError
from coursegen.pipeline import BuildOptions, build_site
from coursegen.session import Session

SECOND = "lessons/02-second.md"


def with_text(course, text: str):
    lesson = course / SECOND
    lesson.write_text(lesson.read_text().replace("Text.", text))
    return course


def data_files(course) -> None:
    (course / "data").mkdir()
    (course / "data" / "points.csv").write_text("x,y\n1,2\n")
    (course / "data" / "notes.pdf").write_bytes(b"%PDF-1.4 fake")
    (course / "kernels").mkdir(exist_ok=True)
    (course / "kernels" / "step.py").write_text("def step(x):\n    return x\n")
    (course / "media").mkdir(exist_ok=True)
    (course / "media" / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42")
    (course / "media" / "clip.vtt").write_text("WEBVTT\n")


def build(course, session=None) -> dict:
    return build_site(course, BuildOptions(jobs=1), session).outputs


def problems_of(course) -> list[str]:
    with pytest.raises(ContentError) as caught:
        build(course)
    return [p.format() for p in caught.value.problems]


def test_markdown_links_to_any_file_of_the_course_are_published(mini_course):
    data_files(mini_course)
    with_text(
        mini_course, "[the data](../data/points.csv), [notes](../data/notes.pdf#page=2), [code](../kernels/step.py)."
    )
    outputs = build(mini_course)
    assert outputs["media/data-points.csv"] == b"x,y\n1,2\n"
    assert outputs["media/data-notes.pdf"] == b"%PDF-1.4 fake"
    assert outputs["media/kernels-step.py"].startswith(b"def step")
    html = outputs["second.html"].decode()
    assert '<a href="media/data-points.csv">the data</a>' in html
    assert '<a href="media/data-notes.pdf#page=2">notes</a>' in html  # the fragment is kept
    assert '<a href="media/kernels-step.py">code</a>' in html


def test_raw_html_video_source_track_and_download_links_are_published(mini_course):
    data_files(mini_course)
    html = (
        '<video controls poster="../media/clip.vtt" width="320">\n'
        '  <source src="../media/clip.mp4#t=2" type="video/mp4">\n'
        "  <track kind=captions src='../media/clip.vtt'>\n"
        "</video>\n\n"
        'Get <a href="../data/points.csv" download>the points</a> or <a href="01-first.md">go back</a>.'
    )
    outputs = build(with_text(mini_course, html))
    page = outputs["second.html"].decode()
    assert '<video controls poster="media/media-clip.vtt" width="320">' in page  # the rest of the tag as written
    assert '<source src="media/media-clip.mp4#t=2" type="video/mp4">' in page
    assert "<track kind=captions src='media/media-clip.vtt'>" in page
    assert '<a href="media/data-points.csv" download>the points</a>' in page
    assert '<a href="01-first.md">go back</a>' in page  # raw HTML's plain links stay the author's
    assert {"media/media-clip.mp4", "media/media-clip.vtt", "media/data-points.csv"} <= outputs.keys()


def test_a_missing_file_is_an_error_at_its_line_with_a_did_you_mean(mini_course):
    data_files(mini_course)
    with_text(mini_course, 'See [it](../data/point.csv).\n\n<video src="../media/clips.mp4"></video>')
    assert problems_of(mini_course) == [
        "lessons/02-second.md:12: link '../data/point.csv' not found (looked for 'data/point.csv')\n"
        "    hint: did you mean '../data/points.csv'?",
        "lessons/02-second.md:14: video '../media/clips.mp4' not found (looked for 'media/clips.mp4')\n"
        "    hint: did you mean '../media/clip.mp4'?",
    ]


def test_a_file_outside_the_course_or_hidden_is_refused(mini_course, tmp_path):
    (tmp_path / "secret.csv").write_text("no")
    (mini_course / "data").mkdir()
    (mini_course / "data" / "linked.csv").symlink_to(tmp_path / "secret.csv")
    (mini_course / ".private").mkdir()
    (mini_course / ".private" / "keys.txt").write_text("no")
    with_text(
        mini_course,
        '[a](../../secret.csv) [b](../data/linked.csv)\n<a href="../.private/keys.txt" download>c</a>',
    )
    assert problems_of(mini_course) == [
        "lessons/02-second.md:12: '../../secret.csv' is outside the course\n"
        "    hint: copy the file into the course folder instead of naming or linking to it",
        "lessons/02-second.md:12: '../data/linked.csv' is outside the course\n"
        "    hint: copy the file into the course folder instead of naming or linking to it",
        "lessons/02-second.md:13: download '../.private/keys.txt' names a hidden file or folder\n"
        "    hint: the build publishes no hidden file",
    ]


def test_a_link_to_a_md_file_that_is_no_source_still_asks_for_a_lesson(mini_course):
    (mini_course / "data").mkdir()
    (mini_course / "data" / "notes.md").write_text("# notes\n")
    (problem,) = problems_of(with_text(mini_course, "[read me](../data/notes.md)"))
    assert problem.startswith("lessons/02-second.md:12: broken link '../data/notes.md': no source file 'data/notes.md'")


def test_published_files_are_in_the_sites_marker(mini_course, tmp_path):
    from coursegen.stages.site_marker import listed_files
    from coursegen.stages.write import write_site

    data_files(mini_course)
    with_text(mini_course, "[the data](../data/points.csv)")
    out = tmp_path / "site"
    write_site(build(mini_course), out)
    assert "media/data-points.csv" in listed_files(out)
    assert (out / "media" / "data-points.csv").read_text() == "x,y\n1,2\n"


def test_a_changed_or_deleted_linked_file_reaches_the_next_build_of_a_session(mini_course):
    data_files(mini_course)
    with_text(mini_course, "[the data](../data/points.csv)")
    with contextlib.closing(Session()) as session:
        assert build(mini_course, session)["media/data-points.csv"] == b"x,y\n1,2\n"
        (mini_course / "data" / "points.csv").write_text("x,y\n3,4\n")
        assert build(mini_course, session)["media/data-points.csv"] == b"x,y\n3,4\n"
        os.remove(mini_course / "data" / "points.csv")
        with pytest.raises(ContentError) as caught:
            build(mini_course, session)
    assert [p.format() for p in caught.value.problems] == [
        "lessons/02-second.md:12: 'data/points.csv', which this page links to, cannot be read: No such file or "
        "directory\n    hint: restore the file, or change the link"
    ]
