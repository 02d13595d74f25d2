"""Citations: `` {cite}`key` ``, `` {cite:p}`a,b` `` and `` {cite:t}`key` `` (MyST's roles) over course.yaml's
`bibliography:`, and a References section the build appends to each page that cites.

`prepare` reads the .bib files once per build (through the load stage's reader, so `serve` reads a
saved .bib again); each role links every key it names to its entry in the page's References, which
lists only the works that page cites: in order of first citation when numbered, by author, year
and title in author-year style. Each citation has an id of its own (`cite-<key>-<n>`, the key's n-th on the
page), and each entry links back to every citation of it, as footnotes do. The preview beside each citation is
plain HTML shown by CSS on hover and keyboard focus; without CSS or JavaScript the link still leads to the reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token
from mdurl import encode as url_encode

from coursegen.errors import Problems, did_you_mean
from coursegen.features.citations import style
from coursegen.features.citations.bibliography import EMPTY, Bibliography, read_bibliography
from coursegen.incremental import kept_reader
from coursegen.stages.roles import register_role
from coursegen.theme.messages import say, texts

ROLES = {"cite": False, "cite:p": False, "cite:t": True}  # role → textual ("Raschka (n.d.)")
SECTION_ID = "references"
SESSION_HOOKS = ("prepare",)  # prepare also takes the build's session (extensions.ModuleExtension)


@dataclass(frozen=True)
class Citations:
    """What parsing needs: the works, the course's style, and what a page's parse key must hold of them."""

    bibliography: Bibliography
    style: str
    bibliography_line: int = 0  # of `bibliography:` in course.yaml; 0 when there is none

    @property
    def parse_inputs(self) -> str:
        """Return what every page's parse key holds of the citations (the .bib texts and the style)."""
        return f"{self.bibliography.digest} {self.style}"


def install(md) -> None:
    """Register the three roles and the rule that appends a page's References."""
    for name, textual in ROLES.items():
        register_role(md, name, _role(name, textual))
    md.core.ruler.after("course_roles", "citations_references", references_rule)


def prepare(root: Path, config, problems: Problems, session=None) -> Citations:
    """Return the course's works (read from its .bib files, each problem located) and its citation style."""
    if config is None or not config.bibliography:
        return Citations(EMPTY, getattr(config, "citations", "author-year") or "author-year")
    read = kept_reader(session.memo, session.changes) if session is not None else None
    if read is None:
        from coursegen.stages.config import read_text as read
    works = read_bibliography(root, config.bibliography, read, problems, session.memo if session else None)
    return Citations(works, config.citations, config.bibliography[0][1])


def _role(name: str, textual: bool):
    """Return the handler of one cite role: its keys' links, in the page's order of first citation."""

    def handler(token, env: dict, line: int) -> str:
        ctx = env.get("ctx")
        found: Citations | None = ctx.extra.get("citations") if ctx is not None else None
        keys = [key.strip() for key in token.content.split(",")]
        col = token.meta.get("col", 0)
        if found is None or not found.bibliography_line:
            env["problems"].error(
                env["path"],
                line,
                f"{{{name}}}`{token.content}` cites, but the course has no bibliography",
                "list a .bib file in course.yaml: bibliography: [references.bib]",
                col=col,
            )
            return f"<code>{escapeHtml(token.content)}</code>"
        if not all(keys):
            env["problems"].error(
                env["path"],
                line,
                f"{{{name}}}`{token.content}` has an empty key",
                "name one key, or several separated by commas: {cite:p}`smith2020,doe2021`",
                col=col,
            )
            keys = [key for key in keys if key]
        messages = texts(env)
        links = [_link(key, found, env, line, col, textual, messages) for key in keys]
        return style.group(links, found.style, textual) if links else f"<code>{escapeHtml(token.content)}</code>"

    return handler


def _link(key: str, found: Citations, env: dict, line: int, col: int, textual: bool, messages) -> str:
    """Return the link to one cited work (with its hidden preview), noting it as cited by the page."""
    work = found.bibliography.works.get(key)
    if work is None and found.bibliography.failed:  # a .bib that could not be read is the one problem shown
        return f"<code>{escapeHtml(key)}</code>"
    if work is None:
        near = did_you_mean(key, found.bibliography.works)
        files = ", ".join(found.bibliography.files) or "the bibliography"
        env["problems"].error(
            env["path"], line, f"unknown citation key '{key}'", near or f"the keys are those of {files}", col=col
        )
        return f"<code>{escapeHtml(key)}</code>"
    env.setdefault("first_citation_line", line)
    cited: dict[str, int] = env.setdefault("cited", {})
    number = cited.setdefault(key, len(cited) + 1)
    uses: dict[str, int] = env.setdefault("citation_uses", {})  # the References link back to each use
    uses[key] = uses.get(key, 0) + 1
    text = escapeHtml(style.link_text(work, number, found.style, messages, textual))
    target = reference_id(key)
    preview = style.reference_html(work, found.style, messages, linked=False)
    return (
        f'<span class="cite"><a href="#{url_encode(target)}" aria-describedby="{escapeHtml(target)}"'
        f' id="{escapeHtml(citation_id(key, uses[key]))}">{text}</a>'
        f'<span class="cite-preview" aria-hidden="true">{preview}</span></span>'
    )


def reference_id(key: str) -> str:
    """Return the element id of a work's entry in the References (prefixed: keys never clash with headings)."""
    return "bib-" + key


def citation_id(key: str, use: int) -> str:
    """Return the element id of the `use`-th (1-based) citation of a work on its page, which its entry links back to."""
    return f"cite-{key}-{use}"


