"""Live reload for `serve`: build events pushed to open pages as server-sent events.

The development server injects one script tag into every HTML page it sends (the files in
site/ are never changed, so they stay byte-identical to a build). The script, served from
this package, listens on EVENTS_PATH (which the script tag names, so the path is written here
only): after a good build it reloads the page if the page or
any asset changed; after a failed one it shows the problems in an overlay until the next good
build. It builds the overlay with the theme's DOM helper, served beside it as DOM_PATH (the
packaged theme's assets/dom.js), since the problems page has no import map. Nothing of this
exists outside `serve`.
"""

from __future__ import annotations

import html
import json
import threading
from pathlib import Path

from coursegen.theme.files import ASSETS, packaged_theme

PREFIX = "/__coursegen/"
SCRIPT_PATH = PREFIX + "livereload.js"
EVENTS_PATH = PREFIX + "events"
SCRIPT_FILE = Path(__file__).with_name("livereload.js")
DOM_PATH = PREFIX + "dom.js"  # livereload.js imports it as "./dom.js"
SCRIPTS = {SCRIPT_PATH: SCRIPT_FILE, DOM_PATH: packaged_theme() / ASSETS / "dom.js"}  # served path → file
KEEPALIVE_SECONDS = 15


class Channel:
    """The latest build event, numbered, and a way for event streams to wait for the next one."""

    def __init__(self):
        self._changed = threading.Condition()
        self.serial = 0
        self.event: dict | None = None
        self.closed = False

    def publish(self, event: dict) -> None:
        """Make `event` the latest one and wake every waiting stream."""
        with self._changed:
            self.serial += 1
            self.event = {**event, "serial": self.serial}
            self._changed.notify_all()

    def wait(self, after: int, timeout: float) -> dict | None:
        """Return the latest event if it is newer than `after`, waiting up to `timeout` seconds."""
        with self._changed:
            self._changed.wait_for(lambda: self.serial > after or self.closed, timeout)
            return self.event if self.serial > after else None

    def close(self) -> None:
        """End every stream (the server is stopping)."""
        with self._changed:
            self.closed = True
            self._changed.notify_all()


def inject(html: bytes, serial: int) -> bytes:
    """Return the page with the live-reload script tag added before `</body>`."""
    tag = (
        f'<script type="module" src="{SCRIPT_PATH}" data-coursegen-build="{serial}" '
        f'data-coursegen-events="{EVENTS_PATH}"></script>\n'
    ).encode()
    at = html.rfind(b"</body>")
    return html[:at] + tag + html[at:] if at >= 0 else html + tag


def stream_events(write, channel: Channel) -> None:
    """Write the current event, then each new one, as `data:` lines until the client leaves."""
    seen = 0
    while not channel.closed:
        event = channel.wait(seen, KEEPALIVE_SECONDS)
        if event is None:
            write(b": keepalive\n\n")
            continue
        seen = event["serial"]
        write(f"data: {json.dumps(event)}\n\n".encode())


def event_for_build(changed: list[str], seconds: float) -> dict:
    """Return the event announcing a good build and the site files it changed."""
    return {"type": "built", "changed": sorted(changed), "ms": round(seconds * 1000)}


def event_for_problems(problems) -> dict:
    """Return the event announcing a failed build with its `path:line: message` texts."""
    return {"type": "error", "problems": [p.format() for p in problems]}


def problems_page(problems: list[str]) -> bytes:
    """Return a bare page listing build problems, for when no good build exists to show yet."""
    items = "\n".join(html.escape(p) for p in problems)
    return (
        '<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Build failed</title></head>\n'
        f"<body>\n<h1>The build failed</h1>\n<pre>{items}</pre>\n</body>\n</html>\n"
    ).encode()
