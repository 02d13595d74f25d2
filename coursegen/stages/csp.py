"""Content-Security-Policy: a meta tag that allows exactly what the pages use, and nothing else.

The policy is the engine's, as the import map is: the render stage writes it, the pipeline runs
the check, and the parser finds each page's `resources` (a page analysis of its own).
`check_pages` warns about anything a page's own HTML loads that the policy would block.

Scripts are our own files plus three inline scripts, each allowed by its hash: the theme set before
first paint (so a dark page never flashes light), the 404 page's search for the site's folder (when
no base_url says it) and the import map that resolves the theme's module
names to their content-hashed files (assets.import_map; hashed from the exact text the pages carry).
Features add what they need through the `csp(config)` event (coursegen.extensions): widgets compile
WebAssembly ('wasm-unsafe-eval' allows that and no eval of JavaScript), and widgets whose Pyodide
comes from the CDN need the one folder of its pinned version. Workers run our own files or
blobs made from them.
"""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

from coursegen.theme import files as theme

# included verbatim inside <script>: by base.html, and by 404.html when the course sets no base_url
INLINE_SCRIPTS = ("partials/theme-init.js", "partials/notfound-root.js")


def source_hash(text: str, algorithm: str = "sha256") -> str:
    """Return the CSP/SRI hash source of `text`, e.g. 'sha256-…'."""
    digest = hashlib.new(algorithm, text.encode("utf-8")).digest()
    return f"{algorithm}-{base64.b64encode(digest).decode()}"


def origin(url: str) -> str:
    """Return the scheme://host[:port] of an absolute URL."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def directives(config, root: Path, extra: dict | None = None, inline: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Return each CSP directive with its sources, for `config`, the inline scripts of the course's theme,
    the texts of the other `inline` scripts the pages carry (the import map) and `extra` sources per
    directive (course.yaml's `csp:` and extensions'; see extensions.Extensions.csp)."""
    texts = [file.read_text(encoding="utf-8") for name in INLINE_SCRIPTS if (file := theme.find(root, name))]
    hashes = [f"'{source_hash(text)}'" for text in [*texts, *inline]]
    base = [origin(config.base_url)] if config.base_url else []
    found = {
        "default-src": ["'self'"],
        "script-src": ["'self'", *hashes],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "worker-src": ["'self'", "blob:"],
        "manifest-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'", *base],
        "form-action": ["'none'"],
    }
    for directive, sources in (extra or {}).items():
        allowed = found.setdefault(directive, ["'self'"])  # a new one (media-src, frame-src) starts from 'self'
        allowed += [s for s in sources if s not in allowed]
    return found


def policy(config, root: Path, extra: dict | None = None, inline: tuple[str, ...] = ()) -> str:
    """Return the Content-Security-Policy value for the pages' <meta http-equiv> tag."""
    found = directives(config, root, extra, inline)
    return "; ".join(" ".join([name, *sources]) for name, sources in found.items())


# ---- what the policy would block: resources the pages' own HTML references -------------------

RESOURCE_ATTRS = {  # tag → (attribute, directive) pairs it loads from
    "img": (("src", "img-src"), ("srcset", "img-src")),
    "picture": (),
    "video": (("src", "media-src"), ("poster", "img-src")),
    "audio": (("src", "media-src"),),
    "source": (("src", "media-src"), ("srcset", "img-src")),
    "track": (("src", "media-src"),),
    "iframe": (("src", "frame-src"),),
    "script": (("src", "script-src"),),
    "embed": (("src", "object-src"),),
    "object": (("data", "object-src"),),
}
FALLBACK = {"frame-src": "child-src"}  # then default-src, for every fetch directive


class _Resources(HTMLParser):
    """Collect (url, directive) for each resource an HTML fragment loads."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        pairs = RESOURCE_ATTRS.get(tag, ())
        if tag == "link" and values.get("href"):
            rel = (values.get("rel") or "").lower().split()
            pairs = (("href", "style-src" if "stylesheet" in rel else "img-src" if "icon" in rel else "default-src"),)
        for attribute, directive in pairs:
            value = values.get(attribute) or ""
            urls = (
                [part.strip().split()[0] for part in value.split(",") if part.strip()]
                if attribute == "srcset"
                else [value]
            )
            self.found += [(url.strip(), directive) for url in urls if url.strip()]


# A page can only load something the policy blocks through an address with a scheme (https:, data:),
# a protocol-relative one (//host) or an entity-encoded one; a srcset or a <link> may hide one past
# its start, and <object>/<embed> are refused wherever they point (object-src 'none'). Pages with none
# of these (nearly all) skip the HTML parser, which took a third of a build otherwise.
ALWAYS_PARSED = ("srcset", "<link", "<object", "<embed")
ADDRESS_ATTRIBUTES = ("src", "poster", "data")
OUTSIDE_ADDRESS = re.compile(r"""\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:|//|&)""")  # after the name, lowercased
WORD_CHARACTER = re.compile(r"\w")


