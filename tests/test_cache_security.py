"""A repository cannot plant a .coursegen-cache/ that a build trusts: every file coursegen loads from there (pickles,
Jinja's compiled templates) must carry a signature made with the user's own key, and the folder stays in the course."""

from __future__ import annotations

import os
import pickle
import stat
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
from helpers import REPO, clean_env, run_cli

from coursegen import cache, disk_cache
from coursegen.cache import CACHE_FOLDER


class Planted:
    """What a planted pickle could do: here, make a folder; it could as well run any command."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.mkdir, (str(self.marker),)


def build(capsys, course) -> tuple[int, str]:
    status, _, err = run_cli(capsys, "--root", course, "build")
    return status, err


def cache_files(course: Path) -> list[Path]:
    return sorted(p for p in (course / CACHE_FOLDER).rglob("*") if p.is_file())


def test_planted_pickles_are_never_unpickled_and_the_build_is_cold(mini_course, capsys, tmp_path):
    assert build(capsys, mini_course)[0] == 0
    pickles = [p for p in cache_files(mini_course) if p.suffix == ".pickle"]
    assert {p.name for p in pickles} >= {"site.pickle", "rendered.pickle", "00.pickle"}
    marker = tmp_path / "ran"
    for number, file in enumerate(pickles):
        planted = Planted(tmp_path / f"ran-{number}")
        file.write_bytes(pickle.dumps(planted) + pickle.dumps(planted))  # as the old format: two pickles
    status, err = build(capsys, mini_course)
    assert status == 0, err
    assert not list(tmp_path.glob("ran*")), "a planted pickle ran"
    assert not marker.exists()


def test_planted_compiled_templates_are_never_loaded(mini_course, capsys, tmp_path):
    assert build(capsys, mini_course)[0] == 0
    templates = list((mini_course / CACHE_FOLDER / "templates").iterdir())
    assert templates
    for number, file in enumerate(templates):  # Jinja's layout: its magic, a pickled checksum, marshalled code
        file.write_bytes(jinja2.bccache.bc_magic + pickle.dumps(Planted(tmp_path / f"ran-{number}"), 2))
    (mini_course / CACHE_FOLDER / disk_cache.SITE_FILE).unlink()  # so that the pages are rendered again
    (mini_course / CACHE_FOLDER / disk_cache.RENDERED_FILE).unlink()
    status, err = build(capsys, mini_course)
    assert status == 0, err
    assert not list(tmp_path.glob("ran*")), "a planted template ran"


def test_a_cache_signed_with_another_users_key_is_ignored(mini_course, capsys, monkeypatch, tmp_path):
    assert build(capsys, mini_course)[0] == 0
    identity = disk_cache.coursegen_identity()
    assert disk_cache._load(mini_course / CACHE_FOLDER / disk_cache.SITE_FILE, identity) is not None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "another-user"))
    assert disk_cache._load(mini_course / CACHE_FOLDER / disk_cache.SITE_FILE, identity) is None


def test_the_key_is_made_on_first_use_for_this_user_alone(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    key = cache.cache_key()
    file = tmp_path / "xdg" / "coursegen" / "cache-key"
    assert key is not None and len(key) == 32 and file.read_bytes() == key
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert cache.cache_key() == key  # the same key from then on
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_key() is not None and (tmp_path / "home" / ".cache" / "coursegen" / "cache-key").is_file()


def test_a_key_others_may_read_vouches_for_nothing(monkeypatch, tmp_path, mini_course, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_key() is not None
    (tmp_path / "xdg" / "coursegen" / "cache-key").chmod(0o644)
    assert cache.cache_key() is None
    assert build(capsys, mini_course)[0] == 0  # the build goes on, keeping nothing
    assert not [p for p in cache_files(mini_course) if p.suffix == ".pickle"]


def test_a_signed_file_does_not_pass_for_another(tmp_path):
    key = b"k" * 32
    blob = cache.signed(key, "pages/00.pickle", b"data")
    assert cache.verified(key, "pages/00.pickle", blob) == b"data"
    assert cache.verified(key, "pages/01.pickle", blob) is None
    assert cache.verified(b"x" * 32, "pages/00.pickle", blob) is None
    assert cache.verified(key, "pages/00.pickle", blob[:-1] + b"x") is None


@pytest.mark.parametrize("command", ["build", "check"])
def test_a_cache_folder_linked_out_of_the_course_is_refused(mini_course, capsys, tmp_path, command):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (mini_course / CACHE_FOLDER).symlink_to(outside)
    status, _, err = run_cli(capsys, "--root", mini_course, command)
    assert status == 1 and "Traceback" not in err
    assert err.startswith(
        f".coursegen-cache: is a link to {outside}, outside the course: coursegen keeps its cache in the course, "
        "and writes nowhere else\n    hint: remove the link (.coursegen-cache/ is made afresh by the next build)\n"
    ), err
    assert not list(outside.iterdir()) and not (mini_course / "site").exists()


def test_serve_refuses_a_cache_folder_linked_out_of_the_course(mini_course, tmp_path):
    (mini_course / CACHE_FOLDER).symlink_to(tmp_path)
    done = subprocess.run(  # in a process of its own: a serve that started would run until stopped
        [sys.executable, str(REPO / "build.py"), "--root", str(mini_course), "serve", "--port", "0", "--no-watch"],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=600,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(".coursegen-cache: is a link to"), done.stderr


def test_a_cache_folder_linked_inside_the_course_is_used(mini_course, capsys):
    (mini_course / "kept").mkdir()
    (mini_course / CACHE_FOLDER).symlink_to(mini_course / "kept")
    assert build(capsys, mini_course)[0] == 0
    assert (mini_course / "kept" / disk_cache.SITE_FILE).is_file()
