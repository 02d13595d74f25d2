"""`serve` with a real server on a free port: rebuild on save, events to pages, errors that recover."""
from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from helpers import REPO
from coursegen.livereload import EVENTS_PATH, SCRIPT_PATH
from coursegen.pipeline import BuildOptions, build_site
from coursegen.serve import LiveServer


class EventReader:
    """Reads the server-sent events of a LiveServer, one JSON event at a time."""

    def __init__(self, url: str):
        self.response = urllib.request.urlopen(url + EVENTS_PATH.lstrip("/"), timeout=20)

    def next(self) -> dict:
        """Return the next event (keep-alive comments are skipped)."""
        while True:
            line = self.response.readline().decode()
            assert line, "the event stream ended"
            if line.startswith("data: "):
                return json.loads(line[len("data: "):])

    def next_after(self, serial: int) -> dict:
        """Return the first event newer than `serial`."""
        event = self.next()
        while event["serial"] <= serial:
            event = self.next()
        return event

    def close(self):
        self.response.close()


@pytest.fixture
def live(mini_course):
    server = LiveServer(mini_course, BuildOptions(), port=0, log=lambda text: None).start()
    reader = EventReader(server.url)
    yield server, reader
    reader.close()
    server.stop()


def fetch(url: str) -> str:
    return urllib.request.urlopen(url, timeout=10).read().decode()


def test_a_saved_edit_is_rebuilt_announced_and_served(live, mini_course):
    server, events = live
    first = events.next()
    assert first["type"] == "built" and "second.html" in first["changed"]
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", "Freshly edited text."))
    event = events.next_after(first["serial"])
    assert event["type"] == "built" and "second.html" in event["changed"]
    page = fetch(server.url + "second.html")
    assert "Freshly edited text." in page
    assert f'src="{SCRIPT_PATH}" data-coursegen-build="{event["serial"]}"' in page


def test_an_edit_is_served_at_once_and_its_search_index_is_written_just_after(live, mini_course):
    server, events = live
    first = events.next()
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", "Zanzibarish words."))
    edited = events.next_after(first["serial"])
    assert "second.html" in edited["changed"]
    assert not [path for path in edited["changed"] if path.startswith("pagefind/")]  # Pagefind did not hold it up
    indexed = events.next_after(edited["serial"])
    assert indexed["type"] == "built" and "pagefind/pagefind-entry.json" in indexed["changed"]
    assert not [path for path in indexed["changed"] if path.endswith(".html")]
    site = mini_course / "site"
    fragments = [gzip.decompress(file.read_bytes()) for file in (site / "pagefind" / "fragment").iterdir()]
    assert any(b"Zanzibarish" in fragment for fragment in fragments)
    assert (site / "pagefind").exists() and build_site(mini_course).outputs["pagefind/pagefind-entry.json"] == \
        (site / "pagefind" / "pagefind-entry.json").read_bytes()  # the same index a full build makes


def test_a_broken_save_is_announced_and_the_next_good_save_recovers(live, mini_course):
    server, events = live
    first = events.next()
    before = (mini_course / "site" / "second.html").read_bytes()
    lesson = mini_course / "lessons" / "02-second.md"
    good = lesson.read_text()
    lesson.write_text(good.replace("Text.", "Ceiling {calc}`overflw.BF16_MAX_LOG`."))
    broken = events.next_after(first["serial"])
    assert broken["type"] == "error"
    assert broken["problems"][0].startswith("lessons/02-second.md:12:9: unknown name 'overflw' in {calc}")
    assert (mini_course / "site" / "second.html").read_bytes() == before  # the last good build stays
    assert "Text." in fetch(server.url + "second.html")
    lesson.write_text(good.replace("Text.", "Ceiling {calc}`overflow.BF16_MAX_LOG | .2f`."))
    fixed = events.next_after(broken["serial"])
    assert fixed["type"] == "built" and "second.html" in fixed["changed"]
    assert "88.72" in fetch(server.url + "second.html")


def test_a_page_opened_while_the_build_is_broken_learns_of_the_problem_at_once(live, mini_course):
    server, events = live
    first = events.next()
    (mini_course / "course.yaml").write_text("title: [broken\n")
    assert events.next_after(first["serial"])["type"] == "error"
    late = EventReader(server.url)
    try:
        event = late.next()
        assert event["type"] == "error" and event["problems"][0].startswith("course.yaml:")
    finally:
        late.close()


def test_the_reload_script_is_served_but_never_written_into_the_site(live, mini_course):
    server, events = live
    events.next()
    script = fetch(server.url + SCRIPT_PATH.lstrip("/"))
    assert "EventSource" in script
    for file in (mini_course / "site").rglob("*"):
        if file.is_file():
            assert b"__coursegen" not in file.read_bytes(), file
    assert not any(b"__coursegen" in data for data in build_site(mini_course).outputs.values())


def test_serve_builds_into_site_and_stops_cleanly_on_ctrl_c(mini_course):
    command = [sys.executable, str(REPO / "build.py"), "--root", str(mini_course), "serve", "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        line = process.stdout.readline()
        assert line.startswith("serving ") and "http://127.0.0.1:" in line, line + process.stderr.read()
        url = line.split(" at ")[1].split()[0]
        assert "Second lesson" in fetch(url + "second.html")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert "stopped" in out and "Traceback" not in err


def test_serve_reports_a_port_in_use_without_a_traceback(live, mini_course, capsys):
    from helpers import run_cli
    server, _ = live
    port = server.url.rsplit(":", 1)[1].strip("/")
    started = time.perf_counter()
    status, _, err = run_cli(capsys, "--root", mini_course, "serve", "--port", port)
    assert status == 1 and f"cannot serve on 127.0.0.1:{port}" in err and "Traceback" not in err
    assert time.perf_counter() - started < 30


def test_a_crash_in_the_build_keeps_the_server_alive_and_says_so(live, mini_course):
    server, events = live
    first = events.next()
    (mini_course / "templates" / "lesson.html").write_text("{{ 1 / 0 }}")  # ZeroDivisionError: not a TemplateError
    crashed = events.next_after(first["serial"])
    assert crashed["type"] == "error" and "the build crashed" in crashed["problems"][0]
    assert "Second lesson" in fetch(server.url + "second.html")


def test_before_any_good_build_every_page_lists_the_problems(mini_course):
    import urllib.error
    (mini_course / "course.yaml").write_text("title: [broken\n")
    server = LiveServer(mini_course, BuildOptions(), port=0, log=lambda text: None).start(watch=False)
    try:
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(server.url + "second.html", timeout=10)
        body = caught.value.read().decode()
        assert caught.value.code == 503 and "course.yaml:" in body and SCRIPT_PATH in body
    finally:
        server.stop()
    assert not (mini_course / "site").exists()
