"""`serve`: build, serve the site on 127.0.0.1, rebuild what changed on every save, reload the open page.

`make_server` is a plain static server (tests use it for built sites). `LiveServer` adds the
development loop: an incremental build per batch of changes, only changed files rewritten in
its output folder, and build events streamed to the pages (see livereload.py). A failed build
leaves the served site as it was, prints its problems and shows them over the page; the next
good save recovers.

As with `mkdocs serve`, the site is built into a temporary folder of its own, removed when serve
stops (Ctrl-C, `kill`, a closed terminal): the course's `site/` (what `build` made for publishing) is
never touched, unless `--out` names the folder to serve from. A serve that could not clean up (killed
with SIGKILL, the machine lost power) leaves its folder behind; the next one removes it once no
process holds its lock (temp_site.py).
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import http.server
import signal
import sys
import threading
import time
import traceback
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from coursegen.errors import ContentError
from coursegen.extensions import built_in_extensions
from coursegen.pipeline import BuildOptions, build_site
from coursegen.serve import livereload, reload
from coursegen.serve.temp_site import TemporarySite, make_temporary_site, remove_abandoned_sites
from coursegen.serve.watch import watch_changes
from coursegen.session import command_session
from coursegen.stages.write import check_output_folder, update_site, write_site

CRASHED = "the build crashed (a bug, not your text): see the terminal"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
MAX_PATH = 4096  # longer request paths name no file of a site (and some would fail as file names)


def is_local_host(host: str, port: int) -> bool:
    """Return whether a Host header names this machine's loopback (and, if it names one, our port).

    A page on another site can resolve its own name to 127.0.0.1 ("DNS rebinding") and then
    read this server as its own origin; its requests still carry that other name as Host.
    """
    try:
        parts = urllib.parse.urlsplit("//" + host.strip())
        given = parts.port
    except ValueError:  # a port that is no number
        return False
    return (
        parts.netloc == host.strip()
        and "@" not in host
        and not parts.path
        and parts.hostname in LOCAL_HOSTS
        and given in (None, port)
    )


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static file handler that knows module and WebAssembly types and logs nothing per request.

    It answers only requests addressed to the loopback by name or number, and refuses paths
    that cannot name a file (a NUL byte, a path of many kilobytes) before touching the disk.
    """

    extensions_map = {  # noqa: RUF012 - the base class's own attribute, replaced whole
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
        ".json": "application/json",
        ".whl": "application/zip",
    }

    def parse_request(self) -> bool:
        """Read the request line and headers; answer 421, 414 or 400 to what this server will not serve."""
        if not super().parse_request():
            return False
        host = self.headers.get("Host")
        if host is not None and not is_local_host(host, int(self.server.server_address[1])):  # type: ignore[index]
            self.send_error(
                421, "Misdirected Request", "this development server answers only to 127.0.0.1 and localhost"
            )
        elif len(self.path) > MAX_PATH:
            self.send_error(414)
        elif "\0" in urllib.parse.unquote(self.path):
            self.send_error(400, "Bad Request", "the path holds a NUL byte")
        else:
            return True
        return False

    def send_error(self, code, message=None, explain=None):
        """Answer a missing file with the site's own 404.html, as GitHub Pages does."""
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.is_file():
            return super().send_error(code, message, explain)
        self.send_body(404, self.finish_html(page.read_bytes()), "text/html; charset=utf-8")

    def send_body(self, code: int, body: bytes, content_type: str) -> None:
        """Send a whole response (the body is skipped for HEAD)."""
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def finish_html(self, html: bytes) -> bytes:
        """Return an HTML page as it is sent (unchanged here; the live handler adds its script)."""
        return html

    def log_message(self, format, *args):
        pass


