"""The output folder's marker: a file in every site that lists each file the build wrote there.

The output folder is replaced whole, so a build may replace only a folder that holds nothing but what
an earlier build wrote: a user's `CNAME`, a clone's `.git/` or a thesis dropped beside the pages would
be lost. A name alone proves nothing (an empty file, a folder or a link can carry it), so the marker is
a regular file holding the sorted list of the site's files and a checksum of that list: `listed_files`
reads it back only when it verifies, and `foreign_entries` names whatever the folder holds beyond it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path

MARKER = ".coursegen-site"
FORMAT = "coursegen-site 1"
NOTE = (
    "coursegen wrote this folder and replaces it whole on every build. It lists every file it wrote: "
    "the next build refuses the folder if it holds anything else."
)
# What coursegen 0.1's marker held: it listed nothing, so what its folder holds cannot be told apart.
OLD_MARKER_TEXT = b"coursegen wrote this folder and replaces it whole on every build: keep nothing else in it.\n"
MAX_MARKER_BYTES = 64 << 20  # about a million files' names; a larger one was not written by a build
MAX_NAMED = 10  # entries named in a message; the rest are counted


class UnverifiedMarker(Exception):
    """The folder's marker is not one a build wrote (or cannot be read): the folder is not known to be ours."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message, self.hint = message, hint


def marker_bytes(paths: Iterable[str]) -> bytes:
    """Return the marker of a site whose files are `paths`: JSON, one file a line (deterministic: sorted,
    ASCII, fixed key order)."""
    files = sorted(set(paths))
    listing = _listing(files)
    head = json.dumps({"format": FORMAT, "note": NOTE, "sha256": _hash(listing)}, indent=1, ensure_ascii=True)
    # The C encoder, then a line per file: json.dumps(files, indent=1) takes 4 ms for 2,700 files, this
    # 0.3. Inside an encoded name every '"' is escaped, so '","' occurs only between two names.
    body = "[\n  " + listing[1:-1].replace('","', '",\n  "') + "\n ]" if files else "[]"
    return f'{head[:-2]},\n "files": {body}\n}}\n'.encode("ascii")


def _listing(files: list[str]) -> str:
    return json.dumps(files, ensure_ascii=True, separators=(",", ":"))


def _hash(listing: str) -> str:
    return hashlib.sha256(listing.encode("ascii")).hexdigest()


def listed_files(site: Path) -> set[str] | None:
    """Return the files the marker of `site` lists, or None when it has no marker.

    Raises UnverifiedMarker for a marker that is a link, a folder or any other non-regular file, one
    that is empty, too large, unreadable, or whose format or checksum does not verify.
    """
    path = site / MARKER
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as err:
        raise _unverified(f"cannot be read ({err.strerror})") from None
    if not stat.S_ISREG(mode):
        kind = "a link" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode) else "a FIFO, socket or device"
        raise _unverified(f"is {kind}, not the file a build writes")
    data = _read(path)
    if data == OLD_MARKER_TEXT:
        raise UnverifiedMarker(
            f"the output folder's marker '{MARKER}' is an earlier coursegen's, which does not list the files it wrote",
            "if nothing in the folder is yours, delete the folder and build again; the new marker lists every file",
        )
    files = _verified(data)
    if files is None:
        raise _unverified("is not one a build wrote: its list of files does not verify")
    return set(files)


def _read(path: Path) -> bytes:
    """Return the marker's bytes (opened without following a link or waiting on a FIFO put there since)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise _unverified(f"cannot be read ({err.strerror})") from None
    with os.fdopen(fd, "rb") as file:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise _unverified("is not a regular file")
        if opened.st_size > MAX_MARKER_BYTES:
            raise _unverified("is too large to be a build's")
        try:
            data = file.read(MAX_MARKER_BYTES + 1)
        except OSError as err:
            raise _unverified(f"cannot be read ({err.strerror})") from None
    if not data:
        raise _unverified("is empty")
    return data


def _verified(data: bytes) -> list[str] | None:
    """Return the marker's list of files when its format and checksum hold, else None."""
    try:
        record = json.loads(data)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past any marker's depth
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        return None
    files = record.get("files")
    if not isinstance(files, list) or not all(isinstance(name, str) for name in files):
        return None
    return files if record.get("sha256") == _hash(_listing(files)) else None


def _unverified(what: str) -> UnverifiedMarker:
    return UnverifiedMarker(
        f"the output folder's marker '{MARKER}' {what}, so the folder is not known to hold only what coursegen wrote",
        "if nothing in the folder is yours, delete the folder and build again; else choose an empty or new "
        "folder with --out",
    )


def foreign_entries(site: Path, listed: set[str]) -> list[str]:
    """Return what `site` holds beyond the marker and the files `listed` (folders as `name/`, not entered),
    in a stable order. A listed path that is now a link or a folder is not the build's file either."""
    folders = {rel.rpartition("/")[0] for rel in listed}
    folders |= {up for folder in folders for up in _parents(folder)}
    found: list[str] = []
    _walk(site, "", listed, folders, found)
    return sorted(found)


def _parents(folder: str) -> list[str]:
    parts = folder.split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts))]


def _walk(folder: Path | str, prefix: str, listed: set[str], folders: set[str], found: list[str]) -> None:
    with os.scandir(folder) as listing:  # the entries know their type: no system call per file
        entries = list(listing)
    for entry in entries:
        rel = prefix + entry.name
        if rel == MARKER:
            continue
        if entry.is_dir(follow_symlinks=False):
            if rel in folders:
                _walk(entry.path, rel + "/", listed, folders, found)
            else:
                found.append(rel + "/")
        elif rel not in listed or not entry.is_file(follow_symlinks=False):
            found.append(rel)


def named(entries: list[str]) -> str:
    """Return `entries` quoted for a message: the first MAX_NAMED, then how many more."""
    shown = ", ".join(repr(entry) for entry in entries[:MAX_NAMED])
    rest = len(entries) - MAX_NAMED
    return shown + (f", and {rest} more" if rest > 0 else "")
