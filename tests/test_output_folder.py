"""The output folder: never the course, nothing an author keeps, a swap in one step, a clear message on failure.

Each refused `--out` leaves every file of the course (and the previous site) exactly as it was, exits 1
with `DIR: message` and no traceback, before anything is built.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from helpers import REPO, clean_env, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from coursegen.stages import write
from coursegen.stages.site_marker import listed_files, marker_bytes
from coursegen.stages.write import MARKER, check_output_folder, exchange, remove_leftovers, update_site, write_site


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (links not followed) with its bytes, `.git` included."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.is_symlink()
    }


REFUSED = [
    # (name, --out relative to the course, expected message start, with the out as given)
    ("the course itself", ".", "the output folder is the course itself: building would delete it"),
    ("the course's parent", "..", "the output folder holds the course"),
    ("the root of the file system", "/", "the output folder holds the course"),
    ("the lessons folder", "lessons", "the output folder lies inside the course's source folder 'lessons'"),
    (
        "a folder inside the lessons",
        "lessons/site",
        "the output folder lies inside the course's source folder 'lessons'",
    ),
    ("the templates folder", "templates", "the output folder lies inside the course's source folder 'templates'"),
    ("the course's git folder", ".git", "the output folder lies inside the course's source folder '.git'"),
    ("course.yaml", "course.yaml", "the output folder lies inside the course's own file 'course.yaml'"),
    ("a folder of the author's", "notes", "the output folder holds files coursegen did not write ('todo.txt')"),
    ("a file", "draft.txt", "the output folder is a file"),
    ("a link into the lessons", "into-lessons/site", "the output folder lies inside the course's source folder"),
]


@pytest.mark.parametrize(("name", "out", "expect"), REFUSED, ids=[case[0] for case in REFUSED])
def test_an_output_folder_that_would_destroy_work_is_refused(name, out, expect, mini_course, capsys, monkeypatch):
    (mini_course / ".git").mkdir()
    (mini_course / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (mini_course / "notes").mkdir()
    (mini_course / "notes" / "todo.txt").write_text("write lesson 3\n")
    (mini_course / "draft.txt").write_text("an idea\n")
    (mini_course / "into-lessons").symlink_to("lessons")
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    before = snapshot(mini_course)
    monkeypatch.chdir(mini_course)
    status, out_text, err = run_cli(capsys, "build", "--out", out)
    assert status == 1 and "Traceback" not in err and "built" not in out_text
    assert err.splitlines()[0].startswith(f"{out}: {expect}"), err
    assert err.splitlines()[1].startswith("    hint: ")
    assert err.splitlines()[-1] == "1 problem(s); nothing was written"
    assert snapshot(mini_course) == before


def test_an_output_folder_outside_the_course_holding_other_files_is_refused(mini_course, tmp_path, capsys):
    elsewhere = tmp_path / "shared"
    (elsewhere / "photos").mkdir(parents=True)
    (elsewhere / "photos" / "cat.jpg").write_bytes(b"\xff\xd8")
    for n in range(11):
        (elsewhere / f"{n:02}.txt").write_text(str(n))
    before = snapshot(elsewhere)
    status, _, err = run_cli(capsys, "--root", mini_course, "build", "--out", elsewhere)
    assert status == 1
    named = ", ".join(f"'{n:02}.txt'" for n in range(10))
    assert err.startswith(
        f"{elsewhere}: the output folder holds files coursegen did not write ({named}, and 2 more); "
        f"building would delete them\n    hint: this folder has no '{MARKER}', the list every site of coursegen "
        "carries: move what you keep elsewhere first, or choose another folder with --out\n"
    ), err
    assert snapshot(elsewhere) == before


def build_and_add(capsys, course: Path, out: Path, extra: dict[str, str]) -> None:
    """Build the course into `out`, then add the user's `extra` files to it."""
    assert run_cli(capsys, "--root", course, "build", "--out", out)[0] == 0
    for rel, text in extra.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)


