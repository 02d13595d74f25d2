"""`serve` with a real server on a free port: rebuild on save, events to pages, errors that recover."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from helpers import REPO, without_time_limit

from coursegen.pipeline import BuildOptions, build_site
from coursegen.serve.livereload import DOM_PATH, EVENTS_PATH, SCRIPT_PATH
from coursegen.serve.server import LiveServer
from coursegen.theme.files import packaged_theme

HANG_GUARD = 600  # seconds a socket or a wait may take before the test calls it a hang: never a measure of speed


class EventReader:
    """Reads the server-sent events of a LiveServer, one JSON event at a time."""

    def __init__(self, url: str):
        self.response = urllib.request.urlopen(url + EVENTS_PATH.lstrip("/"), timeout=HANG_GUARD)

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


def _serving(course):
    server = LiveServer(course, BuildOptions(), port=0, log=lambda text: None).start()
    reader = EventReader(server.url)
    yield server, reader
    reader.close()
    server.stop()


@pytest.fixture
def live(mini_course):
    yield from _serving(mini_course)


@pytest.fixture
def live_unlimited(mini_course):
    """`live` for a test not about the time limit: its kernels (numpy) import as slowly as the machine makes them."""
    without_time_limit(mini_course)
    yield from _serving(mini_course)


def fetch(url: str) -> str:
    return urllib.request.urlopen(url, timeout=HANG_GUARD).read().decode()


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
    site = _server.site
    fragments = [file.read_bytes() for file in (site / "search" / "p").iterdir()]
    assert any(b"Zanzibarish" in fragment for fragment in fragments)
    full = build_site(mini_course).outputs  # the same index a full build makes, and no file left of the old one
    assert {p: full[p] for p in full if p.startswith("search/")} == {
        str(file.relative_to(site)): file.read_bytes() for file in (site / "search").rglob("*") if file.is_file()
    }


def test_a_broken_save_is_announced_and_the_next_good_save_recovers(live_unlimited, mini_course):
    server, events = live_unlimited
    first = events.next()
    before = (server.site / "second.html").read_bytes()
    lesson = mini_course / "lessons" / "02-second.md"
    good = lesson.read_text()
    lesson.write_text(good.replace("Text.", "Ceiling {calc}`overflw.BF16_MAX_LOG`."))
    broken = events.next_after(first["serial"])
    assert broken["type"] == "error"
    assert broken["problems"][0].startswith("lessons/02-second.md:12:9: unknown name 'overflw' in {calc}")
    assert (server.site / "second.html").read_bytes() == before  # the last good build stays
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
    assert not (server.site / "odd.html").exists()


def test_a_save_that_hangs_ends_in_an_error_and_the_next_save_still_rebuilds(live, mini_course):
    server, events = live
    first = events.next()
    # The worker imports the kernels under the same 2 s limit before the calc; numpy's import can take longer
    # on a busy machine, so the kernels here are a stand-in without numpy: only the endless calc can run out.
    kernels = mini_course / "kernels"
    (kernels / "__init__.py").write_text('"""Without numpy, so only the endless calc can use up the 2 s limit."""\n')
    lesson = mini_course / "lessons" / "02-second.md"
    good = lesson.read_text()
    lesson.write_text(good.replace("Text.", "Digits {calc}`math.factorial(10**9)`."))  # never finishes
    hung = events.next_after(first["serial"])
    while hung["type"] == "built":  # the kernels' edit alone, when the watcher saw it first
        hung = events.next_after(hung["serial"])
    assert hung["type"] == "error"  # the course's 2 s limit stopped it: the message says so
    assert hung["problems"][0].startswith(
        "lessons/02-second.md:12:8: {calc} 'math.factorial(10**9)' did not finish within 2 s"
    )
    lesson.write_text(good.replace("Text.", "Digits {calc}`math.factorial(7)`."))
    fixed = events.next_after(hung["serial"])
    assert fixed["type"] == "built" and "second.html" in fixed["changed"]
    assert "5040" in fetch(server.url + "second.html")


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
    for file in server.site.rglob("*"):
        if file.is_file():
            assert b"__coursegen" not in file.read_bytes(), file
    assert not any(b"__coursegen" in data for data in build_site(mini_course).outputs.values())


# A terminal's foreground program starts with Ctrl-C at its default action. A test run started in the
# background by a shell without job control (`cmd &` in a script) ignores SIGINT, and so would serve, which
# Python then gives no KeyboardInterrupt: the command is run through this, which restores the default.
WITH_CTRL_C = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.executable, sys.argv[1:])"
)


def start_serve(mini_course, *extra):
    """Start `build.py serve` in a session of its own (Ctrl-C reaches its whole process group); return it and its URL."""
    serve = [str(REPO / "build.py"), "--root", str(mini_course), "serve", "--port", "0", *extra]
    command = [sys.executable, "-c", WITH_CTRL_C, sys.executable, *serve]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"},
        start_new_session=True,
    )
    line = process.stdout.readline()
    assert line.startswith("serving ") and "http://127.0.0.1:" in line, line + process.stderr.read()
    return process, line.split(" at ")[1].split()[0], Path(line.removeprefix("serving ").split(" at ")[0])


def ctrl_c(process) -> tuple[str, str]:
    """Press Ctrl-C as a terminal does (SIGINT to the whole process group); return the output."""
    os.killpg(process.pid, signal.SIGINT)
    return stopped(process)


def stopped(process, seconds: float = 120) -> tuple[str, str]:  # a hang guard, not a speed
    """Return the output of a serve that was told to stop; if it is still running after `seconds`, fail
    with where each of its threads was (faulthandler, which start_serve turns on, prints them on SIGABRT)."""
    try:
        return process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        _, err = process.communicate(timeout=30)
        raise AssertionError(f"serve did not stop within {seconds} s; its threads then:\n{err}") from None


def test_serve_builds_into_a_folder_of_its_own_and_stops_cleanly_on_ctrl_c(mini_course):
    """site/ is what `build` made for publishing: serve leaves it alone, as mkdocs serve does.
    Ctrl-C reaches the index process too (it exists once a page was edited): nothing prints a traceback."""
    published = mini_course / "site"
    published.mkdir()
    (published / "index.html").write_text("the published site")
    process, url, served = start_serve(mini_course)
    try:
        assert served != published and not served.is_relative_to(mini_course)
        assert "Second lesson" in fetch(url + "second.html")
        lesson = mini_course / "lessons" / "02-second.md"
        lesson.write_text(lesson.read_text().replace("Text.", "Indexed words."))
        deadline = time.monotonic() + HANG_GUARD
        while not any(b"Indexed" in f.read_bytes() for f in (served / "search").rglob("*") if f.is_file()):
            assert time.monotonic() < deadline, "the edit was never indexed"
            time.sleep(0.1)
        out, err = ctrl_c(process)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert "stopped" in out and "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert [f.name for f in published.iterdir()] == ["index.html"]
    assert (published / "index.html").read_text() == "the published site"
    assert not served.exists()  # the temporary folder goes with the server


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGHUP"])
def test_serve_stopped_by_kill_or_a_closed_terminal_cleans_up_as_on_ctrl_c(mini_course, stop):
    """`kill` (SIGTERM, what a process manager sends) and a closed terminal (SIGHUP) used to end serve
    at once, leaving its temporary site behind: a 2,000-lesson course's is 650 MB."""
    process, url, served = start_serve(mini_course)
    try:
        assert served.parent.name.startswith(f"coursegen-serve-{process.pid}-")  # which serve made it
        assert "Second lesson" in fetch(url + "second.html")
        process.send_signal(getattr(signal, stop))
        out, err = stopped(process)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert "stopped" in out and "Traceback" not in err, err
    assert not served.parent.exists()  # the temporary folder, its lock file with it


