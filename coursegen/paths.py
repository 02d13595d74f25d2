"""The course folder's boundary: the build reads, and so publishes, only regular files inside it.

A lesson may name `/etc/passwd` or `../../secret.png`, and any file or folder of the course may be a
symbolic link to somewhere else; a FIFO named like a lesson would block the first read forever.
`inside_course` answers for one named path; `check_course_files` looks at every file of the folders
the build reads before anything is read.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from pathlib import Path

from coursegen.errors import Problems

# What the build reads from the course folder: sources, theme, widgets, kernels, media, configuration.
COURSE_INPUTS = ("course.yaml", "lessons", "reviews", "templates", "widgets", "kernels", "media")
OUTSIDE_HINT = "copy the file into the course folder instead of naming or linking to it"


def inside_course(root: Path, path: str | Path) -> Path | None:
    """Return `path` (relative to `root`) with symbolic links followed, or None when it leaves `root`.

    A path that climbs out by name (absolute, or `..` past the root) is outside even when it would
    land inside again: what a source names must read as a place in the course.
    """
    name = posixpath.normpath(Path(path).as_posix())
    if climbs_out(name):
        return None
    base = root.resolve()
    try:
        resolved = (base / name).resolve()
    except (OSError, RuntimeError):  # a loop of symbolic links
        return None
    return resolved if resolved == base or base in resolved.parents else None


def climbs_out(name: str) -> bool:
    """Return whether a relative path names a place outside its folder: absolute, or `..` past the top."""
    name = posixpath.normpath(name)
    return posixpath.isabs(name) or name == ".." or name.startswith("../")


def check_course_files(root: Path, problems: Problems, names: tuple[str, ...] = COURSE_INPUTS) -> None:
    """Report each link that leads outside the course or nowhere, and each entry that is no regular file.

    Folders are listed with os.scandir, whose entries know their type without a system call per
    file; only links are followed. A linked folder that stays inside is walked too, once (a link
    may lead back to a parent).
    """
    followed: set[Path] = set()
    if _undecodable(str(root)):
        problems.error(
            _readable(str(root)), 0, "the course folder's name is not text in this system's encoding", UNDECODABLE_HINT
        )
        return
    for name in names:
        path = root / name
        if os.path.lexists(path):
            _check_entry(root, name, path.is_symlink(), path.is_dir(), path.is_file(), problems, followed)


# A name the file system encoding cannot decode (non-ASCII under an ASCII locale with PYTHONUTF8=0)
# comes as lone surrogates, which no page, hash or message can be written with.
UNDECODABLE_HINT = (
    "run coursegen in a UTF-8 locale (LANG=C.UTF-8) or with PYTHONUTF8=1, or rename it with ASCII letters"
)


def _undecodable(name: str) -> bool:
    return any("\udc80" <= c <= "\udcff" for c in name)


def _readable(name: str) -> str:
    """Return a name as its bytes read in UTF-8 (what a terminal shows), for a message."""
    return os.fsencode(name).decode("utf-8", "replace")


def check_changed_files(root: Path, changed, problems: Problems, names: tuple[str, ...] = COURSE_INPUTS) -> None:
    """`check_course_files` for the course-relative paths in `changed` alone (what a watcher saw change):
    each that still exists is looked at like an entry of the full walk, a folder with all it holds."""
    followed: set[Path] = set()
    for name in names:  # the folders themselves, a few calls: one replaced by a link is not always reported
        try:
            mode = os.lstat(root / name).st_mode
        except OSError:
            continue
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            _check_entry(root, name, stat.S_ISLNK(mode), False, False, problems, followed)
    for shown in sorted(changed):
        if shown.split("/", 1)[0] not in names or "__pycache__" in shown.split("/") or climbs_out(shown):
            continue  # not read by the build
        path = root / shown
        try:
            mode = os.lstat(path).st_mode
        except OSError:  # gone again (a deleted file, an editor's temporary one)
            continue
        _check_entry(root, shown, stat.S_ISLNK(mode), stat.S_ISDIR(mode), stat.S_ISREG(mode), problems, followed)


def _check_entry(
    root: Path, shown: str, link: bool, folder: bool, regular: bool, problems: Problems, followed: set
) -> None:
    path = root / shown
    if _undecodable(shown):
        problems.error(
            _readable(shown),
            1,
            f"the name of '{_readable(shown)}' is not text in this system's encoding",
            UNDECODABLE_HINT,
        )
        return
    if link:
        if _loops(path):
            problems.error(shown, 1, f"'{shown}' is a loop of symbolic links")
            return
        if inside_course(root, shown) is None:
            problems.error(
                shown,
                1,
                f"'{shown}' is outside the course",
                f"it is a symbolic link to {os.path.realpath(path)}; {OUTSIDE_HINT}",
            )
            return
        if not path.exists():
            problems.error(
                shown,
                1,
                f"'{shown}' is a symbolic link to nothing",
                f"it points to {os.readlink(path)}, which does not exist",
            )
            return
        folder, regular = path.is_dir(), path.is_file()
        if folder and path.resolve() in followed:
            return
        followed.add(path.resolve())
    if folder:
        try:
            entries = list(os.scandir(path))
        except OSError as err:  # a folder the build may not list (no read permission)
            problems.error(shown, 1, f"cannot read folder '{shown}': {err.strerror or err}")
            return
        for entry in entries:
            if entry.name != "__pycache__":
                _check_entry(
                    root,
                    f"{shown}/{entry.name}",
                    entry.is_symlink(),
                    entry.is_dir(follow_symlinks=False),
                    entry.is_file(follow_symlinks=False),
                    problems,
                    followed,
                )
    elif not regular:
        problems.error(
            shown,
            1,
            f"'{shown}' is not a regular file (a FIFO, socket or device)",
            "remove it; the build reads only regular files",
        )


def _loops(link: Path) -> bool:
    """Return whether following a symbolic link never ends (it leads back to itself)."""
    try:
        link.resolve(strict=True)
    except RuntimeError:  # Python 3.11 reports a loop this way; later versions raise OSError(ELOOP)
        return True
    except OSError as err:
        return err.errno == errno.ELOOP
    return False