def refused(capsys, course: Path, out: Path) -> tuple[str, str]:
    """Build into `out`, which must be refused before anything is written; return (message, hint)."""
    before = snapshot(out)
    status, out_text, err = run_cli(capsys, "--root", course, "build", "--out", out)
    assert status == 1 and "Traceback" not in err and "built" not in out_text, err
    assert err.endswith("\n1 problem(s); nothing was written\n"), err
    assert snapshot(out) == before and sorted(out.parent.glob(f".{out.name}.*")) == []
    first, hint = err.splitlines()[:2]
    assert first.startswith(f"{out}: ") and hint.startswith("    hint: ")
    return first.removeprefix(f"{out}: "), hint.removeprefix("    hint: ")


def test_files_the_user_added_to_a_previous_build_are_named_and_kept(mini_course, capsys):
    """`--out docs` for GitHub Pages from a branch: the user's CNAME and README.md are not the build's."""
    docs = mini_course / "docs"
    build_and_add(capsys, mini_course, docs, {"CNAME": "course.example.org\n", "README.md": "# My site\n"})
    message, hint = refused(capsys, mini_course, docs)
    assert message == (
        "the output folder holds files coursegen did not write ('CNAME', 'README.md'); building would delete them"
    )
    assert hint == (
        f"the build replaces the folder whole and keeps only the files its '{MARKER}' lists: move what you keep "
        "elsewhere first, or choose another folder with --out"
    )


def test_a_file_added_inside_a_folder_of_the_site_is_named_with_its_path(mini_course, tmp_path, capsys):
    site = tmp_path / "site"
    build_and_add(capsys, mini_course, site, {"assets/mine.css": "body {}", "notes/todo.txt": "x"})
    message, _ = refused(capsys, mini_course, site)
    assert "('assets/mine.css', 'notes/')" in message


def test_a_clone_of_a_gh_pages_branch_keeps_its_git_folder(mini_course, tmp_path, capsys):
    """The branch was pushed from a previous build, marker and all; the clone adds .git/."""
    clone = tmp_path / "gh-pages"
    build_and_add(capsys, mini_course, clone, {".git/HEAD": "ref: refs/heads/gh-pages\n", ".git/config": ""})
    message, _ = refused(capsys, mini_course, clone)
    assert message == "the output folder holds files coursegen did not write ('.git/'); building would delete them"


def test_a_folder_shaped_like_a_site_without_the_marker_is_no_longer_taken_for_one(mini_course, tmp_path, capsys):
    """The rule of coursegen 0.1 (.nojekyll, sw.js, index.html and assets/ made a site) is retired."""
    shaped = tmp_path / "www"
    for rel in (".nojekyll", "sw.js", "index.html", "assets/site.css", "thesis.pdf", "blog/post.html"):
        (shaped / rel).parent.mkdir(parents=True, exist_ok=True)
        (shaped / rel).write_text(rel)
    message, hint = refused(capsys, mini_course, shaped)
    assert message == (
        "the output folder holds files coursegen did not write ('.nojekyll', 'assets/', 'blog/', 'index.html', "
        "'sw.js', 'thesis.pdf'); building would delete them"
    )
    assert hint.startswith(f"this folder has no '{MARKER}'")


def _link_to_a_good_marker(marker: Path) -> None:
    elsewhere = marker.parent.parent / "elsewhere"
    elsewhere.write_bytes(marker_bytes(["index.html", "notes.txt"]))
    marker.symlink_to(elsewhere)


def _edited_list(marker: Path) -> None:
    marker.write_bytes(marker_bytes(["index.html"]).replace(b'"index.html"', b'"index.html",\n  "notes.txt"'))


