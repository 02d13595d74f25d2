"""Parse stage: Markdown with front matter → Page, using markdown-it-py and mdit-py-plugins.

Extensions (widgets, questions, callouts, diagrams, computed numbers) plug in through
`install(md)` functions; fenced blocks dispatch on the first word of their info string.
Problems are recorded in `env["problems"]` with the token's line; nothing raises mid-parse.

`parse_pages` parses only the sources whose *parse key* changed since the memo's last build: a
page's own text plus what parsing may consult (the set of sources, course.yaml, media files; the
course's Python package for pages with `{calc}`; widgets/, that package and the template folders
for pages with widgets or exercises). With a fresh memo that is every source: the same code path.
"""

from __future__ import annotations

import hashlib
import itertools
import posixpath
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.anchors.index import slugify
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
from mdurl import encode as url_encode

from coursegen.author_code import AuthorCode, Limits
from coursegen.course_code import CourseCode
from coursegen.errors import Problems, did_you_mean
from coursegen.extension_rules import ENGINE_ANALYSES
from coursegen.extensions import Extensions, parse_failure
from coursegen.incremental import ParseKept, ParseRecord, keep_parsed, plan_parse
from coursegen.memo import Memo, remembered
from coursegen.model import Heading, Link, Page, Source
from coursegen.parallel import parallel_map
from coursegen.paths import OUTSIDE_HINT, inside_course
from coursegen.schema import Schema, check
from coursegen.stages import html_files, tables
from coursegen.stages.csp import page_resources
from coursegen.yamlio import YamlError, load_yaml

if TYPE_CHECKING:  # for the annotation alone: parsing a page without widgets needs no Jinja
    import jinja2

FRONT_MATTER = Schema(
    "front matter",
    {"title": str, "summary": str, "kicker": str, "lede": str, "draft": bool, "number": int, "template": str},
    required={"title": "title: First steps"},
    noun="front-matter key",
    located=False,
)
FRONT_MATTER_DEFAULTS = {
    "title": "",
    "summary": "",
    "kicker": "",
    "lede": "",
    "draft": False,
    "number": None,
    "template": "",
}


@dataclass
class ParseContext:
    """What parsing one page may consult about the rest of the course (read-only)."""

    root: Path
    slug_by_path: dict[str, str]  # "lessons/02-kda.md" → "kda"
    extra: dict = field(default_factory=dict)  # each extension's own `prepare` data, by its name
    python: CourseCode | None = None  # the build's one way to the course's Python ({calc}, widgets, exercises)
    templates: jinja2.Environment | None = None  # render's Jinja environment, for widgets' figures
    author_files: frozenset[str] = frozenset()  # the course extensions' files: a failure there is a problem
    memo: Memo | None = None  # the session's, for what parse rules keep across pages (highlighted code)

    def __post_init__(self):  # a page parsed outside a build (tests): default limits, a fresh environment
        if self.python is None:
            self.python = CourseCode(self.root, AuthorCode(), Limits())
        if self.templates is None:
            # Here: the author-code worker imports this module (for exercises) and needs no Jinja.
            from coursegen.stages.render import make_environment, template_folders

            self.templates = make_environment(template_folders(self.root))


class CourseRenderer(RendererHTML):
    """markdown-it's HTML renderer, with the fences that extensions render themselves."""

    fence_handlers: dict[str, Callable]  # fence name → handler(token, env) -> html


class CourseParser(MarkdownIt):
    """markdown-it with what the course's rules share across pages (set up by make_markdown)."""

    renderer: CourseRenderer
    block_names: set[str]  # names of ::: blocks, for the misspelled-block check
    page_analysers: dict[str, Callable]  # name → analyse(html, source), see make_markdown
    container_rules: list[Callable]  # the ::: blocks' rules, tried by one rule (register_block)
    role_handlers: dict[str, Callable]  # inline roles such as {calc} (roles.register_role)
    memo: Memo | None  # the session's: lexers and formulas repeat across pages and builds