def test_serve_out_names_the_folder_it_builds_into_and_keeps(mini_course, tmp_path):
    process, url, served = start_serve(mini_course, "--out", str(tmp_path / "preview"))
    try:
        assert served == (tmp_path / "preview").resolve()
        assert "Second lesson" in fetch(url + "second.html")
        _, err = ctrl_c(process)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert (served / "second.html").is_file() and not (mini_course / "site").exists()


@pytest.mark.parametrize("out", [".", "lessons", "notes"], ids=["the course", "a source folder", "other files"])
def test_serve_out_refuses_a_folder_it_would_destroy(mini_course, capsys, out):
    from helpers import run_cli

    (mini_course / "notes").mkdir()
    (mini_course / "notes" / "todo.txt").write_text("mine\n")
    before = sorted(p.relative_to(mini_course) for p in mini_course.rglob("*"))
    status, _, err = run_cli(capsys, "--root", mini_course, "serve", "--port", "0", "--out", mini_course / out)
    assert status == 1 and "the output folder" in err and "Traceback" not in err, err
    assert sorted(p.relative_to(mini_course) for p in mini_course.rglob("*")) == before


def test_clients_that_hang_up_print_nothing(live, capfd):
    """A reload or a closed tab cancels requests mid-way: that is no problem to report."""
    import socket
    import struct

    server, events = live
    events.next()
    address = ("127.0.0.1", server.server.server_address[1])
    for path in ("/second.html", "/search/index.json", EVENTS_PATH, "/no-such-page.html") * 5:
        with socket.create_connection(address, timeout=HANG_GUARD) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {address[0]}:{address[1]}\r\n\r\n".encode())
    time.sleep(0.5)  # the handlers meet the resets
    assert raw_request(server.url, "/first.html")[0] == 200  # still serving
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception occurred during processing" not in err, err


