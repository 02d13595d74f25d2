"""The files a source includes (MyST's ```` ```{include} path.md ````), for the parse keys.

A page that includes a file is parsed again when that file changes: its parse key holds a
signature of every file the sources include, found here by a line pattern (a directive shown
inside a code block counts too, which costs a needless re-parse at most). The directive itself is
read by the MyST feature (features/myst/include.py), which resolves paths the same way.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from coursegen.paths import inside_course

DIRECTIVE = re.compile(r"^[ \t>]*(?:`{3,}|~{3,}|:{3,})[ \t]*\{include\}[ \t]*(\S[^\n]*?)[ \t]*$", re.M)


def include_target(naming: str, name: str) -> str:
    """Return the course path an include names: relative to the naming file's folder, or to the course's
    when it starts with '/'."""
    return posixpath.normpath(name[1:] if name.startswith("/") else posixpath.join(posixpath.dirname(naming), name))


def included_texts(root: Path, sources) -> list[tuple[str, bytes | None]]:
    """Return (path, bytes or None when unreadable) for every file the sources include, directly or not."""
    pending = [(s.path, s.text) for s in sources if "{include}" in s.text]
    found: dict[str, bytes | None] = {}
    while pending:
        naming, text = pending.pop()
        for name in DIRECTIVE.findall(text):
            target = include_target(naming, name)
            if target in found or inside_course(root, target) is None:
                continue
            try:
                data = (root / target).read_bytes()
            except OSError:
                found[target] = None
                continue
            found[target] = data
            if b"{include}" in data:
                pending.append((target, data.decode("utf-8", "replace")))
    return sorted(found.items())


def covers_includes(path: str) -> bool:
    """Return whether a changed course path can change what the sources include (any Markdown file)."""
    return path.endswith(".md")
