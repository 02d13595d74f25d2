"""The course boundary for code cells: while a cell runs, it opens files inside the course and Python's own only.

A cell runs in its page's folder, as a notebook runs in its own (`open("data.csv")` reads the
file beside the lesson). An audit hook (PEP 578), added once per worker and active only while a
cell runs, refuses to open a file anywhere else: the course folder, Python's installation and
import paths, the temporary folder, matplotlib's cache and the system's read-only trees (/usr,
/proc, /sys, /dev) are allowed; the author's home, /etc and other projects are not. It is a
boundary against mistakes (a path that only exists on the author's machine), not a sandbox.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

SYSTEM = ("/usr/", "/proc/", "/sys/", "/dev/")
_ACTIVE: list = [None]  # in the worker: the allowed folders while a cell runs, else None


class OutsideCourse(PermissionError):
    """A cell opened a file outside the course (a PermissionError: Python's own callers expect an OSError)."""


@contextlib.contextmanager
def inside_course(root: Path, folder: Path):
    """Run the block in `folder`, refusing to open files outside the allowed folders (see the module's docstring)."""
    if not _HOOKED:
        sys.addaudithook(_check)
        _HOOKED.append(True)
    before = os.getcwd()
    os.chdir(folder)
    _ACTIVE[0] = _allowed(root)
    try:
        yield
    finally:
        _ACTIVE[0] = None
        os.chdir(before)


_HOOKED: list = []  # in the worker: whether its audit hook is added (it cannot be removed)


def _allowed(root: Path) -> tuple[str, ...]:
    """Return the folders a cell may open files in, each ending with a separator."""
    folders: list = [root, sys.prefix, sys.base_prefix, sys.exec_prefix, tempfile.gettempdir()]
    folders += [entry for entry in sys.path if entry]
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is not None:
        folders += [matplotlib.get_cachedir(), matplotlib.get_configdir()]
    resolved = {os.path.join(os.path.realpath(folder), "") for folder in folders}
    return tuple(sorted(resolved)) + SYSTEM


def _check(event: str, args: tuple) -> None:
    """The audit hook: refuse an `open` of a path outside the allowed folders while a cell runs."""
    allowed = _ACTIVE[0]
    if allowed is None or event != "open" or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    path = os.fsdecode(args[0])
    full = os.path.realpath(path)
    if not any(full.startswith(folder) or full + os.sep == folder for folder in allowed):
        raise OutsideCourse(f"'{path}', outside the course")
