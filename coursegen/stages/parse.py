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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.anchors.index import slugify
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

from coursegen.errors import Problems, did_you_mean
from coursegen.extensions import parse_failure
from coursegen.features.csp import page_resources
from coursegen.memo import Changes, Memo, digest, memoized, tree_signature, under
from coursegen.model import Heading, Link, Page, Source
from coursegen.parallel import parallel_map
from coursegen.paths import OUTSIDE_HINT, inside_course
from coursegen.schema import Schema, check
from coursegen.stages.load import SOURCE_DIRS, author_code_uses
from coursegen.theme import files as theme
from coursegen.yamlio import YamlError, load_yaml

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
    extra: dict = field(default_factory=dict)  # per-extension data (widget registry, …)


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


def make_markdown(extensions=()) -> CourseParser:
    """Return the configured parser with our plugins and the given extension modules installed."""
    md = CourseParser("commonmark", {"highlight": highlight_code, "typographer": False}, renderer_cls=CourseRenderer)
    md.enable(["table", "strikethrough"])
    md.use(front_matter_plugin).use(footnote_plugin).use(deflist_plugin)
    md.use(dollarmath_plugin, renderer=render_math, allow_space=False, allow_digits=False)
    md.add_render_rule("math_block", render_display_math)
    md.use(anchors_plugin, min_level=2, max_level=4, slug_func=heading_slug)
    md.renderer.fence_handlers = {}
    md.block_names = set()
    # name → analyse(html, source): per-page work of later stages, done while parsing so that it
    # runs in both processes of a large build and is cached with the page.
    # The link stage checks anchors against "ids"; the CSP check looks at "resources"; the service
    # worker's version and serve's search index tell changed pages from kept ones by "sha256".
    md.page_analysers = {"ids": element_ids, "resources": page_resources, "sha256": html_sha256}
    md.add_render_rule("fence", _render_fence)
    for extension in extensions:
        extension.install(md)
    md.core.ruler.before("text_join", "footnote_refs", _check_footnote_refs)  # escapes are still apart then
    md.core.ruler.push("course_links", _resolve_links)
    md.core.ruler.push("course_checks", _check_blocks_and_math)
    return md


def parser(extensions, memo: Memo) -> CourseParser:
    """Return the parser with these extensions installed, made again only when they change (and with
    it every page is parsed again: see parse_pages)."""
    extensions = tuple(extensions)
    return memo.get("parser", extensions, lambda: make_markdown(extensions))


def parse_pages(
    md: CourseParser,
    sources: list[Source],
    ctx: ParseContext,
    problems: Problems,
    memo: Memo,
    changes: Changes,
    jobs: int | None = None,
    meanwhile=None,
) -> list[Page]:
    """Return a Page per source, parsing only those whose parse key differs from the memo's.

    When the watcher named every change and nothing all pages share moved, only the sources the
    load stage read again ("unparsed") are keyed; the others are the same objects as last time, so
    their keys are too. Problems of kept pages are reported again, in path order as in a full build.
    Pages are parsed in `jobs` processes (None: one per core); `meanwhile()` runs in this process
    while they are (see parallel.parallel_map).
    Records "parsed" (the paths parsed now) and adds them to "reparsed" and "relink" (for render, link)."""
    records = memo.records
    shared = shared_parse_inputs(ctx, memo, changes)
    # Another parser: no kept page holds its syntax; but pages loaded from .coursegen-cache/ were
    # parsed by an equal one (the same coursegen and course code: see disk_cache.load_pages).
    if records.get("parsed with") is not md and not records.pop("parser on disk", False):
        memo.clear("page")
        records["with problems"] = {}
    if changes.known and shared == records.get("parse inputs") and records.get("parsed with") is md:
        loaded = records["sources"]
        candidates = [loaded[path] for path in sorted(records.get("unparsed", ())) if path in loaded]
    else:
        candidates = sources
    records.update({"parse inputs": shared, "parsed with": md, "unparsed": set()})
    with_problems: dict[str, list] = records.setdefault("with problems", {})
    kept = memo.table("page")  # path → (parse key, Page, its problems, short hash of the key)
    keys = {s.path: parse_key(s, shared, memo) for s in candidates}
    todo = [s for s in candidates if kept.get(s.path, ((),))[0] != keys[s.path]]
    for source, (page, items) in zip(todo, parse_many(md, todo, ctx, jobs, meanwhile)):
        memo.put("page", source.path, (keys[source.path], page, items, digest(keys[source.path])))
        with_problems.pop(source.path, None)
        if items:
            with_problems[source.path] = items
    if len(memo.table("page")) != len(sources) or candidates is sources:  # a source is gone: forget its page
        memo.keep_only("page", [s.path for s in sources])
        records["with problems"] = with_problems = {
            s.path: with_problems[s.path] for s in sources if s.path in with_problems
        }
    records["parsed"] = [s.path for s in todo]
    records.setdefault("reparsed", set()).update(records["parsed"])
    records.setdefault("relink", set()).update(records["parsed"])
    for path in sorted(with_problems):  # sources come sorted by path: the order of a full build
        problems.items.extend(with_problems[path])
    kept = memo.table("page")
    return [kept[s.path][1] for s in sources]


