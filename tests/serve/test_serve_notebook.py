"""`serve` watches notebook lessons: a saved cell is rebuilt and served, a broken one is placed by cell."""

from __future__ import annotations

import urllib.request

from nbformat.v4 import new_markdown_cell, new_raw_cell
from test_serve import EventReader

from coursegen.pipeline import BuildOptions
from coursegen.serve.server import LiveServer


def test_a_saved_notebook_is_rebuilt_and_a_broken_cell_is_placed_in_the_overlay(mini_course):
    from stages.test_notebook import as_notebook  # the notebook fixtures, Jupyter's own format

    front = new_raw_cell("---\ntitle: Second lesson\n---")
    notebook = as_notebook(mini_course, [front, new_markdown_cell("## Details\n\nFirst words.")])
    server = LiveServer(mini_course, BuildOptions(), port=0, log=lambda text: None).start()
    events = EventReader(server.url)
    try:
        first = events.next()
        assert first["type"] == "built" and "second.html" in first["changed"]
        as_notebook(mini_course, [front, new_markdown_cell("## Details\n\nWords saved from Jupyter.")])
        edited = events.next_after(first["serial"])
        assert edited["type"] == "built" and "second.html" in edited["changed"]
        page = urllib.request.urlopen(server.url + "second.html", timeout=600).read().decode()
        assert "Words saved from Jupyter." in page
        as_notebook(mini_course, [front, new_markdown_cell("## Details\n\n::: cavaet\nOops.\n:::")])
        broken = events.next_after(edited["serial"])
        while broken["type"] != "error":  # the search index's own rebuild may come first
            broken = events.next_after(broken["serial"])
        assert broken["problems"][0].startswith(f"{notebook.relative_to(mini_course)}: cell 2, line 3: unknown block")
    finally:
        events.close()
        server.stop()
