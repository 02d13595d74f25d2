"""Write stage: the only code that writes to disk. Builds into a temporary folder, then swaps."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path, PurePosixPath

from coursegen.paths import climbs_out

# The site is for a web server to read: files 0644 and folders 0755 whatever the umask (077 would make
# them 0600, which a server running as another user cannot read).
FILE_MODE, FOLDER_MODE = 0o644, 0o755


def write_site(outputs: dict[str, bytes], site: Path) -> None:
    """Replace `site` with exactly `outputs`; on any failure the previous site stays as it was.

    A `site` that is a symbolic link is replaced by a folder; what it pointed to is left alone
    (a course that ships `site -> ~` must not have the build swap out the home folder).
    """
    site = site.parent.resolve() / site.name
    staging = site.with_name(f".{site.name}.staging-{os.getpid()}")
    retired = site.with_name(f".{site.name}.retired-{os.getpid()}")
    check_site_paths(outputs)
    remove_leftovers(site)
    shutil.rmtree(staging, ignore_errors=True)
    try:
        for folder in sorted({staging / up for rel in outputs for up in PurePosixPath(rel).parents}):
            folder.mkdir(parents=True, exist_ok=True)  # each folder once, not per file (the site's own parent too)
            folder.chmod(FOLDER_MODE)
        for rel, data in outputs.items():
            _write_file(staging / rel, data)
        if site.exists() or site.is_symlink():
            site.rename(retired)
        staging.rename(site)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if retired.is_symlink():
            retired.unlink()
        shutil.rmtree(retired, ignore_errors=True)


def check_site_paths(outputs: dict[str, bytes]) -> None:
    """Raise ValueError, before anything is written, when a site path would land outside the site.

    Site paths come from code, not from authors, so one like this is a bug; it must write nothing.
    """
    escaping = [rel for rel in outputs if not rel or climbs_out(rel)]
    if escaping:
        raise ValueError(f"site paths outside the site: {escaping[:3]}")


def remove_leftovers(site: Path) -> None:
    """Delete the staging and retired folders of builds that were killed mid-swap (their process is gone)."""
    pattern = re.compile(rf"^\.{re.escape(site.name)}\.(?:staging|retired)-(\d+)$")
    for entry in site.parent.glob(f".{site.name}.*-*"):
        match = pattern.match(entry.name)
        if match and entry.is_dir() and not entry.is_symlink() and not _running(int(match.group(1))):
            shutil.rmtree(entry, ignore_errors=True)


def _running(pid: int) -> bool:
    """Return whether a process `pid` (other than this one) is alive: its build may still be writing."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _write_file(target: Path, data: bytes) -> None:
    target.write_bytes(data)
    target.chmod(FILE_MODE)


def update_site(outputs: dict[str, bytes], previous: dict[str, bytes], site: Path) -> list[str]:
    """Write only the files that changed since `previous` and delete vanished ones; return changed paths."""
    check_site_paths(outputs)
    changed = [rel for rel, data in outputs.items() if previous.get(rel) != data]
    for rel in changed:
        target = site / rel
        for up in reversed(PurePosixPath(rel).parents):
            if not (site / up).is_dir():
                (site / up).mkdir()
                (site / up).chmod(FOLDER_MODE)
        tmp = target.with_name(target.name + ".tmp")
        _write_file(tmp, outputs[rel])
        tmp.replace(target)
    for rel in set(previous) - set(outputs):
        (site / rel).unlink(missing_ok=True)
    return changed
