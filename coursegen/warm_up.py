"""The author-code worker a command-line build starts first thing, before it imports the rest of coursegen.

The last build kept `.coursegen-cache/warm-up.pickle` (disk_cache.save_warm_up): the modules installed
outside the course (numpy, matplotlib.pyplot) that each page's code cells import, the course's limits
and the input stamps. `start` reads it with nothing of the build loaded but this module's few imports,
forks the worker, and has it import those modules of the pages changed since (every page's when
course.yaml or a Python file changed) while this process imports the build and loads and parses.
A one-cell rebuild then waits for the worker's imports (0.5 s of CPU for matplotlib.pyplot) less:
started a fifth of a second earlier than the build's own imports would allow, the worker is where
the rebuild's time goes.

Only a hint: the worker imports nothing of the course from it, a module that is gone or fails is
skipped (the cell that imports it reports it), a warm-up that fails in any way leaves the build a
fresh worker (author_code.AuthorCode.pre_import), and a file not signed with this user's key
(cache.verified) is never unpickled. Its header names this coursegen's version and the file's shape,
not the full identity the other cache files carry (computing that would import the build first);
a Python file or a page added since is not looked at, and is imported when its cells run.
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass
from pathlib import Path

from coursegen import __version__
from coursegen.author_code import AuthorCode, Limits
from coursegen.cache import CACHE_FOLDER, cache_key, refused_cache_folder, verified
from coursegen.course_code import import_installed

WARM_UP_FILE = "warm-up.pickle"
IDENTITY = f"warm-up 2 {__version__}"  # what the file's header names (disk_cache._save writes it)
CONFIG_FILE = "course.yaml"  # stages.config.CONFIG_NAME, not imported: that module loads the YAML reader


@dataclass(frozen=True)
class WarmUp:
    """What the next command's author-code worker may import before any call."""

    limits: Limits  # the course's, so that the warmed worker is the one the build uses
    stamps: dict  # the input stamps of the build that kept this (disk_cache.Inputs.stamps): what changed since
    pages: dict  # source path → the modules its code cells import, in their order


def start(root: Path, runtime: AuthorCode) -> None:
    """Start `runtime`'s worker and have it import what the cells about to run again imported in the last build,
    without waiting (the build's first call waits for it). Nothing starts when no changed page's cells import
    anything, or when the file is missing, foreign, damaged or in a cache folder the build will refuse."""
    if refused_cache_folder(root):  # reported by the build; nothing is read through that link
        return
    kept = load(root)
    if kept is None:
        return
    names = warm_up_names(root, changed(root, kept.stamps, kept.pages), kept.pages)
    if names:
        runtime.pre_import(kept.limits, root, import_installed, (root, "", names, ""))


def load(root: Path) -> WarmUp | None:
    """Return what warm-up.pickle holds when this user's coursegen of this version wrote it, else None."""
    try:
        data = verified(cache_key(), WARM_UP_FILE, (root / CACHE_FOLDER / WARM_UP_FILE).read_bytes())
        if data is None:  # unsigned, signed with another key, or damaged: never unpickled
            return None
        header, value = pickle.loads(data)
    except Exception:  # noqa: BLE001 - missing, damaged, foreign: no warm-up
        return None
    ok = header[1:] == (IDENTITY,) and isinstance(value, WarmUp) and isinstance(value.limits, Limits)
    return value if ok and isinstance(value.stamps, dict) and isinstance(value.pages, dict) else None


def stamp(path: str) -> tuple:
    """Return a file's input stamp as disk_cache.input_stamps takes it (links followed)."""
    try:
        found = os.stat(path)
    except OSError:
        return ("missing",)
    return (found.st_size, found.st_mtime_ns, found.st_ino, found.st_ctime_ns)


def changed(root: Path, last: dict, pages: dict) -> set[str]:
    """Return the paths among course.yaml, the course's Python files and the pages with cells whose stamp is not
    the one `last` recorded (a stat each: the whole course is walked later, by the build)."""
    course = str(root) + os.sep
    looked = {str(root / CONFIG_FILE), *(str(root / page) for page in pages)}
    looked.update(path for path in last if path.endswith(".py") and path.startswith(course))
    return {path for path in looked if stamp(path) != last.get(path)}


def warm_up_names(root: Path, changed: set[str], pages: dict) -> tuple[str, ...]:
    """Return the modules the pages among `changed` imported, or every page's when course.yaml or a Python file
    changed (the limits, the course's package: any page's cells may run again)."""
    if str(root / CONFIG_FILE) in changed or any(path.endswith(".py") for path in changed):
        paths = sorted(pages)
    else:
        paths = sorted(path for path in pages if str(root / path) in changed)
    names = (name for path in paths for name in pages[path])
    return tuple(dict.fromkeys(name for name in names if isinstance(name, str)))
