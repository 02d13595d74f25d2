"""course.yaml's `theme:` settings: the accent colour, the course's own stylesheets and scripts, a logo, a favicon.

The accent goes into a small generated stylesheet, `theme.css`, linked after the theme's own, that
sets `--accent` for the light scheme and for the dark one (the dark accent defaults to the light one
mixed with white, so links stay readable on a dark page). Files named under `extra_css`, `extra_js`,
`logo` and `favicon` are course files copied as content-hashed assets; every one is linked from the
site itself, so the Content-Security-Policy (`'self'`) allows them as it is.

An extension like any other: `add_files` adds those files, `page_context` gives base.html their names.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from coursegen.stages.config import CONFIG_NAME, config_line
from coursegen.theme import math_font

GENERATED = "theme.css"
COURSE_ASSETS = "course/"  # asset names of course files: course/<path in the course>
DEFAULT_FAVICON = "favicon.svg"  # the theme's


def accent_css(theme: dict) -> str:
    """Return the stylesheet that sets the accent in both colour schemes, or '' without an accent."""
    light = theme.get("accent")
    if not light:
        return ""
    dark = theme.get("accent_dark") or f"color-mix(in srgb, {light} 55%, white)"
    return (
        f":root {{ --accent: {light}; }}\n"
        f"@media (prefers-color-scheme: dark) {{\n  :root:not([data-theme=light]) {{ --accent: {dark}; }}\n}}\n"
        f":root[data-theme=dark] {{ --accent: {dark}; }}\n"
    )


def course_asset(path: str) -> str:
    """Return the asset name of a course file named in course.yaml."""
    return COURSE_ASSETS + Path(path).as_posix().lstrip("/")


def page_context(config) -> dict:
    """Return what base.html needs: stylesheets and scripts to link, the logo and the favicon."""
    theme = config.theme
    styles = ([GENERATED] if theme.get("accent") else []) + [course_asset(p) for p in theme.get("extra_css", [])]
    favicon = theme.get("favicon")
    return {
        "theme_styles": styles,
        "theme_scripts": [course_asset(p) for p in theme.get("extra_js", [])],
        "math_font": {"stylesheet": math_font.STYLESHEET, "font": math_font.FONT},
        "logo": course_asset(theme["logo"]) if theme.get("logo") else "",
        "favicon": {
            "name": course_asset(favicon) if favicon else DEFAULT_FAVICON,
            "type": (mimetypes.guess_type(favicon)[0] or "image/x-icon") if favicon else "image/svg+xml",
        },
    }


def add_files(course, root: Path, assets, problems) -> None:
    """Add theme.css and each course file the theme settings name (a missing one is a problem at its key);
    math.css is the math feature's (features/math/extension.py)."""
    theme = course.config.theme if course else {}
    css = accent_css(theme)
    if css:
        assets.add(GENERATED, css.encode())
    named = [(key, path) for key in ("extra_css", "extra_js") for path in theme.get(key, [])]
    named += [(key, theme[key]) for key in ("logo", "favicon") if theme.get(key)]
    for key, path in named:
        file = root / path
        if not file.is_file() or not file.resolve().is_relative_to(root.resolve()):
            problems.error(
                CONFIG_NAME,
                config_line(root, f"{key}:", indented=True),
                f"theme {key} names '{path}', which is not a file in the course",
                "give a path relative to the course folder, e.g. css/extra.css",
            )
            continue
        assets.add(course_asset(path), file.read_bytes())