def make_markdown(extensions=(), memo: Memo | None = None) -> CourseParser:
    """Return the configured parser with our plugins and the given extension modules installed; its
    highlighter and formulas are kept in `memo` (None: computed every time)."""

    def highlight(code: str, lang: str, attrs) -> str:
        return highlight_code(code, lang, attrs, memo)

    md = CourseParser("commonmark", {"highlight": highlight, "typographer": False}, renderer_cls=CourseRenderer)
    md.memo = memo
    md.enable(["table", "strikethrough"])
    tables.install(md)
    md.use(front_matter_plugin).use(footnote_plugin).use(deflist_plugin)
    # Math's syntax; its MathML, numbers and checks are the math feature's (features/math/).
    md.use(dollarmath_plugin, renderer=_plain_math, allow_space=False, allow_digits=False)
    md.use(anchors_plugin, min_level=2, max_level=4, slug_func=heading_slug)
    md.renderer.fence_handlers = {}
    md.block_names = set()
    # name → analyse(html, source): per-page work of later stages, done while parsing so that it
    # runs in both processes of a large build and is cached with the page.
    # The link stage checks anchors against "ids"; the CSP check looks at "resources"; the service
    # worker's version and serve's search index tell changed pages from kept ones by "sha256".
    md.page_analysers = dict(zip(ENGINE_ANALYSES, (element_ids, page_resources, html_sha256), strict=True))
    md.add_render_rule("fence", _render_fence)
    dispatch = extensions if isinstance(extensions, Extensions) else Extensions(extensions)
    dispatch.install(md)
    md.page_analysers.update(dispatch.analysers())  # each extension's `analyse`, kept as page.derived[name]
    md.core.ruler.before("text_join", "footnote_refs", _check_footnote_refs)  # escapes are still apart then
    md.core.ruler.push("course_links", _resolve_links)
    md.core.ruler.push("course_checks", _check_blocks)
    return md


def parser(extensions, memo: Memo, pages_restored: bool = False) -> tuple[CourseParser, bool]:
    """Return the parser with these extensions installed, made again only when they change, and whether
    it was made now (then no kept page holds its syntax: the memo's pages are forgotten, unless they were
    `pages_restored` from .coursegen-cache/, parsed by an equal parser: see disk_cache.load_pages)."""
    extensions = tuple(extensions.all if isinstance(extensions, Extensions) else extensions)
    made: list[CourseParser] = []

    def make() -> CourseParser:
        made.append(make_markdown(extensions, memo))
        return made[0]

    md = memo.get("parser", extensions, make)
    if made and not pages_restored:
        memo.clear("page")
    return md, bool(made) and not pages_restored


def parse_pages(
    md: CourseParser,
    sources: list[Source],
    ctx: ParseContext,
    problems: Problems,
    kept: ParseKept,
    jobs: int | None = None,
    meanwhile=None,
) -> tuple[list[Page], ParseRecord]:
    """Return a Page per source and the new ParseRecord, parsing only the sources whose parse key
    differs from their kept page's (incremental.plan_parse). Problems of kept pages are reported
    again, in path order as in a full build. Pages are parsed in `jobs` processes (None: one per
    core); `meanwhile()` runs in this process while they are (see parallel.parallel_map)."""
    package = ctx.python.package if ctx.python is not None else "kernels"  # the course's Python package
    catalogue = ctx.extra.get("messages", {})  # what parse rules write in the course's language
    # What extensions found for pages with widgets or exercises (how they reach Pyodide), as hashes.
    extension_inputs = tuple(getattr(data, "page_inputs", "") for _, data in sorted(ctx.extra.items()))
    shared_inputs = tuple(getattr(data, "parse_inputs", "") for _, data in sorted(ctx.extra.items()))  # any page's
    plan = plan_parse(
        ctx.root,
        package,
        catalogue,
        sources,
        kept.sources,
        kept.config_text,
        kept.last,
        kept.memo,
        kept.changes,
        extension_inputs,
        shared_inputs,
    )
    results = parse_many(md, plan.todo, ctx, jobs, meanwhile)
    parsed, record = keep_parsed(plan, results, sources, kept.last, kept.memo)
    for found in parsed:  # sources come sorted by path: the order of a full build
        problems.items.extend(found.problems)
    return [found.page for found in parsed], record


def parse_one(md: CourseParser, source: Source, ctx: ParseContext) -> tuple:
    """Return (Page, problems) for one source, its problems kept apart for the memo."""
    problems = Problems()
    try:
        page = parse_source(md, source, ctx, problems)
    except (Exception, SystemExit, KeyboardInterrupt) as err:  # a course extension's rule may exit, too
        problem = parse_failure(err, source.path, ctx.root, ctx.author_files)
        if problem is None:
            raise
        problems.items.append(problem)
        page = Page(source=source, meta=dict(FRONT_MATTER_DEFAULTS), html="")
    return page, problems.items


