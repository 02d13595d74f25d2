"""The notebooks benchmark's generated course is one coursegen builds, and Jupyter Book's project holds the same."""

from __future__ import annotations

import json

from helpers import REPO, run_cli


def test_the_generated_notebooks_build_with_their_cells_run_and_a_figure_each(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))  # for this test only: it has a kernels.py too
    from generated_course import copy_engine_parts
    from notebooks import edit_one_cell, jupyter_book_project, notebook_course, notebook_file, page_weight

    root = notebook_course(tmp_path / "course", count=2, cells=2)
    copy_engine_parts(REPO, root)
    status, _, err = run_cli(capsys, "--root", root, "build")
    assert status == 0, err
    page = (root / "site" / "notebook-2.html").read_text()
    assert page.count("<svg") - page.count("<svg", 0, page.find("<main")) >= 1  # the figure, baked in the page
    assert "Notebook 2" in page and "(200,)" in page  # the first cell's value: x.shape
    raw, zipped, files = page_weight(root / "site", "notebook-2.html")
    assert raw > zipped > 0 and files >= 2  # the page and at least one of its own CSS or scripts

    edit_one_cell(root / "lessons" / notebook_file(2), 7)
    assert "np.exp(-8.5" in (root / "lessons" / notebook_file(2)).read_text()

    book = jupyter_book_project(tmp_path / "book", count=2, cells=2)
    assert "execute_notebooks: force" in (book / "_config.yml").read_text()
    assert "file: 02-notebook-2" in (book / "_toc.yml").read_text()
    ours = json.loads((root / "lessons" / notebook_file(1)).read_text())
    assert json.loads((book / notebook_file(1)).read_text())["cells"] == ours["cells"]