EXTENSION_V1 = (
    "from coursegen.stages.roles import register_role\n\n\ndef install(md):\n"
    "    register_role(md, 'stamp', lambda token, env, line: 'STAMP-ONE')\n"
)


def _course_with_every_input(course):
    """Give the mini course an extension (a file and a module), extra CSS and JS, a logo and a favicon."""
    for name in ("byname", "helper"):  # another test's course had modules of these names
        sys.modules.pop(name, None)
    (course / "css").mkdir()
    (course / "css" / "extra.css").write_text("body { margin: 1px; }\n")
    (course / "js").mkdir()
    (course / "js" / "extra.js").write_text("console.debug('one');\n")
    (course / "logo.svg").write_text("<svg>logo one</svg>\n")
    (course / "favicon.ico").write_bytes(b"icon one")
    (course / "extensions").mkdir()
    (course / "extensions" / "stamp.py").write_text(EXTENSION_V1)
    (course / "helper.py").write_text("WORD = 'HELPER-ONE'\n")
    (course / "byname.py").write_text(
        "import helper\n\n\ndef add_files(course, root, assets, problems):\n"
        "    assets.files['byname.txt'] = helper.WORD.encode()\n"
    )
    config = course / "course.yaml"
    config.write_text(
        config.read_text() + "theme:\n  extra_css: [css/extra.css]\n  extra_js: [js/extra.js]\n"
        "  logo: logo.svg\n  favicon: favicon.ico\nextensions: [extensions/stamp.py, byname]\n"
    )
    (course / "images").mkdir()  # beside the lessons and media/ alike: any folder of the course
    (course / "images" / "pic.svg").write_text("<svg>picture one</svg>\n")
    lesson = course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", "Mark {stamp}`x`. ![A picture](../images/pic.svg)"))


def _served_text(server, name_part: str) -> str:
    """Return the texts of the served files whose paths hold `name_part` (a hashed asset's stem; while a
    rebuild writes, the old one may still be there)."""
    found = [f for f in server.site.rglob("*") if f.is_file() and name_part in f.relative_to(server.site).as_posix()]
    assert found, name_part
    return "".join(_text_if_there(f) for f in found)


def _text_if_there(file) -> str:
    """Return a file's text, or "" when a rebuild removed it (an old hashed asset) since it was listed."""
    try:
        return file.read_text()
    except FileNotFoundError:
        return ""