def parse_many(
    md: CourseParser, sources: list[Source], ctx: ParseContext, jobs: int | None, meanwhile=None
) -> list[tuple]:
    """Return (Page, problems) per source, in order, in `jobs` processes for large batches."""
    return parallel_map(lambda source: parse_one(md, source, ctx), sources, jobs, meanwhile)


def parse_source(md: CourseParser, source: Source, ctx: ParseContext, problems: Problems) -> Page:
    """Return the Page for one source (with default front matter when its own is unusable)."""
    env: dict[str, Any] = {
        "path": source.path,
        "problems": problems,
        "ctx": ctx,
        "source": source,
        "links": [],
        "assets": [],
        "widgets": [],
        "questions": [],
        "derived": {},  # what rules found for later stages (e.g. "targets": stages/references.py)
    }
    tokens = md.parse(source.text, env)
    meta = _front_matter(tokens, source.path, problems, env.get("heading_title"))
    html = md.renderer.render(tokens, md.options, env)
    if not html.strip() or not any(t.type not in ("front_matter",) for t in tokens):
        problems.error(
            source.path,
            1,
            "this unit has no content below its front matter",
            "write the lesson, or mark it 'draft: true' and list it later",
        )
    return Page(
        source=source,
        meta=meta,
        html=html,
        headings=tuple(_headings(tokens)),
        links=tuple(env["links"]),
        assets=tuple(env["assets"]),
        widgets=tuple(env["widgets"]),
        questions=tuple(env["questions"]),
        derived={**env["derived"], **{name: analyse(html, source) for name, analyse in md.page_analysers.items()}},
    )


def html_sha256(html: str, source=None) -> str:
    """Return the hex SHA-256 of a page's body HTML (a page analyser: see page_digest)."""
    return hashlib.sha256(html.encode()).hexdigest()


def page_digest(page: Page) -> str:
    """Return the SHA-256 of `page.html`: found while parsing, or here for a page made without the parser."""
    return page.derived.get("sha256") or html_sha256(page.html)


def heading_slug(title: str) -> str:
    """Return a heading's anchor: GitHub's slug of its text (NFC, as links are compared), or 'section' for
    text with no letters ('## ???')."""
    return slugify(unicodedata.normalize("NFC", title)) or "section"


ID_ATTR = re.compile(r'\sid="([^"]+)"')


def element_ids(html: str, _source=None) -> frozenset[str]:
    """Return every element id in a rendered page (headings, questions, footnotes, widgets)."""
    return frozenset(ID_ATTR.findall(html))


def _front_matter(tokens, path: str, problems: Problems, heading_title: str | None = None) -> dict:
    """Return validated front matter from the first token (defaults where unusable), recording problems.
    `heading_title`: the page's leading `# Heading`, its title where the front matter gives none (MyST's
    habit: features/myst/title.py)."""
    meta = dict(FRONT_MATTER_DEFAULTS)
    if not tokens or tokens[0].type != "front_matter":
        if heading_title is not None:
            meta["title"] = heading_title
            return meta
        hint = "start the file with '---', a 'title:' line and '---', or with a '# Title' heading"
        if path.endswith(".ipynb"):
            hint = "start cell 1 with a '# Title' heading, make it a raw cell of '---', a 'title:' line and '---',"
            hint += " or give the notebook metadata a 'coursegen' mapping with a title"
        problems.error(path, 1, "no YAML front matter", hint)
        return meta
    try:
        data = load_yaml(tokens[0].content, first_line=2)
    except YamlError as err:
        problems.error(path, err.line, err.message, err.hint)
        return meta
    if heading_title is not None and isinstance(data, dict) and "title" not in data:
        data = {"title": heading_title, **data}
    elif heading_title is not None and data is None:
        data = {"title": heading_title}
    meta.update(check(data, FRONT_MATTER, path, problems, line=2))
    return meta


def _headings(tokens):
    """Yield the anchored h2/h3 headings in document order."""
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.attrGet("id"):
            text = "".join(
                c.content for c in tokens[index + 1].children or () if c.type in ("text", "code_inline", "math_inline")
            )
            yield Heading(int(token.tag[1]), token.attrGet("id"), text.strip(), token.map[0] + 1)


