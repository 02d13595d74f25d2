"""Content-Security-Policy: a meta tag that allows exactly what the pages use, and nothing else.

Scripts are our own files plus the one inline script (the theme set before first paint, so a dark
page never flashes light), allowed by its hash. Pyodide and Pagefind's search both compile WebAssembly
('wasm-unsafe-eval' allows that and no eval of JavaScript); Pyodide, when it comes from the CDN,
also needs the one folder of its pinned version. Pagefind fetches its index from the site itself.
Workers run our own files or blobs made from them.
"""
from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from urllib.parse import urlsplit

from .widget_site import CDN

INLINE_SCRIPTS = ("partials/theme-init.js",)  # included verbatim inside <script> by base.html


def source_hash(text: str, algorithm: str = "sha256") -> str:
    """Return the CSP/SRI hash source of `text`, e.g. 'sha256-…'."""
    digest = hashlib.new(algorithm, text.encode("utf-8")).digest()
    return f"{algorithm}-{base64.b64encode(digest).decode()}"


def origin(url: str) -> str:
    """Return the scheme://host[:port] of an absolute URL."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def pyodide_cdn(config) -> str:
    """Return the pinned Pyodide folder on the CDN: the policy allows that folder, not the whole host."""
    return CDN.format(version=config.pyodide.version)


def directives(config, templates: Path) -> dict[str, list[str]]:
    """Return each CSP directive with its sources, for `config` and the inline scripts in `templates`."""
    inline = [f"'{source_hash((templates / name).read_text(encoding='utf-8'))}'"
              for name in INLINE_SCRIPTS if (templates / name).is_file()]
    cdn = [pyodide_cdn(config)] if config.pyodide.source == "cdn" else []
    base = [origin(config.base_url)] if config.base_url else []
    return {
        "default-src": ["'self'"],
        "script-src": ["'self'", *inline, "'wasm-unsafe-eval'", *cdn],  # WebAssembly: Pyodide, Pagefind
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'", *cdn],
        "worker-src": ["'self'", "blob:"],
        "manifest-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'", *base],
        "form-action": ["'none'"],
    }


def policy(config, templates: Path) -> str:
    """Return the Content-Security-Policy value for the pages' <meta http-equiv> tag."""
    return "; ".join(" ".join([name, *sources]) for name, sources in directives(config, templates).items())