@pytest.mark.parametrize(
    "edit, shows",
    [
        (("css/extra.css", "body { margin: 2px; }\n"), lambda s: "2px" in _served_text(s, "course/css/extra")),
        (("js/extra.js", "console.debug('two');\n"), lambda s: "two" in _served_text(s, "course/js/extra")),
        (("logo.svg", "<svg>logo two</svg>\n"), lambda s: "logo two" in _served_text(s, "course/logo")),
        (("favicon.ico", "icon two"), lambda s: "icon two" in _served_text(s, "course/favicon")),
        (("images/pic.svg", "<svg>picture two</svg>\n"), lambda s: "picture two" in _served_text(s, "images-pic")),
        (
            ("extensions/stamp.py", EXTENSION_V1.replace("ONE", "TWO")),
            lambda s: "STAMP-TWO" in fetch(s.url + "second.html"),
        ),
        (("helper.py", "WORD = 'HELPER-TWO'\n"), lambda s: (s.site / "byname.txt").read_text() == "HELPER-TWO"),
        (
            ("templates/partials/footer.html", "<footer>Footer two</footer>\n"),
            lambda s: "Footer two" in fetch(s.url + "first.html"),
        ),
    ],
    ids=[
        "extra_css",
        "extra_js",
        "logo",
        "favicon",
        "image",
        "extension file",
        "module an extension imports",
        "template",
    ],
)
def test_every_file_the_build_reads_is_watched(tmp_path, edit, shows):
    import shutil

    from helpers import FIXTURES

    course = tmp_path / "course"
    shutil.copytree(FIXTURES / "mini", course)
    _course_with_every_input(course)
    rebuilds = Rebuilds()
    server = LiveServer(course, BuildOptions(), port=0, log=rebuilds.log).start()
    try:
        assert "STAMP-ONE" in fetch(server.url + "second.html") and not shows(server)
        path, text = edit
        (course / path).parent.mkdir(parents=True, exist_ok=True)
        (course / path).write_text(text)
        # Looked at after each rebuild (the watcher may report one save in two batches), however long
        # a rebuild takes; one the watcher missed never comes, and HANG_GUARD ends the wait.
        assert rebuilds.until(lambda: shows(server)), f"saving {path} was never rebuilt"
    finally:
        server.stop()


HANG_GUARD = 600  # seconds without any rebuild: only a watcher that missed a change waits this long


class Rebuilds:
    """Counts what a LiveServer logs (each rebuild logs once it is done, whatever its outcome)."""

    def __init__(self):
        self.done = threading.Condition()
        self.count = 0

    def log(self, text: str) -> None:
        with self.done:
            self.count += 1
            self.done.notify_all()

    def until(self, condition) -> bool:
        """Return True once `condition()` holds, looking again after each rebuild; False when none comes."""
        with self.done:
            while not condition():
                if not self.done.wait_for(self._newer_than(self.count), HANG_GUARD):
                    return False
            return True

    def _newer_than(self, seen: int):
        return lambda: self.count > seen


def test_an_extension_saved_rebuilds_every_page_and_a_lesson_saved_only_its_own(tmp_path):
    """What depends on a change is rebuilt, and no more: every page may use an extension's syntax."""
    import shutil

    from helpers import FIXTURES

    course = tmp_path / "course"
    shutil.copytree(FIXTURES / "mini", course)
    _course_with_every_input(course)
    server = LiveServer(course, BuildOptions(), port=0, log=lambda text: None).start()
    try:
        pages = {"first", "second", "check"}
        server.rebuild(["extensions/stamp.py"])
        assert pages <= set(server.cache.rerendered) and len(server.cache.parsed) == 3
        lesson = course / "lessons" / "01-first.md"
        lesson.write_text(lesson.read_text() + "\nOne more line.\n")
        server.rebuild(["lessons/01-first.md"])
        assert server.cache.parsed == ["lessons/01-first.md"] and "second" not in server.cache.rerendered
        server.rebuild(["tests/notes.txt"])  # nothing the build reads
        assert server.cache.parsed == [] and not set(server.cache.rerendered) & pages
    finally:
        server.stop()