# ---- fenced blocks ----------------------------------------------------------------------


def split_info(info: str) -> tuple[str, str]:
    """Split a fence or block info string into its name and the rest."""
    parts = info.strip().split(maxsplit=1)
    return (parts[0] if parts else ""), (parts[1] if len(parts) > 1 else "")


def parse_attrs(rest: str, env: dict, line: int, allowed: dict) -> dict:
    """Parse `{key: value, …}` (YAML flow) after a block name, checking it against `allowed` (key → type)."""
    if not rest.strip():
        return {}
    problems, path = env["problems"], env["path"]
    try:
        data = load_yaml(rest, first_line=line)
    except YamlError as err:
        problems.error(path, line, err.message.replace("malformed YAML", "malformed block attributes"), err.hint)
        return {}
    schema = Schema("block attributes", allowed, noun="attribute", located=False)
    return dict(check(data, schema, path, problems, line))


def _render_fence(self, tokens, idx, options, env):
    token = tokens[idx]
    handler = self.fence_handlers.get(split_info(token.info)[0])
    return handler(token, env) if handler else self.fence(tokens, idx, options, env)


def register_fence(md: CourseParser, name: str, handler) -> None:
    """Render fences whose info string starts with `name` through `handler(token, env) -> html`."""
    md.renderer.fence_handlers[name] = handler


def register_block(md: CourseParser, name: str, render) -> None:
    """Add a `::: name` container block rendered by `render(self, tokens, idx, options, env)`."""
    from mdit_py_plugins.container import container_plugin

    md.use(container_plugin, name=name, render=render)
    md.block_names.add(name)
    # One rule tries every container, and only on lines that start with ':' (a dozen separate
    # rules, each called at every line of every page, cost a tenth of the parse).
    rule = next(r for r in md.block.ruler.__rules__ if r.name == f"container_{name}")
    md.block.ruler.disable(rule.name)
    if not hasattr(md, "container_rules"):
        md.container_rules = []
        md.block.ruler.before(
            "fence", "containers", _containers, {"alt": ["paragraph", "reference", "blockquote", "list"]}
        )
    md.container_rules.append(rule.fn)


def _containers(state, start_line: int, end_line: int, silent: bool) -> bool:
    """Block rule: hand a line starting with ':' to each registered container until one takes it."""
    start = state.bMarks[start_line] + state.tShift[start_line]
    if state.src[start : start + 1] != ":":
        return False
    return any(rule(state, start_line, end_line, silent) for rule in state.md.container_rules)


def highlight_code(code: str, lang: str, _attrs, memo: Memo | None = None) -> str:
    """Return Pygments-highlighted HTML for a fenced block, or '' to use the plain renderer."""
    if not lang:
        return ""
    lexer = _lexer(lang, memo)
    if lexer is None:
        return ""
    from pygments import highlight

    body = highlight(code, lexer, _formatter(memo))
    return f'<pre class="highlight" tabindex="0"><code class="language-{escapeHtml(lang)}">{body}</code></pre>'


# Pygments is imported on first use, not with this module: it costs tens of
# milliseconds, which a build on two processes then pays in both at once rather than before it
# splits, and a course without code never pays.

# The formatter and lexers are kept in the session's memo, passed down from the parser
# (a language repeats across pages, and a formatter costs more to make than a short highlight).


def _formatter(memo: Memo | None):
    def make():
        from pygments.formatters import HtmlFormatter

        return HtmlFormatter(nowrap=True)

    return remembered(memo, "pygments formatter", None, make)


def _lexer(lang: str, memo: Memo | None):
    """Return the Pygments lexer for a fence language, or None when Pygments has none."""

    def find():
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound

        try:
            return get_lexer_by_name(lang)
        except ClassNotFound:
            return None

    return remembered(memo, "lexer", lang, find)


def _plain_math(latex: str, _options) -> str:
    """Return a formula as code: what a parser without the math feature shows."""
    return f"<code>{escapeHtml(latex)}</code>"


# ---- core rules: links, misspelled or unclosed blocks -------------------------------


LINKING = ("link_open", "image", "html_inline")


