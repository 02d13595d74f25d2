"""A command-line rebuild converts and validates again only the notebooks whose text changed: the others' lesson
texts come from .coursegen-cache/notebooks.pickle (signed, like every file there), and the site is a cold build's."""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path

import nbformat
import pytest
from helpers import run_cli
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from coursegen import disk_cache, incremental
from coursegen.cache import CACHE_FOLDER

SHOWN, THIRD = "lessons/02-second.ipynb", "lessons/03-third.ipynb"


def front(title: str = "Second lesson") -> nbformat.NotebookNode:
    return new_raw_cell(f"---\ntitle: {title}\nsummary: From a notebook.\n---")


def as_notebook(course: Path, cells) -> None:
    """Replace the mini course's second lesson by a notebook of these cells, as Jupyter saves it."""
    (course / "lessons" / "02-second.md").unlink(missing_ok=True)
    first = course / "lessons" / "01-first.md"
    first.write_text(first.read_text().replace("02-second.md", "02-second.ipynb"))  # links name the notebook
    notebook = new_notebook(
        metadata={"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    )
    notebook.cells = cells
    (course / SHOWN).write_text(nbformat.writes(notebook), encoding="utf-8")


@pytest.fixture
def converted(monkeypatch) -> list[str]:
    """The notebooks converted from now on (read, validated and made into lesson text), in order."""
    found: list[str] = []
    original = incremental.read_notebook

    def counting(shown, text, problems):
        found.append(shown)
        return original(shown, text, problems)

    monkeypatch.setattr(incremental, "read_notebook", counting)
    return found


@pytest.fixture
def notebooks(mini_course) -> Path:
    """The mini course with its second lesson a notebook and a third one, both with prose and a cell."""
    as_notebook(mini_course, [front(), new_markdown_cell("## Details\n\nProse."), new_code_cell("6 * 7")])
    third = (mini_course / SHOWN).read_text().replace("Second lesson", "Third lesson").replace("6 * 7", "6 * 8")
    (mini_course / THIRD).write_text(third)
    yaml = mini_course / "course.yaml"
    yaml.write_text(yaml.read_text().replace("  - slug: check\n", "  - slug: third\n  - slug: check\n"))
    return mini_course


def build(capsys, course) -> str:
    status, _, err = run_cli(capsys, "--root", course, "build")
    assert status == 0 and "Traceback" not in err, err
    return err


def edit(course: Path, shown: str, old: str, new: str) -> None:
    path = course / shown
    path.write_text(path.read_text().replace(old, new))


def site(course: Path) -> dict[str, bytes]:
    out = course / "site"
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_the_course_has_both_notebooks(notebooks, capsys):
    build(capsys, notebooks)
    assert "6 * 8" in (notebooks / "site" / "third.html").read_text()
    assert (notebooks / CACHE_FOLDER / disk_cache.NOTEBOOKS_FILE).is_file()


def test_a_rebuild_converts_only_the_changed_notebook_and_makes_a_cold_build_s_site(
    notebooks, capsys, converted, tmp_path
):
    build(capsys, notebooks)
    assert sorted(converted) == [SHOWN, THIRD]
    edit(notebooks, THIRD, "6 * 8", "6 * 9")
    build(capsys, notebooks)
    assert converted[2:] == [THIRD]
    build(capsys, notebooks)  # nothing changed: nothing read at all
    edit(notebooks, SHOWN, "Prose.", "Other prose.")
    build(capsys, notebooks)
    assert converted[3:] == [SHOWN]
    assert "Other prose." in (notebooks / "site" / "second.html").read_text()
    cold = tmp_path / "cold"
    shutil.copytree(notebooks, cold, ignore=shutil.ignore_patterns("site", CACHE_FOLDER))
    build(capsys, cold)
    assert {path: data.replace(str(cold).encode(), b"") for path, data in site(cold).items()} == {
        path: data.replace(str(notebooks).encode(), b"") for path, data in site(notebooks).items()
    }


class Planted:
    """What a planted pickle could do: here, make a folder; it could as well run any command."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.mkdir, (str(self.marker),)


def test_a_notebooks_file_not_signed_by_this_user_is_never_used(notebooks, capsys, converted, tmp_path):
    build(capsys, notebooks)
    file = notebooks / CACHE_FOLDER / disk_cache.NOTEBOOKS_FILE
    signed = file.read_bytes()
    file.write_bytes(signed.replace(b"6 * 8", b"6 * 0"))  # a lesson text changed after signing
    edit(notebooks, SHOWN, "Prose.", "Other prose.")
    build(capsys, notebooks)
    assert sorted(converted[2:]) == [SHOWN, THIRD]  # not trusted: both converted again
    assert "6 * 8" in (notebooks / "site" / "third.html").read_text()
    file.write_bytes(pickle.dumps(Planted(tmp_path / "ran")))
    edit(notebooks, SHOWN, "Other prose.", "Prose.")
    build(capsys, notebooks)
    assert not (tmp_path / "ran").exists(), "a planted pickle ran"
    assert sorted(converted[4:]) == [SHOWN, THIRD]


def test_a_notebook_with_a_warning_is_converted_and_warns_on_every_build(notebooks, capsys, converted):
    as_notebook(
        notebooks,
        [front(), new_markdown_cell("## Details\n\nProse."), new_raw_cell("Skipped."), new_code_cell("6 * 7")],
    )
    assert "cell 3: warning: raw cell skipped" in build(capsys, notebooks)
    edit(notebooks, THIRD, "6 * 8", "6 * 9")
    assert "cell 3: warning: raw cell skipped" in build(capsys, notebooks)
    assert converted.count(SHOWN) == 2 and converted.count(THIRD) == 2
