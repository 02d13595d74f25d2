"""`serve` with a real server on a free port: rebuild on save, events to pages, errors that recover."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from helpers import REPO

from coursegen.pipeline import BuildOptions, build_site
from coursegen.serve.livereload import DOM_PATH, EVENTS_PATH, SCRIPT_PATH
from coursegen.serve.server import LiveServer
from coursegen.theme.files import packaged_theme


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
                return json.loads(line[len("data: ") :])

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
    _server, events = live
    first = events.next()
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", "Zanzibarish words."))
    edited = events.next_after(first["serial"])
    assert "second.html" in edited["changed"]
    assert not [path for path in edited["changed"] if path.startswith("search/")]  # the index did not hold it up
    indexed = events.next_after(edited["serial"])
    assert indexed["type"] == "built" and "search/index.json" in indexed["changed"]
    assert not [path for path in indexed["changed"] if path.endswith(".html")]
    site = mini_course / "site"
    fragments = [file.read_bytes() for file in (site / "search" / "p").iterdir()]
    assert any(b"Zanzibarish" in fragment for fragment in fragments)
    full = build_site(mini_course).outputs  # the same index a full build makes, and no file left of the old one
    assert {p: full[p] for p in full if p.startswith("search/")} == {
        str(file.relative_to(site)): file.read_bytes() for file in (site / "search").rglob("*") if file.is_file()
    }


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


def next_save(events, serial: int) -> dict:
    """Return the first event newer than `serial` that is no rebuild for the search index alone."""
    event = events.next_after(serial)
    while event["type"] == "built" and all(p.startswith("search/") or p == "sw.js" for p in event["changed"]):
        event = events.next_after(event["serial"])
    return event


def test_a_fifo_or_an_outside_link_made_while_serving_is_refused_and_its_removal_recovers(live, mini_course, tmp_path):
    """Rebuilds check only the paths the watcher reports: a new FIFO or link is one of them."""
    server, events = live
    last = events.next()
    outside = tmp_path / "secret.md"
    outside.write_text("---\ntitle: Secret\n---\n\nNot for the site.\n")
    lesson = mini_course / "lessons" / "02-second.md"
    for number, (make, expected) in enumerate(
        (
            (os.mkfifo, "is not a regular file (a FIFO, socket or device)"),
            (lambda path: path.symlink_to(outside), "is outside the course"),
        )
    ):
        path = mini_course / "lessons" / "05-odd.md"
        make(path)
        refused = next_save(events, last["serial"])
        assert refused["type"] == "error", refused
        assert refused["problems"][0].startswith(f"lessons/05-odd.md:1: 'lessons/05-odd.md' {expected}")
        lesson.write_text(lesson.read_text() + f"\nAnother line {number}.\n")  # another save: still refused
        again = next_save(events, refused["serial"])
        assert again["type"] == "error" and again["problems"][0] == refused["problems"][0]
        path.unlink()
        last = next_save(events, again["serial"])
        assert last["type"] == "built", last
        page = fetch(server.url + "second.html")
        assert f"Another line {number}." in page and "Not for the site" not in page
    assert not (mini_course / "site" / "odd.html").exists()


def test_a_save_that_hangs_ends_in_an_error_and_the_next_save_still_rebuilds(live, mini_course):
    server, events = live
    first = events.next()
    lesson = mini_course / "lessons" / "02-second.md"
    good = lesson.read_text()
    started = time.perf_counter()
    lesson.write_text(good.replace("Text.", "Digits {calc}`math.factorial(10**9)`."))  # never finishes
    hung = events.next_after(first["serial"])
    assert hung["type"] == "error" and time.perf_counter() - started < 15  # the course's limit is 2 s
    assert hung["problems"][0].startswith(
        "lessons/02-second.md:12:8: {calc} 'math.factorial(10**9)' did not finish within 2 s"
    )
    lesson.write_text(good.replace("Text.", "Ceiling {calc}`overflow.BF16_MAX_LOG | .2f`."))
    fixed = events.next_after(hung["serial"])
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
    assert "EventSource" in script and 'from "./dom.js"' in script
    helper = fetch(server.url + DOM_PATH.lstrip("/"))  # the overlay's DOM helper, the theme's own
    assert helper == (packaged_theme() / "assets" / "dom.js").read_text(encoding="utf-8")
    for file in (mini_course / "site").rglob("*"):
        if file.is_file():
            assert b"__coursegen" not in file.read_bytes(), file
    assert not any(b"__coursegen" in data for data in build_site(mini_course).outputs.values())


def test_serve_builds_into_site_and_stops_cleanly_on_ctrl_c(mini_course):
    command = [sys.executable, str(REPO / "build.py"), "--root", str(mini_course), "serve", "--port", "0"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )
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


def test_a_crash_in_the_build_keeps_the_server_alive_and_says_so(live, mini_course, monkeypatch):
    server, events = live
    first = events.next()

    def crash(*args, **kwargs):
        raise RuntimeError("a bug in the engine")

    monkeypatch.setattr("coursegen.pipeline.link_pages", crash)
    lesson = next((mini_course / "lessons").glob("*.md"))
    lesson.write_text(lesson.read_text() + "\nMore.\n")
    crashed = events.next_after(first["serial"])
    assert crashed["type"] == "error" and "the build crashed" in crashed["problems"][0]
    assert "Second lesson" in fetch(server.url + "second.html")


def test_a_template_that_raises_is_reported_at_its_line_and_the_server_keeps_serving(live, mini_course):
    server, events = live
    first = events.next()
    (mini_course / "templates" / "lesson.html").write_text("{{ 1 / 0 }}")  # ZeroDivisionError: not a TemplateError
    failed = events.next_after(first["serial"])
    assert failed["type"] == "error"
    assert failed["problems"][0].startswith("templates/lesson.html:1: template error: ZeroDivisionError")
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


def test_a_templates_folder_made_while_serving_overrides_the_theme_at_once(tmp_path):
    import shutil

    from helpers import FIXTURES

    course = tmp_path / "bare"
    shutil.copytree(FIXTURES / "mini", course)  # no templates/ of its own: the packaged theme
    server = LiveServer(course, BuildOptions(), port=0, log=lambda text: None).start()
    try:
        assert "Made while serving" not in fetch(server.url + "first.html")
        (course / "templates" / "partials").mkdir(parents=True)
        (course / "templates" / "partials" / "footer.html").write_text("<footer>Made while serving</footer>\n")
        deadline = time.monotonic() + 30  # polled: a watcher that missed the new folder must fail, not hang
        while "Made while serving" not in fetch(server.url + "first.html"):
            assert time.monotonic() < deadline, "the new templates/ folder was never picked up"
            time.sleep(0.05)
    finally:
        server.stop()


def raw_request(url: str, path: str, host: str | None = None) -> tuple[int, bytes]:
    """Send one GET with exactly this path and Host header (None: the server's own); return status and body."""
    import socket
    from urllib.parse import urlsplit

    address = urlsplit(url)
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        head = f"GET {path} HTTP/1.1\r\nHost: {host or address.netloc}\r\nConnection: close\r\n\r\n"
        sock.sendall(head.encode("latin-1"))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split()[1]), rest


@pytest.mark.parametrize(
    "path, status",
    [("/first.html%00.png", 400), ("/first.html\0", 400), ("/" + "a" * 60_000, 414), ("/" + "a/" * 3000, 414)],
    ids=["escaped NUL", "raw NUL", "60 KB name", "6000 folders deep"],
)
def test_a_path_that_names_no_file_is_refused_quietly(live, capfd, path, status):
    server, _ = live
    assert raw_request(server.url, path)[0] == status
    assert raw_request(server.url, "/first.html")[0] == 200  # still serving
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1.evil.example", "127.0.0.1:1", "user@127.0.0.1:{port}"]
)
def test_a_request_for_another_host_name_is_refused(live, host):
    """DNS rebinding: a foreign page whose name resolves to 127.0.0.1 must not read the server."""
    server, _ = live
    port = server.server.server_address[1]
    assert raw_request(server.url, "/first.html", host.format(port=port))[0] == 421


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST", "[::1]:{port}", "127.0.0.1"])
def test_the_loopback_by_name_or_number_is_served(live, host):
    server, _ = live
    port = server.server.server_address[1]
    status, body = raw_request(server.url, "/first.html", host.format(port=port))
    assert status == 200 and b"<html" in body
