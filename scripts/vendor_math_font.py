"""Vendor the math font: Noto Sans Math from the pinned npm package @fontsource/noto-sans-math, into
templates/assets/vendor/noto-sans-math.woff2, with its licence (SIL OFL 1.1) beside it.

Run after `npm ci`, with the project's Python (fontTools):  .venv/bin/python scripts/vendor_math_font.py
(`npm run vendor-math-font` runs the same).

The glyphs are the package's, re-encoded as WOFF2 without the glyf/loca transform. Every build with
a formula cuts this font to the formulas' characters (coursegen/features/math/font_subset.py), and
undoing the transform means rebuilding all 4,000 glyphs: 0.9 s of a cold build, where reading the
untransformed file takes a few milliseconds. Pages never fetch this whole file (only the cut), so
its 16 % more bytes cost learners nothing.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "node_modules" / "@fontsource" / "noto-sans-math"
VENDOR = ROOT / "templates" / "assets" / "vendor"


def untransformed(woff2_bytes: bytes) -> bytes:
    """Return the WOFF2 font re-encoded with no table transformed (same tables, same glyphs)."""
    from fontTools.ttLib import TTFont
    from fontTools.ttLib.woff2 import WOFF2FlavorData

    font = TTFont(io.BytesIO(woff2_bytes), recalcBBoxes=False, recalcTimestamp=False)
    font.flavorData = WOFF2FlavorData(data=font.flavorData, transformedTables=set())
    out = io.BytesIO()
    font.save(out, reorderTables=False)
    return out.getvalue()


def main() -> int:
    try:
        import fontTools  # noqa: F401
    except ImportError:
        print("vendor_math_font: fontTools is missing; run it with the project's .venv/bin/python", file=sys.stderr)
        return 1
    meta = json.loads((PACKAGE / "package.json").read_text(encoding="utf-8"))
    source = (PACKAGE / "files" / "noto-sans-math-latin-400-normal.woff2").read_bytes()
    (VENDOR / "noto-sans-math.woff2").write_bytes(untransformed(source))
    licence = (PACKAGE / "LICENSE").read_text(encoding="utf-8").strip()
    (VENDOR / "noto-sans-math.LICENSE.txt").write_text(
        f"templates/assets/vendor/noto-sans-math.woff2 is Noto Sans Math from @fontsource/noto-sans-math"
        f" {meta['version']} ({meta['license']}), re-encoded without the glyf/loca transform by"
        f" scripts/vendor_math_font.py:\n\n{licence}\n",
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
