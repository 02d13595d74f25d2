"""The list of every unit beside each page: rendered once per build, and the same bytes as rendered per page."""

from __future__ import annotations

import jinja2
import pytest

from coursegen.pipeline import build_site
from coursegen.stages.course_units import PARTIAL


@pytest.fixture
def renders(monkeypatch) -> list[str]:
    """The names of the templates rendered on their own (not included) from now on."""
    names: list[str] = []
    original = jinja2.Template.render

    def counting(self, *args, **kwargs):
        names.append(self.name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(jinja2.Template, "render", counting)
    return names


def test_the_themes_list_renders_once_and_equals_the_list_rendered_in_each_page(mini_course, renders):
    fast = build_site(mini_course).outputs
    assert renders.count(PARTIAL) == 1
    partial = mini_course / "templates" / PARTIAL  # the course's copy of the theme: changed by one byte,
    partial.write_text(partial.read_text() + " ")  # it is the course's own, rendered in each page
    renders.clear()
    slow = build_site(mini_course).outputs
    assert renders.count(PARTIAL) == 3  # first, second, check (later is upcoming: no page)
    pages = [
        path
        for path in fast
        if path.endswith(".html") and path not in ("index.html", "404.html", "review-session.html")
    ]
    assert pages == ["check.html", "first.html", "second.html"]
    for path in pages:
        after = b'</nav>\n<nav class="site-menu-panel"'  # what follows the list: the phone menu's panel
        assert slow[path] == fast[path].replace(after, after.replace(b"\n", b"\n ")), path
    assert 'aria-current="page"><span>2</span>' in fast["second.html"].decode()


def test_a_course_partial_that_reads_the_page_is_rendered_with_it(mini_course):
    partial = mini_course / "templates" / PARTIAL
    partial.write_text("<nav>{{ page.meta.title }} of {{ course.units | length }}</nav>\n")
    outputs = build_site(mini_course).outputs
    assert "<nav>First lesson of 4</nav>" in outputs["first.html"].decode()
    assert "<nav>Second lesson of 4</nav>" in outputs["second.html"].decode()


def test_a_watched_rebuild_keeps_the_list_until_a_unit_it_shows_changes(mini_course, renders):
    """serve: an edit of a lesson's text reuses the last build's list; a new title renders it again."""
    from coursegen.session import Session

    session = Session()
    build_site(mini_course, session=session)
    session.trust_watcher()
    build_site(mini_course, session=session)
    lesson = mini_course / "lessons" / "02-second.md"
    for old, new, lists in (("\n## ", "\nOne more sentence.\n\n## ", 0), ("title: ", "title: Renamed ", 1)):
        lesson.write_text(lesson.read_text().replace(old, new, 1))
        session.note_changes(mini_course, ["lessons/02-second.md"])
        renders.clear()
        warm = build_site(mini_course, session=session).outputs
        assert renders.count(PARTIAL) == lists
        assert warm == build_site(mini_course).outputs
    assert "Renamed" in warm["first.html"].decode().split('class="course-units"')[1]