def shared_parse_inputs(ctx: ParseContext, memo: Memo, changes: Changes) -> dict:
    """Return what parsing may consult beside a page's own text, as hashes: "all" for every page,
    "calc" for pages with {calc}, "widgets" for pages with widgets."""
    root, records = ctx.root, memo.records
    code = ctx.extra.get("calc")  # calc.CourseCode: the way to the course's Python package
    name = code.package if code is not None else "kernels"
    config_text = records.get("config text", "")  # as the load stage read it
    if records.get("all parse inputs", (None, None))[:2] != (ctx.slug_by_path, config_text):
        records["all parse inputs"] = (
            ctx.slug_by_path,
            config_text,
            digest(sorted(ctx.slug_by_path.items()), config_text),
        )
    media = changes.signature("media", _covers_media, lambda: media_signature(root))
    return {
        "all": digest(records["all parse inputs"][2], media),
        "calc": changes.signature(f"calc {name}", under(name), lambda: tree_signature(root / name)),
        "widgets": changes.signature(
            f"widgets {name}",
            under(name, "widgets", theme.COURSE_TEMPLATES),
            lambda: tree_signature(root / name, root / "widgets", *theme.folders(root)),
        ),
    }


def parse_key(source: Source, shared: dict, memo: Memo) -> tuple:
    """Return the key that changes whenever re-parsing `source` could give a different Page."""
    loaded = memo.records.get("sources", {}).get(source.path) is source  # else a source the load stage did not give
    calc, widget = memo.peek("source uses", source.path) if loaded else author_code_uses(source.text)
    uses = (
        [shared["all"]] + [shared["calc"]] * calc + [shared["widgets"]] * widget
    )  # an exercise also carries the theme's worker URL
    return (source.path, source.kind, source.slug, source.text, *uses)  # compared, not hashed: cheaper


def media_signature(root: Path) -> str:
    """Return a hash of every non-Markdown file next to the sources and under media/."""
    files = [
        f
        for folder in ("lessons", "reviews")
        if (root / folder).is_dir()
        for f in sorted((root / folder).rglob("*"))
        if f.suffix != ".md"
    ]
    return tree_signature(*files, root / "media")


def _covers_media(path: str) -> bool:
    """Return whether a changed course path can change media_signature."""
    top, _, rest = path.partition("/")
    return top == "media" or (top in SOURCE_DIRS and not rest.endswith(".md"))


