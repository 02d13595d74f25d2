"""serve's temporary output folders, each locked for as long as its serve runs.

A serve stopped by SIGKILL cannot remove its folder, and a large course's is hundreds of megabytes,
so each serve removes those its dead predecessors left. Whether a serve is dead cannot be told from
its pid: a serve in another pid namespace (a container sharing /tmp) has a pid this one cannot see,
and one that reused a dead serve's number is not that serve. A lock can: each folder holds LOCK,
which its serve keeps locked with `flock` until it ends. The kernel releases the lock when the last
process holding the file open ends, however it ends, and in every namespace that shares the file.
The serve's site is a folder inside (SITE): the site is swapped whole on its first build, its
temporary folder and lock stay.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

# The pid in the name only says which serve made the folder; the lock says whether it still runs.
SITE_PREFIX = "coursegen-serve-"
TEMPORARY = re.compile(rf"^{SITE_PREFIX}\d+-[A-Za-z0-9_]+$")
LOCK, SITE = "serve.lock", "site"


@dataclass
class TemporarySite:
    """A serve's temporary folder: `site` inside it is served, `lock` is held until `remove`."""

    folder: Path
    lock: int  # the open, flock-ed file descriptor of folder/LOCK

    @property
    def site(self) -> Path:
        """Return the folder the site is built into and served from."""
        return self.folder / SITE

    def remove(self) -> None:
        """Remove the folder, then let go of its lock."""
        shutil.rmtree(self.folder, ignore_errors=True)
        os.close(self.lock)


def make_temporary_site(parent: Path | None = None) -> TemporarySite:
    """Return a new temporary folder in `parent` (the system's temporary folder), locked for this process.

    The lock file is locked under another name and then renamed into place, so clean-up never finds
    the folder with an unlocked LOCK (a folder without one it leaves alone).
    """
    folder = Path(tempfile.mkdtemp(prefix=f"{SITE_PREFIX}{os.getpid()}-", dir=parent))
    fd = os.open(folder / f"{LOCK}.new", os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(folder / f"{LOCK}.new", folder / LOCK)
    except OSError:
        os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return TemporarySite(folder, fd)


def remove_abandoned_sites(parent: Path | None = None) -> list[Path]:
    """Remove the temporary folders in `parent` (the system's temporary folder) whose lock no serve holds;
    return them. A folder without a lock file (one being made, or an older coursegen's) is left alone."""
    parent = Path(tempfile.gettempdir()) if parent is None else parent
    try:
        entries = sorted(parent.glob(f"{SITE_PREFIX}*"))
    except OSError:
        return []
    return [entry for entry in entries if TEMPORARY.match(entry.name) and _remove_if_unlocked(entry)]


def _remove_if_unlocked(folder: Path) -> bool:
    """Remove `folder` if its lock can be taken (holding it meanwhile); return whether it was removed."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    try:
        fd = os.open(folder / LOCK, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)  # a link: not a serve's own
    except OSError:  # no lock file, or another user's
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # held: its serve (or a process it started) is running, in whatever pid namespace
        os.close(fd)
        return False
    try:
        shutil.rmtree(folder, ignore_errors=True)
    finally:
        os.close(fd)
    return True
