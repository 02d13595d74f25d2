"""Compiled templates kept in .coursegen-cache/ between commands: reused, refreshed, never in the way."""

from __future__ import annotations

import jinja2
import pytest
from helpers import run_cli
from jinja2.bccache import bc_magic

from coursegen.cache import CACHE_FOLDER
from coursegen.stages.render import CompiledTemplates


def site_bytes(root) -> dict[str, bytes]:
    site = root / "site"
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.fixture
def compiles(monkeypatch) -> list[str]:
    """The names of the templates Jinja compiles from source from now on."""
    names: list[str] = []
    original = jinja2.Environment.compile

    def counting(self, source, name=None, filename=None, raw=False, defer_init=False):
        names.append(name)
        return original(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    return names


def test_a_build_keeps_its_compiled_templates_and_the_next_build_loads_them(mini_course, capsys, compiles):
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    assert "lesson.html" in compiles
    assert list((mini_course / CACHE_FOLDER / "templates").glob("*.cache"))
    first = site_bytes(mini_course)
    compiles.clear()
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    assert compiles == []
    assert site_bytes(mini_course) == first


def test_an_edited_template_is_compiled_again(mini_course, capsys, compiles):
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    lesson = mini_course / "templates" / "lesson.html"
    lesson.write_text(lesson.read_text().replace("{% block content %}", "{% block content %}<p>edited template</p>", 1))
    compiles.clear()
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    assert compiles == ["lesson.html"]
    assert b"<p>edited template</p>" in (mini_course / "site" / "first.html").read_bytes()


def test_a_cache_from_other_environment_settings_is_not_used(mini_course, capsys, compiles, monkeypatch):
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    compiles.clear()
    monkeypatch.setattr(CompiledTemplates, "SALT", CompiledTemplates.SALT + "trim_blocks changed\n")
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    assert "lesson.html" in compiles


def test_damaged_cache_files_are_compiled_afresh(mini_course, capsys, compiles):
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    first = site_bytes(mini_course)
    for number, file in enumerate(sorted((mini_course / CACHE_FOLDER / "templates").glob("*.cache"))):
        data = file.read_bytes()  # cut short, garbage after a good header, or garbage throughout
        file.write_bytes([data[: len(data) // 2], bc_magic + b"\x80\x05not a pickle", b"junk"][number % 3])
    for kept in ("site.pickle", "rendered.pickle"):  # else nothing changed, and no page is rendered
        (mini_course / CACHE_FOLDER / kept).unlink()
    compiles.clear()
    status, _, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 0, err
    assert "lesson.html" in compiles
    assert site_bytes(mini_course) == first


def test_a_cache_folder_that_cannot_be_written_does_not_stop_the_build(mini_course, capsys):
    (mini_course / CACHE_FOLDER).write_text("a file where the cache folder would go")
    status, _out, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 0, err
    assert (mini_course / "site" / "first.html").is_file()


def test_check_reads_the_cache_but_writes_none(mini_course, capsys, compiles):
    assert run_cli(capsys, "--root", mini_course, "check")[0] == 0
    assert not (mini_course / CACHE_FOLDER).exists()
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    compiles.clear()
    assert run_cli(capsys, "--root", mini_course, "check")[0] == 0
    assert compiles == []
