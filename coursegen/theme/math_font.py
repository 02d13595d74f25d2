"""The math font: Noto Sans Math (OFL-1.1), self-hosted, for MathML on the pages that have formulas.

The font file is a theme asset, `assets/vendor/noto-sans-math.woff2`, copied from the pinned npm package
`@fontsource/noto-sans-math` by `npm run vendor-math-font` (as the editor bundle is by `bundle-editor`);
a course may replace it, file by file, with its own `templates/assets/vendor/noto-sans-math.woff2`.
Its @font-face must name the file's content-hashed URL, so the stylesheet, `math.css`, is generated
here at build time; lesson.html links it (and preloads the font) only when the page holds MathML.
`font-display: optional` keeps the text from moving: a font that is not there in time is used from
the cache on the next page.
"""

from __future__ import annotations

from pathlib import Path

from coursegen.theme import files as theme

FONT = "vendor/noto-sans-math.woff2"  # asset name
STYLESHEET = "math.css"  # asset name of the generated stylesheet
FAMILY = "Noto Sans Math"


def font_file(root: Path) -> Path | None:
    """Return the math font of the course at `root` (its own, or the theme's), or None."""
    return theme.find(root, f"{theme.ASSETS}/{FONT}")


def stylesheet(font_path: str | None) -> str:
    """Return math.css for the font file the site serves (its site path, `assets/…`), or '' when there is none."""
    if font_path is None:
        return ""
    # math.css is itself an asset (assets/math.<hash>.css): the font's URL is relative to assets/.
    url = font_path.removeprefix("assets/")
    return (
        f'@font-face {{ font-family: "{FAMILY}"; src: url("{url}") format("woff2"); font-display: optional; }}\n'
        f'math {{ font-family: "{FAMILY}", math; }}\n' + TEMML_LAYOUT
    )


# The few rules of Temml's own stylesheet (dist/Temml-Local.css, MIT) that its MathML needs in
# Chromium and WebKit: cell alignment in aligned/cases, italic correction of primes, over- and underlines.
TEMML_LAYOUT = """.tml-right { text-align: right; }
.tml-left { text-align: left; }
.tml-sml-pad { padding-left: 0.05em; }
.tml-med-pad { padding-left: 0.10em; }
.tml-lrg-pad { padding-left: 0.15em; }
.tml-overline { padding: 0.1em 0 0 0; border-top: 0.065em solid; }
.tml-underline { padding: 0 0 0.1em 0; border-bottom: 0.065em solid; }
menclose { position: relative; padding: 0.5ex 0ex; }
"""