def _resolve_links(state) -> None:
    """Rewrite links to other sources (`02-kda.md#fade`) and to the course's files (images, a CSV, a video in
    raw HTML) as site URLs, and record them."""
    env = state.env
    ctx: ParseContext = env["ctx"]
    base = posixpath.dirname(env["path"])
    for block in state.tokens:
        if block.type == "html_block":
            block.content = _html_files(block.content, (block.map[0] + 1) if block.map else 1, base, env, ctx)
        if not any(token.type in LINKING for token in block.children or ()):
            continue  # most paragraphs: no need to count their lines
        for token, line in child_lines(block):
            if token.type == "link_open":
                token.attrSet("href", _resolve_href(token.attrGet("href") or "", base, line, env, ctx))
            elif token.type == "image":
                token.attrSet("src", _resolve_image(token.attrGet("src") or "", base, line, env, ctx))
            elif token.type == "html_inline":
                token.content = _html_files(token.content, line, base, env, ctx)


HTML_FILE_NAMES = {"video": "video", "audio": "audio", "source": "media source", "track": "track", "a": "download"}


def _html_files(html: str, line: int, base: str, env: dict, ctx: ParseContext) -> str:
    """Return raw HTML with the course files it names (html_files.py) checked and given their site addresses."""
    if "<" not in html:
        return html

    def resolve(address: str, element: str, offset: int) -> str:
        cut = min((at for at in (address.find("#"), address.find("?")) if at >= 0), default=len(address))
        path, rest = address[:cut], address[cut:]  # a media fragment (#t=10) or a query stays as written
        what = HTML_FILE_NAMES.get(element, "image")
        new = _resolve_file(path, base, line + html.count("\n", 0, offset), env, ctx, what)
        return (new + rest).replace('"', "%22").replace("'", "%27")

    return html_files.rewrite_files(html, resolve)


def child_lines(block):
    """Yield each inline child of a block token with its own 1-based line (a paragraph spans several)."""
    line = (block.map[0] + 1) if block.map else 1
    for token in block.children or ():
        yield token, line
        if token.type in ("softbreak", "hardbreak"):
            line += 1
        else:  # inline HTML and math may span lines too
            line += token.content.count("\n")


FOOTNOTE_REF = re.compile(r"\[\^([^\]\s]+)\]")


def _check_footnote_refs(state) -> None:
    """Report `[^label]` left as text: a footnote referenced but never defined."""
    if "[^" not in state.src:
        return
    for block in state.tokens:
        if block.type != "inline" or "[^" not in block.content:
            continue
        # Adjacent text tokens, read together: the parser splits '[^nope]' at its brackets.
        for is_text, grouped in itertools.groupby(child_lines(block), key=lambda pair: pair[0].type == "text"):
            run = list(grouped)
            for match in FOOTNOTE_REF.finditer("".join(token.content for token, _ in run) if is_text else ""):
                label = match.group(1)
                state.env["problems"].error(
                    state.env["path"],
                    run[0][1],
                    f"footnote '[^{label}]' is never defined",
                    f"add a line '[^{label}]: the note' below the paragraph, "
                    "or write '\\[^' to show the brackets as text",
                )


def _is_external(href: str) -> bool:
    return "://" in href or href.startswith(("mailto:", "data:", "//"))


def decoded(url_part: str) -> str:
    """Return a link's path or anchor as the author means it: percent-decoded (markdown-it encodes
    'cancelación' as 'cancelaci%C3%B3n') and NFC-normalised, as headings' anchors and file names are compared."""
    return unicodedata.normalize("NFC", unquote(url_part))


def _resolve_href(href: str, base: str, line: int, env: dict, ctx: ParseContext) -> str:
    if _is_external(href):
        return href
    target, _, anchor = href.partition("#")
    anchor = decoded(anchor)
    fragment = f"#{url_encode(anchor)}" if anchor else ""
    if not target:  # an anchor on this page
        env["links"].append(Link(env["source"].slug, anchor, line))
        return fragment or href
    path = posixpath.normpath(posixpath.join(base, decoded(target)))
    slug = ctx.slug_by_path.get(path)
    if slug is None and not path.endswith(".md"):  # a file of the course: a CSV, a PDF, a .py, …
        return _resolve_file(target, base, line, env, ctx, "link") + fragment
    if slug is None:
        _report_link_target(href, path, base, line, env, ctx)
        return href
    env["links"].append(Link(slug, anchor, line))
    return f"{slug}.html{fragment}"


