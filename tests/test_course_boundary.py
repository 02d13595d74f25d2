"""No source can publish a file from outside the course folder, whatever form its path takes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import run_cli

from coursegen.paths import inside_course

SECRET = "coursegen-boundary-secret-7f3a9c"  # bytes that must never reach the site or the terminal


@pytest.fixture
def outside(tmp_path, monkeypatch) -> Path:
    """A folder beside the course holding files a source must not reach; the secret is in the environment too."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.png").write_text(SECRET)
    (folder / "secret.md").write_text(f"---\ntitle: Second lesson\n---\n\n## Details\n\n{SECRET}\n")
    (folder / "lesson.html").write_text(f"<html><body>{SECRET}{{{{ body }}}}</body></html>\n")
    monkeypatch.setenv("COURSEGEN_BOUNDARY_SECRET", SECRET)  # so /proc/self/environ holds it
    return folder


def show_image(root: Path, src: str) -> None:
    lesson = root / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", f"![x]({src})"))


FORMS = {
    "absolute image path": (
        lambda root, out: show_image(root, str(out / "secret.png")),
        "lessons/02-second.md:12: '{out}/secret.png' is outside the course",
    ),
    "image path with ..": (
        lambda root, out: show_image(root, os.path.relpath(out / "secret.png", root / "lessons")),
        "lessons/02-second.md:12: '../../outside/secret.png' is outside the course",
    ),
    "/proc/self/environ": (
        lambda root, out: show_image(root, "/proc/self/environ"),
        "lessons/02-second.md:12: '/proc/self/environ' is outside the course",
    ),
    "symbolically linked source": (
        lambda root, out: _relink(root / "lessons" / "02-second.md", out / "secret.md"),
        "lessons/02-second.md:1: 'lessons/02-second.md' is outside the course",
    ),
    "symbolically linked image": (
        lambda root, out: (_relink(root / "lessons" / "pic.png", out / "secret.png"), show_image(root, "pic.png")),
        "lessons/pic.png:1: 'lessons/pic.png' is outside the course",
    ),
    "symbolically linked folder": (
        lambda root, out: (_relink(root / "lessons" / "images", out), show_image(root, "images/secret.png")),
        "lessons/images:1: 'lessons/images' is outside the course",
    ),
    "symbolically linked template": (
        lambda root, out: _relink(root / "templates" / "lesson.html", out / "lesson.html"),
        "templates/lesson.html:1: 'templates/lesson.html' is outside the course",
    ),
    "symbolically linked media folder": (
        lambda root, out: (_relink(root / "media", out), show_image(root, "../media/secret.png")),
        "media:1: 'media' is outside the course",
    ),
}


def _relink(link: Path, target: Path) -> None:
    if link.exists() or link.is_symlink():
        link.unlink()
    link.symlink_to(target)


@pytest.mark.parametrize("form", FORMS)
def test_no_source_publishes_a_file_from_outside_the_course(form, mini_course, outside, tmp_path, capsys):
    edit, expected = FORMS[form]
    edit(mini_course, outside)
    site = tmp_path / "published"
    for command in (["build", "--out", site], ["check"]):
        status, out, err = run_cli(capsys, "--root", mini_course, *command)
        assert status == 1, err
        assert expected.format(out=outside) in err.splitlines(), err
        assert "Traceback" not in err
        assert SECRET not in out + err
    assert not site.exists()
    leaked = [
        p
        for p in mini_course.rglob("*")
        if p.is_file()
        and not p.is_symlink()
        and p.resolve().is_relative_to(mini_course.resolve())
        and SECRET.encode() in p.read_bytes()
    ]
    assert leaked == []


def test_inside_course_follows_links_and_refuses_paths_that_climb_out(mini_course, tmp_path):
    (mini_course / "lessons" / "here.png").write_bytes(b"png")
    (mini_course / "lessons" / "alias.png").symlink_to("here.png")
    (mini_course / "lessons" / "away.png").symlink_to(tmp_path)
    assert inside_course(mini_course, "lessons/here.png") == (mini_course / "lessons" / "here.png").resolve()
    assert inside_course(mini_course, "lessons/alias.png") == (mini_course / "lessons" / "here.png").resolve()
    assert inside_course(mini_course, "lessons/../lessons/here.png") is not None
    for outside_path in ("lessons/away.png", "/etc/passwd", "../mini/lessons/here.png", "..", "lessons/../../x"):
        assert inside_course(mini_course, outside_path) is None, outside_path


def test_a_pyodide_lock_file_cannot_name_files_outside_its_distribution(tmp_path):
    """A self-hosted Pyodide is copied by the names in its lock file: only plain file names count."""
    import json

    from coursegen.features.widgets.site import pyodide_site
    from coursegen.stages.config import PyodideConfig

    dist = tmp_path / "course" / "node_modules" / "pyodide"
    dist.mkdir(parents=True)
    for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"):
        (dist / name).write_text("// runtime")
    (dist / "package.json").write_text(json.dumps({"version": PyodideConfig().version}))
    (dist / "numpy.whl").write_bytes(b"wheel")
    (tmp_path / "secret.txt").write_text(SECRET)
    packages = {
        "numpy": {"file_name": "numpy.whl", "depends": ["ml-dtypes"]},
        "ml-dtypes": {"file_name": "../../../secret.txt", "depends": []},
    }
    (dist / "pyodide-lock.json").write_text(json.dumps({"packages": packages}))
    site = pyodide_site(tmp_path / "course", PyodideConfig(source="local"), ["numpy"])
    assert sorted(site.files) == [
        "pyodide/pyodide-lock.json",
        "pyodide/pyodide.asm.mjs",
        "pyodide/pyodide.asm.wasm",
        "pyodide/pyodide.mjs",
        "pyodide/python_stdlib.zip",
    ]
    assert site.missing == {
        "ml-dtypes": "its lock entry names '../../../secret.txt', not a file of the distribution",
        "numpy": "needs ml-dtypes",
    }  # so it is of no use on the site either


def test_a_folder_that_cannot_be_listed_is_a_located_problem(mini_course, monkeypatch):
    """Tests run as root, where chmod 000 still lists a folder: the listing is made to fail instead."""
    from coursegen import paths
    from coursegen.errors import Problems

    listing = os.scandir

    def refusing(path):
        if Path(path).name == "lessons":
            raise PermissionError(13, "Permission denied")
        return listing(path)

    monkeypatch.setattr(paths.os, "scandir", refusing)
    problems = Problems()
    paths.check_course_files(mini_course, problems)
    assert [p.format() for p in problems.items] == ["lessons:1: cannot read folder 'lessons': Permission denied"]
