"""What a course keeps on disk between runs of coursegen (what lives between builds of one run is
coursegen/session.py's), and the key that vouches for it.

`.coursegen-cache/` holds pickles and Jinja's compiled templates: loading either runs code, so a
repository must not be able to plant one that a build trusts. Every file coursegen writes there is
signed with an HMAC under a secret of the user's own (`$XDG_CACHE_HOME/coursegen/cache-key`, else
`~/.cache/coursegen/cache-key`, made on first use, mode 0600), and a file whose signature does not
match is ignored, as if it were missing: a repository cannot forge one without that key.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from coursegen.errors import Problem

CACHE_FOLDER = ".coursegen-cache"  # in the course root: git-ignored, safe to delete at any time
KEY_FILE = "cache-key"
KEY_BYTES = 32
SIGNATURE_BYTES = hashlib.sha256().digest_size


def key_file() -> Path:
    """Return where this user's cache key lives: under $XDG_CACHE_HOME (when absolute) or ~/.cache."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "coursegen" / KEY_FILE


def cache_key() -> bytes | None:
    """Return this user's secret for signing cache files, made on first use; None when there is none to
    be had (a read-only home, a key others may read or write): then nothing is trusted and nothing kept."""
    file = key_file()
    try:
        return _read_key(file)
    except FileNotFoundError:
        pass
    except OSError:
        return None
    try:
        file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(secrets.token_bytes(KEY_BYTES))
    except FileExistsError:  # another process made it first: its key is the key
        pass
    except OSError:
        return None
    try:
        return _read_key(file)
    except OSError:
        return None


def _read_key(file: Path) -> bytes | None:
    """Return the key in `file`, or None when it is not a regular file of this user's that only they can use."""
    with open(os.open(file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)), "rb") as stream:
        found = os.fstat(stream.fileno())
        if not stat.S_ISREG(found.st_mode) or found.st_mode & 0o077 or found.st_uid != os.getuid():
            return None
        data = stream.read()
    return data if len(data) == KEY_BYTES else None  # a key still being written by another process: none yet


def signed(key: bytes, name: str, data: bytes) -> bytes:
    """Return `data` preceded by its signature as the cache file `name`."""
    return signature(key, name, data) + data


def verified(key: bytes | None, name: str, blob: bytes) -> memoryview | None:
    """Return the data of a signed cache file `name`, or None when its signature is not this user's key's."""
    if key is None or len(blob) < SIGNATURE_BYTES:
        return None
    data = memoryview(blob)[SIGNATURE_BYTES:]
    return data if hmac.compare_digest(blob[:SIGNATURE_BYTES], signature(key, name, data)) else None


def signature(key: bytes, name: str, data) -> bytes:
    """Return the signature of `data` as the cache file `name` (the name is signed too: one file's data cannot
    stand in for another's)."""
    mac = hmac.new(key, name.encode() + b"\0", hashlib.sha256)
    mac.update(data)
    return mac.digest()


def refused_cache_folder(root: Path) -> list[Problem]:
    """Return the problem of a `.coursegen-cache` that is a link leading out of the course (a build would write
    its files there), or nothing."""
    folder = root / CACHE_FOLDER
    if not folder.is_symlink():
        return []
    target = Path(os.path.realpath(folder))
    if target.is_relative_to(Path(os.path.realpath(root))):
        return []
    return [
        Problem(
            CACHE_FOLDER,
            0,
            0,
            f"is a link to {target}, outside the course: coursegen keeps its cache in the course, and writes "
            "nowhere else",
            f"remove the link ({CACHE_FOLDER}/ is made afresh by the next build)",
        )
    ]