def _report_link_target(href: str, path: str, base: str, line: int, env: dict, ctx: ParseContext) -> None:
    """Report a link to a .md file that is no lesson or review."""
    env["problems"].error(
        env["path"],
        line,
        f"broken link '{href}': no source file '{path}'",
        _near_link(path, base, ctx.slug_by_path) or "link to a lesson or review's .md file",
    )


def _near_link(path: str, base: str, paths) -> str:
    """Return 'did you mean …?' for the source nearest `path`, written as the link must be where it stands:
    relative to the linking source's folder `base` (a root path pasted there would be broken again)."""
    return did_you_mean(posixpath.relpath(path, base or "."), [posixpath.relpath(p, base or ".") for p in paths])


def _resolve_image(src: str, base: str, line: int, env: dict, ctx: ParseContext) -> str:
    return src if _is_external(src) else _resolve_file(src, base, line, env, ctx, "image")


def _resolve_file(src: str, base: str, line: int, env: dict, ctx: ParseContext, what: str) -> str:
    """Return the site address of a course file a page shows or links to (an image, a CSV, a video, …), noting
    it in `env["assets"]` to be copied at a stable path, `media/` and its course path with '-' for '/'; report a
    file that is missing, hidden or outside the course, and return `src` unchanged then."""
    # The parser percent-encodes an address ('my pic.png', 'café.png' become 'my%20pic.png', 'caf%C3%A9.png'):
    # the file is found by its decoded name, and the page gets the encoded name of its copy.
    name = decoded(src)
    if "\x00" in name:
        env["problems"].error(env["path"], line, f"{what} '{src}' names a file with a NUL character")
        return src
    path = posixpath.normpath(posixpath.join(base, name))
    if inside_course(ctx.root, path) is None:
        env["problems"].error(env["path"], line, f"'{src}' is outside the course", OUTSIDE_HINT)
        return src
    if any(part.startswith(".") for part in path.split("/")):
        env["problems"].error(
            env["path"], line, f"{what} '{name}' names a hidden file or folder", "the build publishes no hidden file"
        )
        return src
    if not (ctx.root / path).is_file():
        near = _near_file(ctx.root, path, base)
        env["problems"].error(env["path"], line, f"{what} '{name}' not found (looked for '{path}')", near)
        return src
    site_path = "media/" + path.replace("/", "-")
    env["assets"].append((site_path, path))
    return url_encode(site_path)


def _near_file(root: Path, path: str, base: str) -> str:
    """Return 'did you mean …?' for the file of the same folder nearest a missing one, written as the page must."""
    folder = root / posixpath.dirname(path)
    names = sorted(entry.name for entry in folder.iterdir() if entry.is_file()) if folder.is_dir() else []
    near = did_you_mean(posixpath.basename(path), names)
    if not near:
        return ""
    found = near.split("'")[1]
    return f"did you mean '{posixpath.relpath(posixpath.join(posixpath.dirname(path), found), base or '.')}'?"


def _check_blocks(state) -> None:
    """Report misspelled `:::` blocks, unclosed ones and unclosed HTML comments."""
    env, lines = state.env, None
    problems, path = env["problems"], env["path"]
    for index, token in enumerate(state.tokens):
        line = (token.map[0] + 1) if token.map else 1
        if token.type == "inline" and token.content.startswith(":::"):
            word = token.content.lstrip(":").split(maxsplit=1)[0] if token.content.strip(":").strip() else ""
            if word and state.tokens[index - 1].type == "paragraph_open":
                names = sorted(state.md.block_names)
                near = did_you_mean(word, names)
                problems.error(
                    path,
                    line,
                    f"unknown block '::: {word}'",
                    (near + " " if near else "") + "known blocks are: " + ", ".join(names),
                )
        elif token.type.startswith("container_") and token.type.endswith("_open"):
            lines = lines or state.src.split("\n")
            end = token.map[1] if token.map else len(lines)
            closing = lines[end].strip() if end < len(lines) else ""
            if not (closing.startswith(":::") and not closing.strip(":").strip()):
                problems.error(
                    path,
                    line,
                    f"block '{token.markup} {token.info.strip()}' is never closed",
                    f"end it with a line of {token.markup}",
                )
        elif token.type == "html_block" and token.content.rfind("<!--") > token.content.rfind("-->"):
            problems.error(
                path,
                line,
                "HTML comment '<!--' is never closed",
                "end it with '-->'; a browser hides everything after it, the page's end included",
            )
