"""Locks that say a process is still using a folder, whatever pid namespace it runs in.

A pid cannot say whether the process that made a folder still runs: a process in another pid
namespace (a container sharing the folder) has a pid this one cannot see, and a new process may
reuse a dead one's number. An `flock` can: the kernel releases it when the last process holding
the file open ends, however it ends, and every namespace that shares the file sees it.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def hold(lock: Path) -> int:
    """Create `lock`, lock it for this process and return its open descriptor (close it to let go).

    It is locked under another name and then renamed into place, so nobody ever finds it unlocked
    while its holder is starting. Raises OSError when it cannot be made.
    """
    fresh = lock.with_name(lock.name + ".new")
    fd = os.open(fresh, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(fresh, lock)
    except OSError:
        os.close(fd)
        fresh.unlink(missing_ok=True)
        raise
    return fd


def take_if_free(lock: Path) -> int | None:
    """Return an open, locked descriptor of `lock` when no process holds it, else None (also when it is
    missing, a link, or cannot be opened: then it is nobody's lock that this process may judge)."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # held: its process (or one it started) is running
        os.close(fd)
        return None
    return fd