MARKERS = {
    "an empty file": (lambda marker: marker.write_bytes(b""), "is empty"),
    "a folder": (lambda marker: marker.mkdir(), "is a folder, not the file a build writes"),
    "a link to a good marker": (_link_to_a_good_marker, "is a link, not the file a build writes"),
    "a FIFO": (os.mkfifo, "is a FIFO, socket or device, not the file a build writes"),
    "a list edited by hand": (_edited_list, "is not one a build wrote: its list of files does not verify"),
    "text that is no list": (lambda marker: marker.write_bytes(b"mine\n"), "is not one a build wrote"),
    "a file of gigabytes": (  # sparse: its size is seen before anything is read
        lambda marker: marker.write_bytes(b"") or os.truncate(marker, 4 << 30),
        "is too large to be a build's",
    ),
}


@pytest.mark.parametrize("kind", list(MARKERS))
def test_a_marker_that_is_not_a_verified_file_is_refused(kind, mini_course, tmp_path, capsys):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("a page")
    (site / "notes.txt").write_text("the user's notes")
    make, expect = MARKERS[kind]
    make(site / MARKER)
    message, hint = refused(capsys, mini_course, site)
    assert message.startswith(f"the output folder's marker '{MARKER}' {expect}"), message
    assert message.endswith("so the folder is not known to hold only what coursegen wrote")
    assert hint.startswith("if nothing in the folder is yours, delete the folder and build again")


def test_an_unreadable_marker_is_refused(mini_course, tmp_path, capsys, monkeypatch):
    site = tmp_path / "site"
    build_and_add(capsys, mini_course, site, {})
    real_open = os.open

    def denied(path, flags, *args, **kwargs):  # as for a user without read permission (root has it always)
        if str(path).endswith(MARKER):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    message, _ = refused(capsys, mini_course, site)
    assert message.startswith(f"the output folder's marker '{MARKER}' cannot be read (Permission denied)")


def test_the_marker_of_coursegen_0_1_says_to_delete_the_folder(mini_course, tmp_path, capsys):
    site = tmp_path / "site"
    build_and_add(capsys, mini_course, site, {})
    (site / MARKER).write_bytes(
        b"coursegen wrote this folder and replaces it whole on every build: keep nothing else in it.\n"
    )
    message, hint = refused(capsys, mini_course, site)
    assert message.startswith(f"the output folder's marker '{MARKER}' is an earlier coursegen's")
    assert hint.startswith("if nothing in the folder is yours, delete the folder and build again")


