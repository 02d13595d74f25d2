"""The course files a page's raw HTML names: `<video src>`, `<audio src>`, `<source src>`, `<track src>`,
`<img src>`, a video's `poster`, and `<a href download>`.

The parse stage checks and publishes them as it does Markdown images and links to files
(parse.py, `_resolve_file`); this module only finds each address in the HTML, with its place, so
that address alone is replaced and every other byte of the author's HTML is kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# The attributes that name a file to fetch, per element (`a` only with `download`: any other link of raw HTML
# is the author's to check, like a Markdown link to a page, which raw HTML cannot be).
FILE_ATTRIBUTES = {
    "video": ("src", "poster"),
    "audio": ("src",),
    "source": ("src",),
    "track": ("src",),
    "img": ("src",),
    "a": ("href",),
}
TAG = re.compile(r"<(video|audio|source|track|img|a)\b((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>", re.I)
ATTRIBUTE = re.compile(r"""(?<=[\s"'])([A-Za-z_:][-A-Za-z0-9_:.]*)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+))?""")


def rewrite_files(html: str, resolve: Callable[[str, str, int], str]) -> str:
    """Return `html` with each file address replaced by `resolve(address, element, offset)` (the offset of its
    tag in `html`, for its line); addresses of other sites, `data:` and anchors are passed over."""
    out, last = [], 0
    for tag in TAG.finditer(html):
        element = tag.group(1).lower()
        attributes = list(ATTRIBUTE.finditer(tag.group(2)))
        names = {found.group(1).lower() for found in attributes}
        if element == "a" and "download" not in names:
            continue
        for found in attributes:
            value = found.group(2)
            if found.group(1).lower() not in FILE_ATTRIBUTES[element] or not value:
                continue
            quote = value[0] if value[0] in "\"'" else ""
            address = value[1:-1] if quote else value
            if _passed_over(address):
                continue
            start = tag.start(2) + found.start(2)
            out.append(html[last:start])
            new = resolve(_unescaped(address), element, tag.start())
            out.append(f"{quote}{new}{quote}" if quote else f'"{new}"')
            last = start + len(value)
    out.append(html[last:])
    return "".join(out)


def _passed_over(address: str) -> bool:
    """Return whether an address names no course file: another site's, inline data, or this page's anchor."""
    address = address.strip()
    return not address or address.startswith(("#", "//", "data:", "mailto:")) or "://" in address


def _unescaped(address: str) -> str:
    """Return an attribute's value as the browser reads it (`&amp;` is `&`)."""
    import html

    return html.unescape(address.strip())
