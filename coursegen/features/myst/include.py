"""MyST's ```` ```{include} path.md ````: the text of another Markdown file of the course, in place.

A core rule, run before the block parser, puts each included file's text where its directive
stands (files it includes in turn too), so the page is parsed as one text: its headings, equations
and footnotes are numbered together. The rule keeps, for every line of that text, the file and line
it came from; the page's problems are recorded through `Relocated`, which reports a problem of an
included line at that file and line. A path is relative to the file that names it (`/` starts at the
course folder), must stay inside the course and must not be a lesson or review; a missing file, a
cycle and front matter in an included file are errors at the directive. Relative links and images
in an included file are read from the including page's folder, as in MyST.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from coursegen.errors import Problems
from coursegen.paths import OUTSIDE_HINT, inside_course
from coursegen.stages.config import MAX_TEXT_BYTES
from coursegen.stages.includes import include_target

PREFIX = re.compile(r"[^ \t>]")
FRONT_MATTER = re.compile(r"^---[ \t]*\n")


@dataclass
class Relocated(Problems):
    """The page's problems, with each one found on an included line moved to that file and line."""

    page: str = ""
    origins: list[tuple[str, int, int]] = field(default_factory=list)  # per line: (file, line, the page's line)

    def error(self, path: str, line: int, message: str, hint: str = "", col: int = 0, where: str = "") -> None:
        super().error(*self.place(path, line), message, hint, col, where)

    def warning(self, path: str, line: int, message: str, hint: str = "", col: int = 0, where: str = "") -> None:
        super().warning(*self.place(path, line), message, hint, col, where)

    def place(self, path: str, line: int) -> tuple[str, int]:
        """Return the file and line a line of the page's text came from."""
        if str(path) == self.page and 1 <= line <= len(self.origins):
            return self.origins[line - 1][:2]
        return str(path), line


def include_rule(state) -> None:
    """Core rule: put the included files' text in the page's (see the module's docstring)."""
    if "{include}" not in state.src:
        return
    env = state.env
    page = env["path"]
    env["include_budget"] = MAX_TEXT_BYTES  # what a page's includes may add, together (files that include
    # one another twice at each step would double at every level)
    lines, origins = _expand(state.md, state.src, page, env, (page,), None)
    if all(origin[0] == page for origin in origins):
        return  # nothing was included (every directive had a problem, or stood in code)
    state.src = "\n".join(lines)
    env["problems"] = Relocated(items=env["problems"].items, page=page, origins=origins)
    env["links"] = RelocatedLinks(env["links"], origins)


class RelocatedLinks(list):
    """The page's links: one found on an included line gets the line of its directive in the page, where
    the link stage, which knows only pages, reports a broken anchor."""

    def __init__(self, links, origins: list[tuple[str, int, int]]):
        super().__init__(links)
        self.origins = origins

    def append(self, link) -> None:
        if 1 <= link.line <= len(self.origins):
            link = replace(link, line=self.origins[link.line - 1][2])
        super().append(link)


def _expand(md, text: str, path: str, env: dict, stack: tuple, anchor: int | None):
    """Return the lines of `text` with its includes expanded, and each line's (file, line, the page's line)."""
    lines = text.split("\n")
    out: list[str] = []
    origins: list[tuple[str, int, int]] = []
    done = 0
    for token in _includes(md, text, path, env):
        start, end = token.map
        for number in range(done, start):
            out.append(lines[number])
            origins.append((path, number + 1, anchor or number + 1))
        done = start
        included = _read(token, path, env, stack)
        if included is None:
            continue  # its lines stay: the directive renders nothing
        target, body = included
        inner, inner_origins = _expand(md, body, target, env, (*stack, target), anchor or start + 1)
        prefix = PREFIX.sub(" ", lines[start][: lines[start].find(token.markup)])
        here = (path, start + 1, anchor or start + 1)
        out += ["", *(prefix + line if line else line for line in inner), ""]
        origins += [here, *inner_origins, here]
        done = end
    for number in range(done, len(lines)):
        out.append(lines[number])
        origins.append((path, number + 1, anchor or number + 1))
    return out, origins


def _includes(md, text: str, path: str, env: dict) -> list:
    """Return the `myst_include` tokens of `text`, found by the block parser (so none in code is taken)."""
    scratch = {**env, "problems": Problems(), "path": path}
    return [token for token in md.block.parse(text, md, scratch, []) if token.type == "myst_include" and token.map]


def _read(token, path: str, env: dict, stack: tuple) -> tuple[str, str] | None:
    """Return (the included file's course path, its text), or None after reporting why it cannot be."""
    directive = token.meta["directive"]
    problems, ctx, line = env["problems"], env["ctx"], directive.line
    for key, (_, option_line) in directive.options.items():
        problems.warning(
            path, option_line, f"option ':{key}:' of '{{include}}' is not supported", "include whole files"
        )
    name = directive.argument.strip()
    if not name:
        problems.error(path, line, "'{include}' needs a file", "write ```{include} shared/notation.md")
        return None
    target = include_target(path, name)
    if inside_course(ctx.root, target) is None:
        problems.error(path, line, f"'{name}' is outside the course", OUTSIDE_HINT)
    elif target in ctx.slug_by_path:
        problems.error(
            path,
            line,
            f"'{target}' is a unit of the course, which cannot be included",
            "link to it, or move the shared text to a file outside lessons/ and reviews/ and include that",
        )
    elif not target.endswith(".md"):
        problems.error(path, line, f"'{name}' is not a Markdown file", "include a .md file; show code in a code fence")
    elif target in stack:
        cycle = " → ".join((*stack[stack.index(target) :], target))
        problems.error(path, line, f"'{{include}}' cycle: {cycle}", "remove one of these includes")
    elif not (ctx.root / target).is_file():
        problems.error(path, line, f"included file '{name}' not found (looked for '{target}')")
    else:
        return _text(target, path, line, env)
    return None


def _text(target: str, path: str, line: int, env: dict) -> tuple[str, str] | None:
    """Return (target, its text) for an existing file, or None when it is unreadable or has front matter."""
    problems = env["problems"]
    try:
        text = (env["ctx"].root / target).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        problems.error(path, line, f"cannot read the included file '{target}': {err}")
        return None
    if env["include_budget"] < 0:
        return None  # reported once, when it ran out
    env["include_budget"] -= len(text)
    if env["include_budget"] < 0:
        limit = MAX_TEXT_BYTES // (1024 * 1024)
        problems.error(path, line, f"the page's included text passes {limit} MB", "include fewer or smaller files")
        return None
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd")
    if FRONT_MATTER.match(text):
        problems.error(
            target, 1, "an included file has no front matter", f"remove it: the text becomes part of '{path}'"
        )
        return None
    return target, text.rstrip("\n")