def test_new_empty_and_earlier_sites_are_built_into(mini_course, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    for out in (tmp_path / "new" / "deeper", empty, mini_course / "public"):
        assert run_cli(capsys, "--root", mini_course, "build", "--out", out)[0] == 0
        assert (out / MARKER).is_file() and (out / "index.html").is_file()
    # A page the next site no longer has: the folder is replaced whole, and silently.
    first = mini_course / "lessons" / "01-first.md"
    first.write_text(first.read_text().replace(" See [the second lesson](02-second.md#details).", ""))
    (mini_course / "lessons" / "02-second.md").unlink()
    config = mini_course / "course.yaml"
    config.write_text(config.read_text().replace("  - slug: second\n    part: Part one\n", ""))
    status, _, err = run_cli(capsys, "--root", mini_course, "build", "--out", empty)
    assert status == 0 and err == "", err
    assert not (empty / "second.html").exists() and (empty / "first.html").is_file()


def test_the_marker_lists_exactly_the_files_of_the_site(mini_course, tmp_path):
    from coursegen.pipeline import build_site

    outputs = build_site(mini_course).outputs
    write_site(outputs, tmp_path / "site")
    record = json.loads((tmp_path / "site" / MARKER).read_bytes())
    assert record["format"] == "coursegen-site 1" and record["files"] == sorted(outputs)
    assert check_output_folder(tmp_path / "site", mini_course) == []


def test_serves_updates_keep_the_marker_listing_what_the_folder_holds(tmp_path):
    """serve --out writes only what changed: the marker follows, so a later build still replaces the folder."""
    site = tmp_path / "site"
    first = {"index.html": b"1", "a/old.html": b"old"}
    write_site(first, site)
    update_site({"index.html": b"2", "b/new.html": b"new"}, first, site)
    assert json.loads((site / MARKER).read_bytes())["files"] == ["b/new.html", "index.html"]
    assert check_output_folder(site, tmp_path / "course") == []


def test_the_marker_is_the_only_file_beyond_the_outputs(mini_course, tmp_path, capsys):
    from coursegen.pipeline import build_site

    outputs = build_site(mini_course).outputs
    write_site(outputs, tmp_path / "site")
    assert set(snapshot(tmp_path / "site")) == {*outputs, MARKER}
    assert MARKER not in outputs  # no page, sitemap, service-worker list or count names it


def test_a_site_of_many_files_is_written_by_threads_exactly_and_world_readable(tmp_path):
    """Past MIN_THREADED files the site is written by WRITERS threads: every file gets its bytes
    (empty ones, large ones, in folders), 0644 under a umask of 077."""
    outputs = {f"page-{n}.html": bytes([n % 256]) * (n * 997) for n in range(3 * write.MIN_THREADED)}
    outputs |= {"search/empty.json": b"", "a/b/c/deep.txt": b"deep", "big.bin": os.urandom(3 << 20)}
    previous = os.umask(0o077)
    try:
        write_site(outputs, tmp_path / "site")
    finally:
        os.umask(previous)
    assert snapshot(tmp_path / "site") == {**outputs, MARKER: marker_bytes(outputs)}
    modes = {(tmp_path / "site" / path).stat().st_mode & 0o777 for path in outputs}
    assert modes == {0o644}


def test_a_write_that_fails_in_one_thread_leaves_the_previous_site_and_no_staging(tmp_path, monkeypatch):
    site = tmp_path / "site"
    write_site({"index.html": b"the last good site"}, site)
    real_open = os.open

    def one_fails(path, flags, *args, **kwargs):
        if str(path).endswith("page-77.html"):
            raise OSError(28, "No space left on device", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", one_fails)
    with pytest.raises(write.ContentError) as refused:
        write_site({f"page-{n}.html": b"new" for n in range(3 * write.MIN_THREADED)}, site)
    assert "No space left on device" in str(refused.value) and "page-77.html" in str(refused.value)
    assert snapshot(site) == {"index.html": b"the last good site", MARKER: marker_bytes(["index.html"])}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_the_new_site_is_swapped_in_without_the_old_one_ever_moving_away(tmp_path, monkeypatch):
    site = tmp_path / "site"
    write_site({"index.html": b"one"}, site)
    renamed: list[tuple[Path, Path]] = []
    real_rename = Path.rename
    monkeypatch.setattr(Path, "rename", lambda self, to: renamed.append((self, to)) or real_rename(self, to))
    write_site({"index.html": b"two"}, site)
    assert (site / "index.html").read_bytes() == b"two"
    assert renamed == []  # one renameat2 exchange, no rename of site/ to a retired name and back
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_exchange_swaps_two_folders_in_place(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "from-a").write_text("")
    (tmp_path / "b").mkdir()
    assert exchange(tmp_path / "a", tmp_path / "b")
    assert [p.name for p in (tmp_path / "b").iterdir()] == ["from-a"] and not list((tmp_path / "a").iterdir())
    with pytest.raises(FileNotFoundError):
        exchange(tmp_path / "a", tmp_path / "missing")


def test_without_an_atomic_exchange_two_renames_still_give_the_new_site(tmp_path, monkeypatch):
    site = tmp_path / "site"
    write_site({"index.html": b"one"}, site)
    monkeypatch.setattr(write, "exchange", lambda a, b: False)  # as on a system without renameat2
    write_site({"index.html": b"two", "more.html": b"3"}, site)
    assert snapshot(site) == {
        "index.html": b"two",
        "more.html": b"3",
        MARKER: marker_bytes(["index.html", "more.html"]),
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_a_site_left_missing_between_two_renames_gets_its_retired_copy_back(tmp_path):
    dead = 2**22 + 4321  # above Linux's largest process id
    retired = tmp_path / f".site.retired-{dead}"
    retired.mkdir()
    (retired / "index.html").write_text("the old site")
    staging = tmp_path / f".site.staging-{dead}"
    staging.mkdir()
    remove_leftovers(tmp_path / "site")
    assert (tmp_path / "site" / "index.html").read_text() == "the old site"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_a_failed_write_is_a_message_and_the_previous_site_stays(mini_course, capsys, monkeypatch):
    assert run_cli(capsys, "--root", mini_course, "build")[0] == 0
    before = snapshot(mini_course / "site")
    real_open = os.open

    def full_disk(path, flags, *args, **kwargs):
        if ".staging-" in str(path) and flags & os.O_CREAT:  # a file of the new site (kept ones are linked)
            raise OSError(28, "No space left on device", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", full_disk)
    status, _, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 1 and "Traceback" not in err
    assert err.startswith(f"{mini_course / 'site'}: cannot write the site: No space left on device (")
    assert "the previous site is unchanged\n    hint: free some space or make the folder writable" in err
    assert snapshot(mini_course / "site") == before
    assert sorted(p.name for p in mini_course.glob(".site.*")) == []


def _can_mount() -> bool:
    if not shutil.which("unshare") or os.geteuid() != 0:
        return False
    probe = subprocess.run(["unshare", "-m", "mount", "-t", "tmpfs", "tmpfs", "/mnt"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _can_mount(), reason="needs root and `unshare -m` to mount a small tmpfs")
@pytest.mark.parametrize(
    ("setup", "expect"),
    [
        ("mount -t tmpfs -o size=96k tmpfs $OUT", "cannot write the site: No space left on device"),
        ("mount -t tmpfs tmpfs $OUT && $BUILD && mount -o remount,ro $OUT", "cannot write the site: Read-only"),
    ],
    ids=["full disk", "read-only folder"],
)
def test_a_real_full_disk_or_read_only_folder_is_a_message(setup, expect, mini_course, tmp_path):
    """In a mount namespace of its own (nothing outside it sees the mount): a 96 KiB disk, and a folder
    remounted read-only after a first build. The build must say so, exit 1, and keep the previous site."""
    out = tmp_path / "mounted"
    out.mkdir()
    build = f"{sys.executable} {REPO / 'build.py'} --root {mini_course} build --out {out}/site"
    script = (
        setup.replace("$OUT", str(out)).replace("$BUILD", build + " >/dev/null")
        + f" && (cd {out} && find . -type f | sort | xargs sha256sum > /tmp/before-$$)"
        + f"; {build}; echo status=$?"
        + f"; (cd {out} && find . -type f | sort | xargs sha256sum | cmp - /tmp/before-$$ && echo same)"
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, env=clean_env(), timeout=600
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert f"{out}/site: {expect}" in done.stderr, done.stderr
    assert "status=1" in done.stdout and "same" in done.stdout, done.stdout + done.stderr


def test_a_serve_update_cut_short_leaves_a_folder_the_next_build_replaces(tmp_path, monkeypatch):
    """A serve killed while it writes new files: the marker already lists them (and the old ones)."""
    site = tmp_path / "site"
    first = {"index.html": b"1", "a/old.html": b"old"}
    write_site(first, site)
    real_open = os.open

    def killed(path, flags, *args, **kwargs):
        if str(path).endswith("new.html.tmp"):
            (site / "b" / "new.html").write_bytes(b"half")  # as if the process ended mid-way
            raise OSError(28, "No space left on device", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", killed)
    with pytest.raises(OSError):
        update_site({"index.html": b"2", "b/new.html": b"new"}, first, site)
    monkeypatch.undo()
    assert (site / "b" / "new.html").exists() and (site / "a" / "old.html").exists()
    assert check_output_folder(site, tmp_path / "course") == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=["Cs"]) | st.sampled_from('"\\,[]\udcff'), min_size=1)))
def test_the_marker_lists_any_names_and_reads_them_back(names):
    """Quotes, commas, backslashes, brackets, any script and undecodable bytes (surrogate escapes)."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / MARKER).write_bytes(marker_bytes(names))
        assert listed_files(Path(folder)) == set(names)
