"""A PDF made without the print dialog (Playwright's page.pdf with its defaults: no margins at all) still has
margins: the print stylesheet's @page rule keeps the ink off each edge of every sheet."""

from __future__ import annotations

import numpy
import pypdfium2
import pytest
from pages import open_page
from printed_pdf import INK, MARGIN_PT, PAPERS


def ink_margins(pdf: bytes) -> list[tuple[float, float, float, float]]:
    """Return, per printed page that has ink, the blank points between its ink and each edge: top, right, bottom,
    left (rendered at 72 dpi, one pixel a point)."""
    margins = []
    for page in pypdfium2.PdfDocument(pdf):
        pixels = page.render(scale=1, grayscale=True).to_numpy()
        pixels = pixels[..., 0] if pixels.ndim == 3 else pixels
        rows, cols = numpy.flatnonzero((pixels < INK).any(axis=1)), numpy.flatnonzero((pixels < INK).any(axis=0))
        if rows.size:
            height, width = pixels.shape
            margins.append((rows[0], width - 1 - cols[-1], height - 1 - rows[-1], cols[0]))
    return margins


@pytest.mark.parametrize("paper", PAPERS)
def test_a_pdf_made_with_chromium_s_defaults_keeps_the_stylesheet_s_margins(sample_site, context_factory, paper):
    page = open_page(context_factory(), sample_site, "sequence-axis.html")
    margins = ink_margins(page.pdf(format=paper))
    assert len(margins) > 3
    least = min(min(sides) for sides in margins)
    assert least >= MARGIN_PT - 1, f"ink {least} pt from a sheet's edge"