def back_links(key: str, uses: int, messages: dict[str, str]) -> str:
    """Return the links from a work's entry back to each of its citations: "↩" for one, "↩ a b c" for several
    (footnote-style, as pandoc and Jupyter Book do), each named in the course's language."""
    arrow = "\u21a9\ufe0e"  # the text-style variation: not drawn as an emoji on phones
    if uses == 1:
        label = escapeHtml(say(messages, "citations.back"))
        return f' <a class="cite-back" href="#{url_encode(citation_id(key, 1))}" aria-label="{label}">{arrow}</a>'
    letters = []
    for use in range(1, uses + 1):
        letter = use_letter(use)
        label = escapeHtml(say(messages, "citations.back_to", use=letter))
        href = url_encode(citation_id(key, use))
        letters.append(f'<a class="cite-back" href="#{href}" aria-label="{label}">{letter}</a>')
    return f' <span class="cite-backs"><span aria-hidden="true">{arrow}</span> {" ".join(letters)}</span>'


def use_letter(use: int) -> str:
    """Return the letters that name the `use`-th citation of a work: a … z, then aa, ab, … (as spreadsheets count)."""
    letters = ""
    while use:
        use, rest = divmod(use - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


def references_rule(state) -> None:
    """Append the References section, listing the works the page cited, when it cited any: a real h2, so the
    page's contents and other pages' links (`#references`) reach it. A Jupyter Book page's ```` ```{bibliography}
    ```` fence says where the list goes instead, under the heading just above it when there is one."""
    spot = _take_bibliography_fences(state)
    cited: dict[str, int] = state.env.get("cited") or {}
    if not cited:
        return
    found: Citations = state.env["ctx"].extra["citations"]
    messages = texts(state.env)
    above = _heading_above(state.tokens, spot) if spot is not None else None
    _check_heading_free(state, above)
    works = [found.bibliography.works[key] for key in cited]
    numbered = found.style == "numbered"
    works.sort(key=(lambda w: cited[w.key]) if numbered else (lambda w: style.sort_key(w, messages)))
    tag = "ol" if numbered else "ul"
    uses: dict[str, int] = state.env["citation_uses"]
    items = "".join(
        f'<li id="{escapeHtml(reference_id(w.key))}">{style.reference_html(w, found.style, messages)}'
        f"{back_links(w.key, uses[w.key], messages)}</li>\n"
        for w in works
    )
    closing = _html(f'<{tag} class="references-list">\n{items}</{tag}>\n</section>\n')
    if above is not None:  # the author's own heading (its id kept) labels the section
        heading_id = state.tokens[above].attrGet("id") or SECTION_ID
        state.tokens[spot:spot] = [closing]
        state.tokens[above:above] = [_html(f'<section class="references" aria-labelledby="{heading_id}">\n')]
        return
    # The heading's line (for its problems) is the first citation's: the page's end would move with every line
    # added, and with it the page's headings, which pages linking to this one are rendered again for.
    line = state.env["first_citation_line"] - 1
    title = say(messages, "citations.references")
    section = [_html(f'<section class="references" aria-labelledby="{SECTION_ID}">\n'), *_heading(title, line), closing]
    if spot is None:
        state.tokens += section
    else:
        state.tokens[spot:spot] = section


def _take_bibliography_fences(state) -> int | None:
    """Remove the page's ```` ```{bibliography} ```` fences (MyST's place for the References; their options are
    sphinxcontrib-bibtex's, which coursegen does not read) and return where the first stood."""
    spot = None
    for index in range(len(state.tokens) - 1, -1, -1):
        token = state.tokens[index]
        if token.type != "fence" or token.info.split(maxsplit=1)[:1] != ["{bibliography}"]:
            continue
        if token.content.strip():
            state.env["problems"].warning(
                state.env["path"],
                token.map[0] + 1 if token.map else 1,
                "the options of '{bibliography}' are not read",
                "the References list the works this page cites, in the style course.yaml's `citations:` sets",
            )
        del state.tokens[index]
        spot = index
    return spot


def _heading_above(tokens: list[Token], spot: int) -> int | None:
    """Return the index of the heading that ends just before `spot` (its open token), or None."""
    if spot >= 3 and tokens[spot - 1].type == "heading_close" and tokens[spot - 3].type == "heading_open":
        return spot - 3
    return None


def _html(content: str) -> Token:
    token = Token("html_block", "", 0)
    token.content = content
    return token


def _heading(title: str, line: int) -> list[Token]:
    """Return the tokens of the section's h2, as the parser and the anchors plugin make a heading's."""
    opening = Token("heading_open", "h2", 1, attrs={"id": SECTION_ID}, map=[line, line + 1], markup="##", block=True)
    text = Token("text", "", 0, content=title)
    inline = Token("inline", "", 0, content=title, children=[text], map=[line, line + 1], block=True)
    return [opening, inline, Token("heading_close", "h2", -1, markup="##", block=True)]


def _check_heading_free(state, above: int | None) -> None:
    """Report a heading of the page's own whose id the References section needs (but the one above its fence)."""
    for index, token in enumerate(state.tokens):
        if token.type == "heading_open" and token.attrGet("id") == SECTION_ID and index != above:
            state.env["problems"].error(
                state.env["path"],
                token.map[0] + 1 if token.map else 1,
                f"the heading's anchor '#{SECTION_ID}' is the one of the References section the citations add",
                "rename the heading (e.g. 'Notes'): the build lists the works cited under their own References",
            )
