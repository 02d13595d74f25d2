"""Printed pages measured from the PDF Chromium makes: how far down each page the ink reaches (pages rendered by
pypdfium2, since charts and diagrams are drawn, not text) and which page holds a piece of text."""

from __future__ import annotations

import bisect
import re

import numpy
import pypdfium2

PAPERS = ("A4", "Letter")
MARGIN = "1cm"  # Chromium's print dialog's ("Default"), and the print stylesheet's @page margin, which wins
MARGIN_PT = 72 / 2.54
# A grey darker than this (0 black, 255 white) is ink: text, bars, table rules. Rendered at 72 dpi, a box's hairline
# border (#999, 0.75 pt) stays lighter, so a widget box running empty to the foot of a page counts as blank there.
INK = 200


def print_pdf(page, paper: str) -> bytes:
    """Return the page printed by Chromium on `paper` with the print dialog's usual margins."""
    return page.pdf(format=paper, margin={side: MARGIN for side in ("top", "right", "bottom", "left")})


def ink_depths(pdf: bytes) -> list[float]:
    """Return, per page, the fraction of its printable height that lies above its lowest inked row (0: blank)."""
    document = pypdfium2.PdfDocument(pdf)
    depths = []
    for page in document:
        height = page.get_height()
        pixels = page.render(scale=1, grayscale=True).to_numpy()
        if pixels.ndim == 3:
            pixels = pixels[..., 0]
        inked = numpy.flatnonzero((pixels < INK).any(axis=1))
        lowest = inked[-1] + 1 if inked.size else MARGIN_PT
        depths.append(round(float((lowest - MARGIN_PT) / (height - 2 * MARGIN_PT)), 2))
    return depths


def mostly_blank(depths: list[float], least: float) -> list[int]:
    """Return the 1-based numbers of the pages whose ink stops above `least` of the page (the last may end
    anywhere, but not be blank)."""
    low = [n for n, depth in enumerate(depths[:-1], 1) if depth < least]
    return low + ([len(depths)] if depths and depths[-1] <= 0 else [])


class PrintedText:
    """The text of a PDF without whitespace (lines break anywhere on paper), with where each page starts."""

    def __init__(self, pdf: bytes):
        document = pypdfium2.PdfDocument(pdf)
        pages = [flat(page.get_textpage().get_text_bounded()) for page in document]
        self.starts = [sum(len(p) for p in pages[:n]) for n in range(len(pages))]
        self.text = "".join(pages)

    def find(self, snippet: str, after: int = 0) -> int:
        """Return where `snippet` (whitespace ignored) first occurs at or after `after`; -1 when it does not."""
        return self.text.find(flat(snippet), after)

    def page_at(self, offset: int) -> int:
        """Return the 1-based number of the page holding the character at `offset`."""
        return bisect.bisect_right(self.starts, offset)


def flat(text: str) -> str:
    """Return `text` lower-cased without whitespace: what paper keeps of it whatever the line breaks."""
    return re.sub(r"\s+", "", text).lower()