class LiveHandler(QuietHandler):
    """QuietHandler plus the live-reload script, the event stream and the script tag in every page."""

    channel: livereload.Channel  # set by LiveServer through a subclass

    def do_GET(self):
        """Serve the live-reload endpoints, HTML pages with the script tag, other files as they are."""
        # The build number is taken before any file is read: a page is never stamped with a build
        # newer than its text (builds write their files, then publish), or it would miss that build.
        self.serial = self.channel.serial
        path, _, query = self.path.partition("?")
        if path == livereload.EVENTS_PATH:
            return self.send_events(_after(query))
        if path in livereload.SCRIPTS:
            return self.send_body(200, livereload.SCRIPTS[path].read_bytes(), "text/javascript")
        file = Path(self.translate_path(path))
        if file.is_dir():
            file = file / "index.html"
        if file.suffix == ".html" and file.is_file():
            return self.send_body(200, self.finish_html(file.read_bytes()), "text/html; charset=utf-8")
        return super().do_GET()

    def send_error(self, code, message=None, explain=None):
        """While no good build exists, answer a missing page with the problems (and the script)."""
        event = self.channel.event
        if code == 404 and event and event["type"] == "error" and not (Path(self.directory) / "404.html").is_file():
            return self.send_body(
                503, self.finish_html(livereload.problems_page(event["problems"])), "text/html; charset=utf-8"
            )
        return super().send_error(code, message, explain)

    def finish_html(self, html: bytes) -> bytes:
        """Return the page with the live-reload script tag, stamped with the current build number."""
        return livereload.inject(html, getattr(self, "serial", self.channel.serial))

    def send_events(self, after: int) -> None:
        """Stream build events to one page until it goes away or the server stops."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()

        def write(data: bytes) -> None:
            self.wfile.write(data)
            self.wfile.flush()

        try:
            livereload.stream_events(write, self.channel, after)
        except (BrokenPipeError, ConnectionResetError):
            pass


def _after(query: str) -> int:
    """Return the build an event stream's page was served from (`?after=N`), 0 when not given."""
    value = urllib.parse.parse_qs(query).get("after", ["0"])[0]
    return int(value) if value.isdigit() and len(value) < 19 else 0


class QuietServer(http.server.ThreadingHTTPServer):
    """A threading HTTP server that says nothing when a client hangs up mid-request.

    A browser cancels requests all the time (a reload, a closed tab, an event stream it drops):
    the request's thread then meets a broken pipe or a reset, which is no problem of the site.
    Anything else is still printed, traceback and all.
    """

    daemon_threads = True

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def make_server(site: Path, port: int, handler_class=QuietHandler) -> http.server.ThreadingHTTPServer:
    """Return a server for `site` bound to 127.0.0.1:`port` (0 picks a free port)."""
    handler = functools.partial(handler_class, directory=str(site))
    return QuietServer(("127.0.0.1", port), handler)