def parse_one(md: CourseParser, source: Source, ctx: ParseContext) -> tuple:
    """Return (Page, problems) for one source, its problems kept apart for the memo."""
    problems = Problems()
    try:
        page = parse_source(md, source, ctx, problems)
    except (Exception, SystemExit, KeyboardInterrupt) as err:  # a course extension's rule may exit, too
        problem = parse_failure(err, source.path, ctx.root)
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
    }
    tokens = md.parse(source.text, env)
    meta = _front_matter(tokens, source.path, problems, ctx.root)
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
        derived={name: analyse(html, source) for name, analyse in md.page_analysers.items()},
    )


def html_sha256(html: str, source=None) -> str:
    """Return the hex SHA-256 of a page's body HTML (a page analyser: see page_digest)."""
    return hashlib.sha256(html.encode()).hexdigest()


def page_digest(page: Page) -> str:
    """Return the SHA-256 of `page.html`: found while parsing, or here for a page made without the parser."""
    return page.derived.get("sha256") or html_sha256(page.html)


def heading_slug(title: str) -> str:
    """Return a heading's anchor: GitHub's slug of its text, or 'section' for text with no letters ('## ???')."""
    return slugify(title) or "section"


ID_ATTR = re.compile(r'\sid="([^"]+)"')


def element_ids(html: str, _source=None) -> frozenset[str]:
    """Return every element id in a rendered page (headings, questions, footnotes, widgets)."""
    return frozenset(ID_ATTR.findall(html))


def _front_matter(tokens, path: str, problems: Problems, root: Path) -> dict:
    """Return validated front matter from the first token (defaults where unusable), recording problems."""
    meta = dict(FRONT_MATTER_DEFAULTS)
    if not tokens or tokens[0].type != "front_matter":
        problems.error(path, 1, "no YAML front matter", "start the file with '---', a 'title:' line and '---'")
        return meta
    try:
        data = load_yaml(tokens[0].content, first_line=2)
    except YamlError as err:
        problems.error(path, err.line, err.message)
        return meta
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
        problems.error(path, line, err.message.replace("malformed YAML", "malformed block attributes"))
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


def highlight_code(code: str, lang: str, _attrs) -> str:
    """Return Pygments-highlighted HTML for a fenced block, or '' to use the plain renderer."""
    if not lang:
        return ""
    lexer = _lexer(lang)
    if lexer is None:
        return ""
    from pygments import highlight

    body = highlight(code, lexer, _formatter())
    return f'<pre class="highlight" tabindex="0"><code class="language-{escapeHtml(lang)}">{body}</code></pre>'


# Pygments and latex2mathml are imported on first use, not with this module: each costs tens of
# milliseconds, which a build on two processes then pays in both at once rather than before it
# splits, and a course without code or math never pays.

# The formatter, lexers and formulas are kept in the build's memo (memoized: a formula or a
# language repeats across pages, and a formatter costs more to make than a short highlight).


def _formatter():
    def make():
        from pygments.formatters import HtmlFormatter

        return HtmlFormatter(nowrap=True)

    return memoized("pygments formatter", None, make)


def _lexer(lang: str):
    """Return the Pygments lexer for a fence language, or None when Pygments has none."""

    def find():
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound

        try:
            return get_lexer_by_name(lang)
        except ClassNotFound:
            return None

    return memoized("lexer", lang, find)


def _latex_to_mathml(latex: str, **options) -> str:
    import latex2mathml.converter

    return latex2mathml.converter.convert(latex, **options)


def render_math(latex: str, options) -> str:
    """Return MathML for a `$…$` or `$$…$$` span (display mode for the latter)."""
    return _mathml(latex, "block" if options.get("display_mode") else "inline")


def render_display_math(self, tokens, idx: int, options, env) -> str:
    """Render a `$$…$$` block as a focusable scroll box: a formula wider than a phone scrolls sideways,
    and a keyboard can reach it to do so (as with highlighted code)."""
    content = render_math(tokens[idx].content.strip(), {"display_mode": True})
    return f'<div class="math block" tabindex="0">\n{content}\n</div>\n'


