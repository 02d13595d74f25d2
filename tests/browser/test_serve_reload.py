"""In Chromium: `serve` reloads the open page on save, overlays a broken build, and recovers."""

from __future__ import annotations

import pytest
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
    with page.expect_response(lambda response: response.url.endswith(EVENTS_PATH)):
        page.goto(live.url + "second.html")
    expect(page.locator("script[data-coursegen-build]")).to_have_count(1)

    lesson.write_text(good.replace("Text.", "Edited while the page was open."))
    page.get_by_text("Edited while the page was open.").wait_for(timeout=15000)

    lesson.write_text(good.replace("Text.", "Ceiling {calc}`overflw.BF16_MAX_LOG`."))
    overlay = page.locator("[data-coursegen-overlay]")
    overlay.wait_for(timeout=15000)
    assert overlay.get_attribute("role") == "alert"
    assert "lessons/02-second.md:12:9: unknown name 'overflw' in {calc}" in overlay.inner_text()
    assert "Edited while the page was open." in page.locator("main").inner_text()  # last good build stays

    hide = overlay.get_by_role("button", name="Hide")
    hide.focus()
    page.keyboard.press("Enter")
    expect(overlay).to_be_hidden()

    lesson.write_text(good.replace("Text.", "Ceiling {calc}`overflow.BF16_MAX_LOG | .2f nats`."))
    page.get_by_text("88.72\u00a0nats").wait_for(timeout=15000)
    expect(page.locator("[data-coursegen-overlay]")).to_have_count(0)
    watch.assert_clean()
