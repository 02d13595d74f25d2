"""`serve`: build, then serve site/ on 127.0.0.1."""
from __future__ import annotations

import functools
import http.server
import sys
from pathlib import Path

from .errors import ContentError
from .pipeline import BuildOptions, build_site
from .write import write_site


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static file handler that knows module and WebAssembly types and logs nothing per request."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm",
                      ".json": "application/json", ".whl": "application/zip"}

    def send_error(self, code, message=None, explain=None):
        """Answer a missing file with the site's own 404.html, as GitHub Pages does."""
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.is_file():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format, *args):  # noqa: A002 - signature from the base class
        pass


def make_server(site: Path, port: int) -> http.server.ThreadingHTTPServer:
    """Return a server for `site` bound to 127.0.0.1:`port` (0 picks a free port)."""
    handler = functools.partial(QuietHandler, directory=str(site))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


def serve(root: Path, options: BuildOptions, port: int = 8000, watch: bool = True) -> int:
    """Build once, then serve until Ctrl-C; return the exit status."""
    site = root / "site"
    try:
        write_site(build_site(root, options).outputs, site)
    except ContentError as err:
        print(err, file=sys.stderr)
        if not site.exists():
            return 1
    server = make_server(site, port)
    print(f"serving {site} at http://127.0.0.1:{server.server_address[1]}/  (Ctrl-C to stop)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nstopped")
    finally:
        server.server_close()
    return 0
