"""Opening a page of a served site the way the browser tests look at it: once the network is idle."""

from __future__ import annotations


def open_page(context, base: str, name: str):
    """Open `base + name` in a new page of `context`; return it once nothing more is loading."""
    page = context.new_page()
    page.goto(base + name)
    page.wait_for_load_state("networkidle")
    return page
