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

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from coursegen import file_lock

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
    try:
        fd = file_lock.hold(folder / LOCK)
    except OSError:
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
    fd = file_lock.take_if_free(folder / LOCK)  # None: no lock file (a link, another user's) or one held
    if fd is None:
        return False
    try:
        shutil.rmtree(folder, ignore_errors=True)
    finally:
        os.close(fd)
    return True
