"""Watching the course's sources for `serve`, with the watchfiles package (inotify on Linux).

Folders are watched recursively; one made while serving (a course's first `templates/`) joins the
watch on the next pass. course.yaml is checked on every pass instead, because editors that save
by writing a new file and renaming it would silently end a watch on the file itself.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import watchfiles

from coursegen.stages.config import CONFIG_NAME

WATCHED_FOLDERS = ("lessons", "reviews", "templates", "widgets", "kernels", "media")
STEP_MS = 10  # after the first change, wait this long for more before rebuilding
TIMEOUT_MS = 300  # how often course.yaml is looked at when nothing else moved


def watched_folders(root: Path) -> list[Path]:
    """Return the course folders that exist and can therefore be watched, with every top-level
    Python package (the course's own one may have any name: `python: {package: …}`)."""
    packages = sorted(p.name for p in root.iterdir() if (p / "__init__.py").is_file()) if root.is_dir() else []
    names = dict.fromkeys([*WATCHED_FOLDERS, *packages])
    return [root / name for name in names if (root / name).is_dir()]


def _stamp(file: Path) -> tuple:
    try:
        stat = file.stat()
    except OSError:
        return ()
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def watch_changes(root: Path, stop: threading.Event, ready: threading.Event | None = None) -> Iterator[list[str]]:
    """Yield the sorted course-relative paths of each batch of changes until `stop` is set.

    `ready` is set once the watches are in place (the first pass), so no early save is missed.
    """
    config, stamp = root / CONFIG_NAME, _stamp(root / CONFIG_NAME)
    folders = watched_folders(root)
    while not stop.is_set():
        for changes in watchfiles.watch(
            *folders,
            stop_event=stop,
            step=STEP_MS,
            rust_timeout=TIMEOUT_MS,
            yield_on_timeout=True,
            raise_interrupt=False,
        ):
            if ready is not None:
                ready.set()
            paths = {_relative(root, path) for _, path in changes}
            if _stamp(config) != stamp:
                stamp = _stamp(config)
                paths.add(CONFIG_NAME)
            now = watched_folders(root)  # a folder made since (say the course's first templates/)
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
