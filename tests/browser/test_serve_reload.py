"""In Chromium: `serve` reloads the open page on save, overlays a broken build, and recovers."""
from __future__ import annotations

import pytest

from coursegen.pipeline import BuildOptions
from coursegen.serve import LiveServer

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
    page.goto(live.url + "second.html")
    page.wait_for_function("() => !!document.querySelector('script[data-coursegen-build]')")
    page.wait_for_timeout(300)  # let the event stream connect

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
    assert overlay.is_hidden()

    lesson.write_text(good.replace("Text.", "Ceiling {calc}`overflow.BF16_MAX_LOG | .2f nats`."))
    page.get_by_text("88.72\u00a0nats").wait_for(timeout=15000)
    assert page.locator("[data-coursegen-overlay]").count() == 0
    watch.assert_clean()