def test_the_watcher_passes_over_what_the_build_never_reads(tmp_path):
    from coursegen.serve.watch import watched_folders

    for name in ("lessons", "css", "extensions", "node_modules/pyodide", ".git", ".venv", "env", "site", "preview"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    folders = watched_folders(
        tmp_path, skip=lambda: [tmp_path / "preview"], also=lambda: [tmp_path / "node_modules/pyodide"]
    )
    assert [f.relative_to(tmp_path).as_posix() for f in folders] == [
        "css",
        "extensions",
        "lessons",
        "node_modules/pyodide",
    ]


def test_serve_reports_a_port_in_use_without_a_traceback(live, mini_course, capsys):
    from helpers import run_cli

    server, _ = live
    port = server.url.rsplit(":", 1)[1].strip("/")
    status, _, err = run_cli(capsys, "--root", mini_course, "serve", "--port", port)
    assert status == 1 and f"cannot serve on 127.0.0.1:{port}" in err and "Traceback" not in err


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
            urllib.request.urlopen(server.url + "second.html", timeout=HANG_GUARD)
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
    rebuilds = Rebuilds()
    server = LiveServer(course, BuildOptions(), port=0, log=rebuilds.log).start()
    try:
        assert "Made while serving" not in fetch(server.url + "first.html")
        (course / "templates" / "partials").mkdir(parents=True)
        (course / "templates" / "partials" / "footer.html").write_text("<footer>Made while serving</footer>\n")
        # looked at after each rebuild: a watcher that missed the new folder must fail, not hang
        assert rebuilds.until(lambda: "Made while serving" in fetch(server.url + "first.html")), (
            "the new templates/ folder was never picked up"
        )
    finally:
        server.stop()


def raw_request(url: str, path: str, host: str | None = None) -> tuple[int, bytes]:
    """Send one GET with exactly this path and Host header (None: the server's own); return status and body."""
    import socket
    from urllib.parse import urlsplit

    address = urlsplit(url)
    with socket.create_connection((address.hostname, address.port), timeout=HANG_GUARD) as sock:
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


def test_only_the_course_s_own_modules_are_imported_again(tmp_path, monkeypatch):
    """Serving this repository (a course too) must not drop coursegen, build.py or a venv's packages."""
    import types

    import coursegen.cli
    from coursegen.serve import reload

    for name, file in {
        "course_helper": tmp_path / "helper.py",
        "installed_thing": tmp_path / ".venv" / "lib" / "python3.11" / "site-packages" / "thing.py",
        "env_thing": tmp_path / "env" / "lib" / "python3.11" / "site-packages" / "other.py",
        "a_widget": tmp_path / "widgets" / "w" / "widget.py",
        "__main__": tmp_path / "build.py",
    }.items():
        module = types.ModuleType(name)
        module.__file__ = str(file)
        monkeypatch.setitem(sys.modules, name, module)
    engine = Path(coursegen.cli.__file__).resolve().parents[1]
    assert reload.course_modules(tmp_path) == {"course_helper": "helper.py"}
    assert all(not name.startswith("coursegen") for name in reload.course_modules(engine.parent))
    assert reload.touches_extensions(tmp_path, ["helper.py"]) and not reload.touches_extensions(tmp_path, ["build.py"])


def test_a_page_is_told_every_file_changed_since_the_build_it_was_served_from():
    """A search-index rebuild published last must not hide that the page changed just before it."""
    from coursegen.serve.livereload import Channel, event_for_build, stream_events

    channel = Channel()
    channel.publish(event_for_build(["first.html", "second.html"], 0.1))  # the page is served from build 1
    channel.publish(event_for_build(["second.html"], 0.1))
    channel.publish(event_for_build(["search/index.json"], 0.1))
    assert channel.since(1)["changed"] == ["search/index.json", "second.html"]
    assert channel.since(2)["changed"] == ["search/index.json"]
    written: list[bytes] = []

    def write(data: bytes) -> None:
        written.append(data)
        channel.close()

    stream_events(write, channel, after=1)
    event = json.loads(written[0].decode().removeprefix("data: "))
    assert event["serial"] == 3 and "second.html" in event["changed"]


def test_a_saved_bib_and_a_saved_linked_file_are_rebuilt_and_served(live_unlimited, mini_course):
    """Issue 41: the .bib course.yaml names and a file a lesson links to are inputs of the build like a lesson."""
    server, events = live_unlimited
    first = events.next()
    (mini_course / "data").mkdir()
    (mini_course / "data" / "points.csv").write_text("x,y\n1,2\n")
    (mini_course / "references.bib").write_text("@book{knuth, author = {Knuth}, title = {Old title}}\n")
    with (mini_course / "course.yaml").open("a") as config:
        config.write("bibliography: [references.bib]\n")
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", "See {cite:p}`knuth` and [the data](../data/points.csv)."))
    event = next_save(events, first["serial"])
    while event["type"] != "built" or "second.html" not in event["changed"]:  # course.yaml may come in alone first
        event = next_save(events, event["serial"])
    assert "Old title" in fetch(server.url + "second.html")
    assert fetch(server.url + "media/data-points.csv") == "x,y\n1,2\n"
    (mini_course / "references.bib").write_text("@book{knuth, author = {Knuth}, title = {New title}}\n")
    event = next_save(events, event["serial"])
    assert event["type"] == "built" and "second.html" in event["changed"]
    assert "New title" in fetch(server.url + "second.html")
    (mini_course / "data" / "points.csv").write_text("x,y\n3,4\n")
    event = next_save(events, event["serial"])
    assert event["type"] == "built" and "media/data-points.csv" in event["changed"]
    assert fetch(server.url + "media/data-points.csv") == "x,y\n3,4\n"
