"""A page that includes a file is built again when that file changes, and only that page."""

from __future__ import annotations

import urllib.request

from coursegen.pipeline import BuildOptions, build_site
from coursegen.serve.server import LiveServer
from coursegen.session import Session


def including(course):
    (course / "shared").mkdir()
    (course / "shared" / "notation.md").write_text("Version one.\n")
    lesson = course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", "```{include} ../shared/notation.md\n```"))


def test_serve_rebuilds_the_including_page_alone_when_the_included_file_changes(mini_course):
    including(mini_course)
    server = LiveServer(mini_course, BuildOptions(), port=0, log=lambda text: None).start()
    try:
        assert "Version one." in urllib.request.urlopen(server.url + "second.html", timeout=600).read().decode()
        (mini_course / "shared" / "notation.md").write_text("Version two.\n")
        server.rebuild(["shared/notation.md"])
        assert server.cache.parsed == ["lessons/02-second.md"]
        assert "Version two." in urllib.request.urlopen(server.url + "second.html", timeout=600).read().decode()
    finally:
        server.stop()


def test_a_kept_session_parses_the_page_again_when_its_included_file_changes(mini_course):
    including(mini_course)
    session, options = Session(), BuildOptions(jobs=1)
    assert b"Version one." in build_site(mini_course, options, session).outputs["second.html"]
    (mini_course / "shared" / "notation.md").write_text("Version two, a new length.\n")
    assert b"Version two, a new length." in build_site(mini_course, options, session).outputs["second.html"]
