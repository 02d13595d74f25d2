"""Watching the course for `serve`, with the watchfiles package (inotify on Linux).

Every file the build may read is watched: each top-level folder of the course recursively (the
sources, templates, widgets, the course's package, its extensions, the theme's extra CSS and
JavaScript, logo and favicon wherever they are), and the top-level files (course.yaml, an
extension or a logo beside it). What the build never reads is left out, so its inotify watches
and its noise stay small: hidden folders (.git, .venv, the cache), virtual environments,
node_modules (but for the folders `also` names, such as a self-hosted Pyodide), `site/` and
serve's own output folder. What a change means for the build is the cache's to decide
(coursegen/cache.py); the watcher only reports it.

Folders are watched recursively; one made while serving (a course's first `templates/`) joins the
watch on the next pass. Top-level files are looked at on every pass instead, because editors that
save by writing a new file and renaming it would silently end a watch on the file itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import watchfiles

from coursegen.cache import CACHE_FOLDER

NEVER_READ = ("node_modules", "site", "__pycache__", CACHE_FOLDER)  # by name, at the top of the course
# After the first change, wait until a step of this length passes with no more before rebuilding: 2-4 ms
# from a save to its rebuild (10 ms made it 10-20, a third of serve's edit → page at 2,000 lessons). The
# several events of one save (an editor's write to a new file and rename) come microseconds apart.
STEP_MS = 2
TIMEOUT_MS = 300  # how often the top-level files are looked at when nothing else moved
# watchfiles' usual filter (editors' swap files, caches), but a folder under node_modules that `also` names
# is watched for a reason: its changes must come through
CHANGES_FILTER = watchfiles.DefaultFilter(
    ignore_dirs=[name for name in watchfiles.DefaultFilter.ignore_dirs if name != "node_modules"]
)


def watched_folders(root: Path, skip: Callable[[], list[Path]] = list, also: Callable[[], list[Path]] = list):
    """Return the folders to watch: every top-level folder of the course the build may read, and the
    existing folders of `also()`; none of `skip()` (an output folder) or inside one."""
    skipped = [folder.resolve() for folder in skip()]
    found = []
    for entry in sorted(os.scandir(root), key=lambda e: e.name) if root.is_dir() else ():
        if entry.is_dir() and not _never_read(entry):
            found.append(root / entry.name)
    found += [folder for folder in also() if folder.is_dir() and folder not in found]
    return [
        folder
        for folder in found
        if not any(folder.resolve() == out or out in folder.resolve().parents for out in skipped)
    ]


def _never_read(entry: os.DirEntry) -> bool:
    """Return whether a top-level folder is one the build never reads (or an environment of Python's)."""
    return (
        entry.name.startswith(".") or entry.name in NEVER_READ or os.path.isfile(os.path.join(entry.path, "pyvenv.cfg"))
    )


def top_files(root: Path) -> dict[str, tuple]:
    """Return a stamp (inode, size, modification time) for each top-level file of the course."""
    stamps = {}
    for entry in os.scandir(root) if root.is_dir() else ():
        if not entry.name.startswith(".") and entry.is_file():
            try:
                stat = entry.stat()
            except OSError:
                continue
            stamps[entry.name] = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
    return stamps


def watch_changes(
    root: Path,
    stop: threading.Event,
    ready: threading.Event | None = None,
    skip: Callable[[], list[Path]] = list,
    also: Callable[[], list[Path]] = list,
) -> Iterator[list[str]]:
    """Yield the sorted course-relative paths of each batch of changes until `stop` is set.

    `ready` is set once the watches are in place (the first pass), so no early save is missed;
    `skip` and `also` are as for watched_folders, asked again whenever the folders may have changed.
    """
    stamps = top_files(root)
    folders = watched_folders(root, skip, also)
    while not stop.is_set():
        for changes in watchfiles.watch(
            *folders,
            stop_event=stop,
            step=STEP_MS,
            rust_timeout=TIMEOUT_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
            watch_filter=CHANGES_FILTER,
        ):
            if ready is not None:
                ready.set()
            paths = {_relative(root, path) for _, path in changes}
            now_files = top_files(root)
            paths.update(name for name in stamps.keys() | now_files.keys() if stamps.get(name) != now_files.get(name))
            stamps = now_files
            now = watched_folders(root, skip, also)  # a folder made since (say the course's first templates/)
            paths.update(_relative(root, str(folder)) for folder in set(now) ^ set(folders))
            if paths:
                yield sorted(paths)
            if now != folders:
                folders = now
                break  # watch again, the new folder included
        else:
            return


def _relative(root: Path, path: str) -> str:
    """Return a reported path relative to the course; a symbolic link is named, not followed (its
    target may be outside, and the link is what the build must check)."""
    where = Path(path)
    try:
        return (where.parent.resolve() / where.name).relative_to(root.resolve()).as_posix()
    except ValueError:
        return path
