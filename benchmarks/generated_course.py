"""A generated course of N lessons for benchmarks: real-lesson length, every common block.

Each lesson has a lede, four sections with sub-sections, a table, bullet and numbered lists,
an ASCII diagram, a code block, inline math, footnotes and a link to the previous lesson.
The prose is drawn from a small word list with a fixed seed, so the course is the same
on every run. The same Markdown is given to MkDocs (without the front matter's extra keys).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

WORDS = [
    "state",
    "matrix",
    "token",
    "decay",
    "gate",
    "chunk",
    "tile",
    "memory",
    "cache",
    "layer",
    "head",
    "expert",
    "router",
    "weight",
    "query",
    "key",
    "value",
    "update",
    "signal",
    "sequence",
    "length",
    "budget",
    "channel",
    "rank",
    "bound",
    "floor",
    "ceiling",
    "precision",
    "scale",
    "error",
    "sum",
    "product",
    "step",
    "window",
    "block",
    "path",
    "cost",
    "model",
    "reader",
    "lesson",
]
DIAGRAM = """\
 input ──▶ [ gate ] ──▶ [ fade ] ──▶ [ write ] ──▶ output
              │             ▲
              └─────────────┘
"""


def sentence(rng: random.Random, words: int = 14) -> str:
    """Return one made-up sentence of about `words` words."""
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(words - 4, words + 4)))
    return text[0].upper() + text[1:] + "."


def paragraph(rng: random.Random, sentences: int = 4) -> str:
    """Return a paragraph of made-up sentences."""
    return " ".join(sentence(rng) for _ in range(sentences))


def section(rng: random.Random, number: int, index: int) -> list[str]:
    """Return the lines of one section: prose, a sub-section, a table or list or diagram."""
    lines = [
        f"## Section {index} of lesson {number}",
        "",
        paragraph(rng),
        "",
        f"Inline math such as $x_{index} = e^{{-{index}t}}$ sits in the prose.[^n{index}]",
        "",
        f"### Detail {index}.1",
        "",
        paragraph(rng, 5),
        "",
    ]
    if index % 2:
        lines += ["| quantity | value | note |", "|---|---:|---|"]
        lines += [f"| {rng.choice(WORDS)} | {rng.randint(1, 9999)} | {sentence(rng, 6)} |" for _ in range(6)]
        lines += ["", *(f"- {sentence(rng, 9)}" for _ in range(4)), ""]
    else:
        lines += [
            "```text",
            DIAGRAM.rstrip("\n"),
            "```",
            "",
            *(f"{n}. {sentence(rng, 8)}" for n in range(1, 5)),
            "",
            "```python",
            f"def step_{index}(state, token):",
            "    return state * 0.5 + token",
            "```",
            "",
        ]
    lines += [f"### Detail {index}.2", "", paragraph(rng, 3), ""]
    return lines


def lesson(number: int, seed: int = 0) -> str:
    """Return the Markdown body (no front matter) of generated lesson `number`."""
    rng = random.Random(seed * 100_003 + number)
    lines = [paragraph(rng, 3), ""]
    if number > 1:
        lines += [f"This builds on [the previous lesson]({number - 1:03d}-lesson-{number - 1}.md).", ""]
    for index in range(1, 5):
        lines += section(rng, number, index)
    lines += [f"[^n{index}]: {sentence(rng, 8)}" for index in range(1, 5)]
    return "\n".join(lines) + "\n"


def lesson_file(number: int) -> str:
    """Return the file name of generated lesson `number` (the same for every generator)."""
    return f"{number:03d}-lesson-{number}.md"


def write_course(root: Path, count: int = 200, seed: int = 0) -> Path:
    """Write a coursegen course of `count` lessons at `root` (templates etc. copied from `repo`)."""
    (root / "lessons").mkdir(parents=True, exist_ok=True)
    units = []
    for number in range(1, count + 1):
        name = lesson_file(number)
        front = f'---\ntitle: "Lesson {number}"\nsummary: "Generated lesson number {number}."\n---\n\n'
        (root / "lessons" / name).write_text(front + lesson(number, seed))
        units.append(f"  - slug: lesson-{number}\n    part: Part {1 + (number - 1) // 20}\n")
    (root / "course.yaml").write_text(
        "title: Generated course\ndescription: Benchmark input.\nunits:\n" + "".join(units)
    )
    return root


def copy_engine_parts(repo: Path, root: Path) -> None:
    """Copy the repository's templates, widgets and kernels next to the generated lessons."""
    for part in ("templates", "widgets", "kernels"):
        if (repo / part).is_dir():
            shutil.copytree(repo / part, root / part, dirs_exist_ok=True)
    for extra in ("package.json", "node_modules"):  # where the pinned Pyodide lives
        if (repo / extra).exists() and not (root / extra).exists():
            (root / extra).symlink_to((repo / extra).resolve())


def write_mkdocs_project(root: Path, count: int = 200, seed: int = 0, highlight: bool = True) -> Path:
    """Write the same lessons as an MkDocs project: the default theme, with footnotes and tables on and
    code highlighted by Pygments at build time (codehilite), as coursegen does. Out of the box MkDocs
    leaves footnotes as text and code to highlight.js in the browser; `highlight=False` does the latter."""
    docs = root / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    nav = []
    for number in range(1, count + 1):
        name = lesson_file(number)
        (docs / name).write_text(f"# Lesson {number}\n\n" + lesson(number, seed))
        nav.append(f"  - 'Lesson {number}': {name}\n")
    (docs / "index.md").write_text("# Generated course\n\nBenchmark input.\n")
    (root / "mkdocs.yml").write_text(
        "site_name: Generated course\ntheme:\n  name: mkdocs\n"
        "markdown_extensions:\n  - footnotes\n  - tables\n"
        + ("  - codehilite\n" if highlight else "")
        + "nav:\n  - 'Home': index.md\n"
        + "".join(nav)
    )
    return root


HUGO_LAYOUT = """\
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ .Title }} · {{ .Site.Title }}</title></head>
<body>
<nav><ul>{{ range .Site.RegularPages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a></li>{{ end }}</ul></nav>
<main><h1>{{ .Title }}</h1>{{ .TableOfContents }}{{ .Content }}</main>
{{ with .PrevInSection }}<a href="{{ .RelPermalink }}">{{ .Title }}</a>{{ end }}
{{ with .NextInSection }}<a href="{{ .RelPermalink }}">{{ .Title }}</a>{{ end }}
</body></html>
"""


def write_hugo_project(root: Path, count: int = 200, seed: int = 0) -> Path:
    """Write the same lessons as a Hugo project whose one layout lists every page on every page (as
    MkDocs' navigation and coursegen's course map do), with a table of contents and prev/next links;
    Hugo highlights code at build time (Chroma) and renders footnotes and tables by default."""
    content = root / "content"
    content.mkdir(parents=True, exist_ok=True)
    for number in range(1, count + 1):
        front = f'---\ntitle: "Lesson {number}"\nweight: {number}\n---\n\n'
        (content / lesson_file(number)).write_text(front + lesson(number, seed))
    layouts = root / "layouts"
    layouts.mkdir(exist_ok=True)
    for name in ("single.html", "list.html", "home.html"):
        (layouts / name).write_text(HUGO_LAYOUT)
    (root / "hugo.toml").write_text(
        'baseURL = "https://example.org/"\ntitle = "Generated course"\n'
        'disableKinds = ["taxonomy", "term", "RSS", "sitemap", "robotsTXT"]\n'
    )
    return root
