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
    """The latest build event, numbered; which build last changed each site file; and a way for event
    streams to wait for the next build.

    A page may miss events: it reloads (and listens again only once loaded) while a second save is
    built, and a stream that wakes after two quick builds sees only the second. So a page is never sent
    one build's changes alone but every file changed since the build it was served from (`since`):
    a rebuild of the search index alone, coming last, then cannot hide that the page itself changed.
    """

    def __init__(self):
        self._changed = threading.Condition()
        self.serial = 0
        self.event: dict | None = None
        self.changed_at: dict[str, int] = {}  # site path → serial of the last build that changed it
        self.closed = False

    def publish(self, event: dict) -> None:
        """Make `event` the latest one and wake every waiting stream."""
        with self._changed:
            self.serial += 1
            for path in event.get("changed", ()):
                self.changed_at[path] = self.serial
            self.event = {**event, "serial": self.serial}
            self._changed.notify_all()

    def since(self, after: int) -> dict | None:
        """Return the latest event for a page served at build `after`: a good build's lists every file
        changed after that one; a failed build's is as published."""
        with self._changed:
            return self._since(after)

    def _since(self, after: int) -> dict | None:
        if self.event is None or self.event["type"] != "built":
            return self.event
        return {**self.event, "changed": sorted(p for p, serial in self.changed_at.items() if serial > after)}

    def wait(self, after: int, timeout: float) -> dict | None:
        """Return `since(after)` once a build newer than `after` is published, waiting up to `timeout` seconds."""
        with self._changed:
            self._changed.wait_for(lambda: self.serial > after or self.closed, timeout)
            return self._since(after) if self.serial > after else None

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


def stream_events(write, channel: Channel, after: int = 0) -> None:
    """Write, as `data:` lines until the client leaves, what happened since build `after` (the one its
    page was served from): a failed build at once, then each new build with every file changed since."""
    seen = after
    current = channel.since(after)
    if current is not None and current["type"] != "built" and current["serial"] == after:
        write(f"data: {json.dumps(current)}\n\n".encode())  # the page was served while the build is broken
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
