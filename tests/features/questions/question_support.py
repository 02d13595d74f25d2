"""Parse Markdown with the question blocks installed, outside a whole build."""

from __future__ import annotations

from pathlib import Path

from coursegen.errors import Problems
from coursegen.extensions import ModuleExtension
from coursegen.features import callouts as blocks
from coursegen.features.math import extension as math
from coursegen.features.questions import extension as questions
from coursegen.model import Source
from coursegen.stages.parse import ParseContext, make_markdown

MD = make_markdown((blocks, ModuleExtension(math, "math"), questions))  # math: questions may hold formulas
SLUGS = {"lessons/01-yeast.md": "yeast", "lessons/02-gluten.md": "gluten", "reviews/03-check.md": "check"}
NUMBERS = {"yeast": 1, "gluten": 2, "check": 3}


def render(text: str, path: str = "reviews/03-check.md") -> tuple[str, dict]:
    """Return the HTML of `text` parsed as the source at `path`, and the parse env (questions, problems…)."""
    slug = SLUGS[path]
    kind = "review" if path.startswith("reviews/") else "lesson"
    ctx = ParseContext(root=Path("."), slug_by_path=SLUGS, extra={"questions": {"numbers": NUMBERS}})
    env = {
        "path": path,
        "problems": Problems(),
        "ctx": ctx,
        "source": Source(path, text, kind, slug),
        "links": [],
        "assets": [],
        "widgets": [],
        "questions": [],
    }
    return MD.render(text, env), env
