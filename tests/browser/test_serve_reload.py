"""In Chromium: `serve` reloads the open page on save, overlays a broken build, and recovers."""

from __future__ import annotations

import time

import pytest
from helpers import WAIT_GUARD_MS
from playwright.sync_api import expect

from coursegen.pipeline import BuildOptions
from coursegen.serve.livereload import EVENTS_PATH
from coursegen.serve.server import LiveServer

pytestmark = pytest.mark.browser


@pytest.fixture
def live(mini_course):
    server = LiveServer(mini_course, BuildOptions(), port=0, log=lambda text: None).start()
    yield server
    server.stop()


def test_the_open_page_reloads_shows_the_overlay_and_recovers(live, mini_course, page_and_watch):
    page, watch = page_and_watch
    lesson = mini_course / "lessons" / "02-second.md"
    good = lesson.read_text()
    # the page's event stream is open once the server has answered it: saves from now on reach it
    with page.expect_response(lambda response: response.url.split("?")[0].endswith(EVENTS_PATH)):
        page.goto(live.url + "second.html")
    expect(page.locator("script[data-coursegen-build]")).to_have_count(1)

    lesson.write_text(good.replace("Text.", "Edited while the page was open."))
    page.get_by_text("Edited while the page was open.").wait_for(timeout=WAIT_GUARD_MS)

    lesson.write_text(good.replace("Text.", "Ceiling {calc}`overflw.BF16_MAX_LOG`."))
    overlay = page.locator("[data-coursegen-overlay]")
    overlay.wait_for(timeout=WAIT_GUARD_MS)
    assert overlay.get_attribute("role") == "alert"
    assert "lessons/02-second.md:12:9: unknown name 'overflw' in {calc}" in overlay.inner_text()
    assert "Edited while the page was open." in page.locator("main").inner_text()  # last good build stays

    hide = overlay.get_by_role("button", name="Hide")
    hide.focus()
    page.keyboard.press("Enter")
    expect(overlay).to_be_hidden()

    lesson.write_text(good.replace("Text.", "Ceiling {calc}`overflow.BF16_MAX_LOG | .2f nats`."))
    page.get_by_text("88.72\u00a0nats").wait_for(timeout=WAIT_GUARD_MS)
    expect(page.locator("[data-coursegen-overlay]")).to_have_count(0)
    watch.assert_clean()


def _open(page, url: str) -> None:
    """Open `url` and return once its event stream is answered: saves from then on reach the page."""
    with page.expect_response(lambda response: response.url.split("?")[0].endswith(EVENTS_PATH)):
        page.goto(url)


def test_a_theme_file_copied_into_templates_while_serving_overrides_it(mini_course, page_and_watch):
    """The workflow of docs/start.md: copy one of the theme's files into the course's templates/, edit it."""
    import shutil

    from coursegen.theme.files import packaged_theme

    shutil.rmtree(mini_course / "templates")
    (mini_course / "templates" / "assets").mkdir(parents=True)
    (mini_course / "templates" / "assets" / "extra.css").write_text("main { margin: 0; }\n")  # an override at start
    server = LiveServer(mini_course, BuildOptions(), port=0, log=lambda text: None).start()
    try:
        page, watch = page_and_watch
        _open(page, server.url + "second.html")
        footer = mini_course / "templates" / "partials" / "footer.html"
        footer.parent.mkdir()
        shutil.copy(packaged_theme() / "partials" / "footer.html", footer)
        footer.write_text(footer.read_text().replace("<p>", "<p>Hecho a mano · "))
        page.get_by_text("Hecho a mano").wait_for(timeout=WAIT_GUARD_MS)
        watch.assert_clean()  # (the 404 page below points at base_url's https://example.org/mini/, not here)
        not_found = mini_course / "templates" / "404.html"
        shutil.copy(packaged_theme() / "404.html", not_found)
        not_found.write_text(not_found.read_text().replace("{% block content %}", "{% block content %}<p>Perdido</p>"))
        deadline = time.monotonic() + 30  # polled: a missing page does not reload by itself
        page.goto(server.url + "no-such-page.html")
        while "Perdido" not in page.locator("body").inner_text():
            assert time.monotonic() < deadline, "the 404.html copied into templates/ was never used"
            page.reload()
    finally:
        server.stop()


def test_the_page_always_ends_showing_the_last_of_two_quick_saves(live, mini_course, page_and_watch):
    """Editors that format on save write twice within a few milliseconds: the page must end on the second."""
    page, watch = page_and_watch
    lesson = mini_course / "lessons" / "02-second.md"
    good = lesson.read_text()
    _open(page, live.url + "second.html")
    for pair in range(10):
        # The second save lands while the page reloads for the first (its worst moment): after the
        # first save's rebuild asked the page to reload, before the reloaded page listens again.
        with page.expect_request(lambda request: request.url.endswith("/second.html"), timeout=WAIT_GUARD_MS):
            lesson.write_text(good.replace("Text.", f"Pair {pair}, first save."))
        lesson.write_text(good.replace("Text.", f"Pair {pair}, second save."))
        # The server serves the second save once its rebuild is done: wait for that, not for a duration.
        page.get_by_text(f"Pair {pair}, second save.").wait_for(timeout=WAIT_GUARD_MS)
        expect(page.locator("main")).not_to_contain_text("first save")
    watch.assert_clean()