def _mathml(latex: str, display: str) -> str:
    def convert() -> str:
        try:
            return _latex_to_mathml(latex, display=display)
        except Exception:  # noqa: BLE001 - reported with its line by _check_blocks_and_math
            return f'<code class="math-error">{escapeHtml(latex)}</code>'

    return memoized("mathml", (latex, display), convert)


# ---- core rules: links, misspelled or unclosed blocks, math -------------------------------


def _resolve_links(state) -> None:
    """Rewrite links to other sources (`02-kda.md#fade`) as site URLs and record them."""
    env = state.env
    ctx: ParseContext = env["ctx"]
    base = posixpath.dirname(env["path"])
    for block in state.tokens:
        for token, line in child_lines(block):
            if token.type == "link_open":
                token.attrSet("href", _resolve_href(token.attrGet("href") or "", base, line, env, ctx))
            elif token.type == "image":
                token.attrSet("src", _resolve_image(token.attrGet("src") or "", base, line, env, ctx))


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


def _resolve_href(href: str, base: str, line: int, env: dict, ctx: ParseContext) -> str:
    if _is_external(href):
        return href
    target, _, anchor = href.partition("#")
    if not target:  # an anchor on this page
        env["links"].append(Link(env["source"].slug, anchor, line))
        return href
    path = posixpath.normpath(posixpath.join(base, target))
    slug = ctx.slug_by_path.get(path)
    if slug is None:
        env["problems"].error(
            env["path"],
            line,
            f"broken link '{href}': no source file '{path}'",
            _near_link(path, base, ctx.slug_by_path) or "link to a lesson or review's .md file",
        )
        return href
    env["links"].append(Link(slug, anchor, line))
    return f"{slug}.html" + (f"#{anchor}" if anchor else "")


def _near_link(path: str, base: str, paths) -> str:
    """Return 'did you mean …?' for the source nearest `path`, written as the link must be where it stands:
    relative to the linking source's folder `base` (a root path pasted there would be broken again)."""
    return did_you_mean(posixpath.relpath(path, base or "."), [posixpath.relpath(p, base or ".") for p in paths])


def _resolve_image(src: str, base: str, line: int, env: dict, ctx: ParseContext) -> str:
    if _is_external(src):
        return src
    path = posixpath.normpath(posixpath.join(base, src))
    if inside_course(ctx.root, path) is None:
        env["problems"].error(env["path"], line, f"'{src}' is outside the course", OUTSIDE_HINT)
        return src
    if not (ctx.root / path).is_file():
        env["problems"].error(env["path"], line, f"image '{src}' not found (looked for '{path}')")
        return src
    site_path = "media/" + path.replace("/", "-")
    env["assets"].append((site_path, path))
    return site_path


def _check_blocks_and_math(state) -> None:
    """Report misspelled `:::` blocks, unclosed ones, unclosed HTML comments, and math latex2mathml cannot read."""
    env, lines = state.env, None
    problems, path = env["problems"], env["path"]
    has_math = "$" in state.src  # every math token comes from a '$': most tokens need no look
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
        if has_math and (token.type.startswith("math_block") or token.type == "inline"):
            for item in (token,) if token.type != "inline" else token.children or ():
                if item.type.startswith("math_") and item.content.strip():
                    _check_math(item.content.strip(), line, env)


def _check_math(latex: str, line: int, env: dict) -> None:
    reason = _math_problem(latex)
    if reason:
        env["problems"].error(env["path"], line, f"cannot read math '{latex}': {reason}")


def _math_problem(latex: str) -> str:
    """Return why latex2mathml cannot read `latex`, or '' when it can (memoized: formulas repeat)."""
    return memoized("math problem", latex, lambda: _find_math_problem(latex))


def _find_math_problem(latex: str) -> str:
    try:
        mathml = _latex_to_mathml(latex)
    except Exception as err:  # noqa: BLE001 - any failure is the author's latex
        return str(err) or type(err).__name__.replace("Error", "")
    unknown = re.search(r">(\\[A-Za-z]+)<", mathml)
    return f"unknown command '{unknown.group(1)}'" if unknown else ""