class LiveServer:
    """The development server: one incremental build per batch of changes, pages told to reload."""

    def __init__(self, root: Path, options: BuildOptions, port: int = 0, log=None, out: Path | None = None):
        """`out`: the folder to build into and serve from (default: a temporary one, removed by stop)."""
        self.root = root
        self.cache = command_session(root)  # first: it may refuse the course's .coursegen-cache
        self.own_site = out is None
        self.temporary: TemporarySite | None = None
        if out is None:
            remove_abandoned_sites()
            self.temporary = make_temporary_site()  # locked until stop, so no other serve removes it
            self.site = self.temporary.site
        else:
            self.site = out.resolve()
        self.options = dataclasses.replace(options, serve_mode=True)
        self.outputs: dict[str, bytes] | None = None
        self.channel = livereload.Channel()
        self.stopping = threading.Event()
        self.watching = threading.Event()  # set once every watch is in place
        self.log = log or (lambda text: print(text, file=sys.stderr, flush=True))
        handler = type("BoundLiveHandler", (LiveHandler,), {"channel": self.channel})
        try:
            self.server = make_server(self.site, port, handler)
        except OSError:
            self._remove_own_site()
            raise
        self.threads: list[threading.Thread] = []
        self.building = threading.Lock()  # rebuilds come from the watcher and from what extensions start
        # The extensions' `serve` event: search makes its index beside the rebuilds from now on, so an
        # edited page shows before its index is made, and asks for a rebuild when the index is ready.
        self.stop_extensions = built_in_extensions(self.cache).serve(root, self._index_ready, self.building)

    @property
    def url(self) -> str:
        """Return the base URL the site is served at."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def rebuild(self, changed: Sequence[str] = ()) -> dict:
        """Build (incrementally), write what changed, publish and return the build event."""
        with self.building:
            return self._rebuild(changed)

    def _rebuild(self, changed: Sequence[str]) -> dict:
        started = time.perf_counter()
        if reload.touches_extensions(self.root, changed, self._package(), self.cache.extension_files):
            self._start_afresh()
        self.cache.note_changes(self.root, changed)
        try:
            result = build_site(self.root, self.options, self.cache)
            written = self._write(cast(dict[str, bytes], result.outputs))  # serve's session holds no written page
        except ContentError as err:
            event = livereload.event_for_problems(err.problems)
            self.log(str(err) + f"\n{len(err.problems)} problem(s); the served site keeps the last good build")
        except Exception:  # noqa: BLE001 - a bug: print its traceback, keep serving the last good build
            self.cache.look_at_everything()  # what the crashed build left in the cache is not to be trusted
            self.log(traceback.format_exc() + "the served site keeps the last good build")
            event = {"type": "error", "problems": [CRASHED]}
        else:
            event = livereload.event_for_build(written, time.perf_counter() - started)
            for warning in result.warnings:
                self.log(warning.format())
            self.log(
                f"rebuilt in {event['ms']} ms: {len(written)} file(s) changed"
                + (f" after editing {', '.join(changed)}" if changed else "")
            )
        self.channel.publish(event)
        return event

    def _config(self):
        """Return the course's configuration as the last build read it, or None."""
        return self.cache.config

    def _package(self) -> str:
        config = self._config()
        return config.python.package if config is not None else ""

    def _start_afresh(self) -> None:
        """Forget everything the last builds kept: an extension's code changed, and every page may depend on it."""
        reload.forget_course_modules(self.root, self._package())
        self.cache = self.cache.afresh()

    def _also_watched(self) -> list[Path]:
        """Return what the build reads from folders the watcher passes over: a self-hosted Pyodide."""
        config = self._config()
        return [self.root / config.pyodide.path] if config is not None else []

    def _index_ready(self) -> None:
        """Write what an extension made beside the last rebuild, such as the search index (called from its thread)."""
        if not self.stopping.is_set():
            self.rebuild()

    def _write(self, outputs: dict[str, bytes]) -> list[str]:
        """Write the site: whole the first time, then only the files that differ."""
        if self.outputs is None:
            write_site(outputs, self.site, None if self.own_site else self.root)  # --out's folder is checked
            written = list(outputs)
        else:
            written = update_site(outputs, self.outputs, self.site)
        self.outputs = outputs
        return written

    def start(self, watch: bool = True) -> LiveServer:
        """Build once, then serve (and watch) in background threads; return self."""
        self.rebuild()
        # The first build's objects, made with the collector paused, would be walked by its next two
        # collections, which then come during an edit (65 ms at 2,000 lessons): walked here, before serving.
        gc.collect()
        self._thread(self.server.serve_forever)
        if watch:
            self._thread(self._watch)
            if self.watching.wait(timeout=10):
                with self.building:  # from now on every change is reported: rebuilds look at those alone
                    self.cache.trust_watcher()
        return self

    def _thread(self, target) -> None:
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        self.threads.append(thread)

    def _watch(self) -> None:
        for changed in watch_changes(
            self.root, self.stopping, self.watching, skip=lambda: [self.site], also=self._also_watched
        ):
            try:
                self.rebuild(changed)
            except BaseException:  # noqa: BLE001 - whatever a build raises, the next save must still rebuild
                self.log(traceback.format_exc() + "the served site keeps the last good build")
                self.channel.publish({"type": "error", "problems": [CRASHED]})

    def stop(self) -> None:
        """Stop watching and serving; end the event streams."""
        self.stopping.set()
        for stop_extension in self.stop_extensions:
            stop_extension()
        self.cache.close()  # the course's Python workers
        self.channel.close()
        self.server.shutdown()
        self.server.server_close()
        for thread in self.threads:
            thread.join(timeout=5)
        self._remove_own_site()

    def _remove_own_site(self) -> None:
        """Remove the temporary output folder (a folder given with --out stays)."""
        if self.temporary is not None:
            self.temporary.remove()
            self.temporary = None


def _stop_like_ctrl_c(signum, frame) -> None:
    raise KeyboardInterrupt


def serve(root: Path, options: BuildOptions, port: int = 8000, watch: bool = True, out: Path | None = None) -> int:
    """Build, serve and rebuild on changes until Ctrl-C (or SIGTERM, or SIGHUP); return the exit status."""
    refused = check_output_folder(out, root) if out is not None else []
    if refused:  # the course, a source folder, a folder of other files: refused before anything is built
        print("\n".join(problem.format() for problem in refused), file=sys.stderr)
        return 1
    try:
        live = LiveServer(root, options, port, out=out)
    except OSError as err:
        print(f"cannot serve on 127.0.0.1:{port}: {err.strerror}", file=sys.stderr)
        return 1
    except ContentError as err:  # a .coursegen-cache leading out of the course (session.command_session)
        print(err, file=sys.stderr)
        return 1
    if threading.current_thread() is threading.main_thread():  # only there can a handler be set
        # `kill`, a process manager and a closed terminal stop serve as Ctrl-C does: the temporary
        # site is removed and the course's workers end, where the default action would leave both.
        for name in ("SIGTERM", "SIGHUP"):
            if hasattr(signal, name):  # SIGHUP: not on Windows
                signal.signal(getattr(signal, name), _stop_like_ctrl_c)
    try:
        live.start(watch=watch)
        print(f"serving {live.site} at {live.url}  (Ctrl-C to stop)", flush=True)
        live.stopping.wait()
    except KeyboardInterrupt:
        pass
    finally:
        live.stop()
        print("\nstopped", flush=True)
    return 0