def may_load_blocked(page_html: str) -> bool:
    """Return True when the page may load something the policy could block (see above). Found with
    `str.find` on the lowercased page: one case-insensitive regex over the page cost ten times as much
    (0.12 s per 200 lessons, a tenth of the parse)."""
    lowered = page_html.lower()
    if any(marker in lowered for marker in ALWAYS_PARSED):
        return True
    for name in ADDRESS_ATTRIBUTES:
        at = lowered.find(name)
        while at != -1:
            whole_word = not (at and WORD_CHARACTER.match(lowered, at - 1))
            if whole_word and OUTSIDE_ADDRESS.match(lowered, at + len(name)):
                return True
            at = lowered.find(name, at + 1)
    return False


def resources(page_html: str) -> list[tuple[str, str]]:
    """Return (url, directive) for every resource the HTML references that the policy could block, in
    order (a page that names only the site's own files, which every directive allows, gives none)."""
    if not may_load_blocked(page_html):
        return []
    parser = _Resources()
    parser.feed(page_html)
    return parser.found


def page_resources(page_html: str, source=None) -> tuple[tuple[str, str], ...]:
    """Return `resources(page_html)` as a page analyser (see markdown.make_markdown): found while
    parsing and cached with the page, so a rebuild does not read every page's HTML again."""
    return tuple(resources(page_html))


def allowed_by(url: str, sources: list[str], self_origin: str = "") -> bool:
    """Return True when one of the CSP `sources` allows loading `url` (relative URLs are the site's own)."""
    parts = urlsplit(url)
    if not parts.scheme and not parts.netloc:
        return "'self'" in sources
    scheme = parts.scheme.lower() or "https"
    if self_origin and f"{scheme}://{parts.netloc}".lower() == self_origin.lower() and "'self'" in sources:
        return True
    for source in sources:
        if source == f"{scheme}:":
            return True
        if "://" not in source:
            continue
        wanted = urlsplit(source)
        host, want = parts.netloc.lower(), wanted.netloc.lower()
        host_ok = host == want or (want.startswith("*.") and host.endswith(want[1:]))
        path = wanted.path or "/"
        path_ok = parts.path.startswith(path) if path.endswith("/") else parts.path == path
        if wanted.scheme == scheme and host_ok and path_ok:
            return True
    return False


def blocked(found_resources, found: dict[str, list[str]], self_origin: str = "") -> list[tuple[str, str]]:
    """Return (url, directive) for each of a page's `resources` that the policy `found` would block."""
    out = []
    for url, directive in found_resources:
        fallback = FALLBACK.get(directive, "")
        effective = directive if directive in found else fallback if fallback in found else "default-src"
        if not allowed_by(url, found.get(effective, []), self_origin):
            out.append((url, effective))
    return out


def check_pages(course, root: Path, extra: dict, problems, memo=None) -> None:
    """Warn about every resource a page references that its Content-Security-Policy would block (in
    `serve` each page's warnings are kept by model.per_unit while the policy stays: only the pages an
    edit replaced are looked at again)."""
    from coursegen.model import per_unit_problems

    found = directives(course.config, root, extra)
    self_origin = origin(course.config.base_url) if course.config.base_url else ""

    def warnings(unit, own) -> None:
        found_resources = unit.page.derived.get("resources")
        if found_resources is None:  # a page made without the parser
            found_resources = resources(unit.page.html)
        if not found_resources:  # most pages: nothing to look at
            return
        source = unit.page.source
        for url, directive in blocked(found_resources, found, self_origin):
            line = next((n for n, row in enumerate(source.text.splitlines(), 1) if url in row), 1)
            own.warning(
                source.path,
                line,
                f"the browser will block {url}: the page's {directive} does not allow it",
                f"allow its origin in course.yaml, e.g. csp: {{{directive}: [{origin(url)}]}}, "
                "or copy the file into the course",
            )

    per_unit_problems(memo, "csp warnings", course.written, warnings, problems, (found, self_origin))
