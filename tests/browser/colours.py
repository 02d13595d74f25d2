"""Colour contrast as WCAG measures it, and the colours text is drawn in, read from a page's computed styles."""

from __future__ import annotations

# For each text node under the element(s) `root` finds (shadow roots included): its text, its colour and the
# colour behind it (the first ancestor whose background is not transparent), as [r, g, b].
TEXT_COLOURS = """roots => {
    const rgb = (colour) => colour.match(/[\\d.]+/g).map(Number);
    const up = (el) => el.parentElement ?? el.getRootNode().host ?? null;
    const behind = (el) => {
        for (let e = el; e; e = up(e)) {
            const c = rgb(getComputedStyle(e).backgroundColor);
            if (c.length < 4 || c[3] > 0) return c.slice(0, 3);
        }
        return [255, 255, 255];
    };
    const found = [];
    for (const root of roots) {
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            if (!node.textContent.trim()) continue;
            const el = node.parentElement;
            found.push([node.textContent.trim().slice(0, 30), rgb(getComputedStyle(el).color).slice(0, 3), behind(el)]);
        }
    }
    return found;
}"""


def luminance(rgb) -> float:
    """Return WCAG relative luminance of an (r, g, b) colour in 0-255."""

    def channel(c):
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    """Return the WCAG contrast ratio of two colours."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def unreadable(text_colours, minimum: float = 4.5) -> list[str]:
    """Return the texts of TEXT_COLOURS's answer drawn below `minimum` contrast, each with its ratio."""
    return [f"{text!r}: {contrast(fg, bg):.2f}" for text, fg, bg in text_colours if contrast(fg, bg) < minimum]
