"""Write stage: the only code that writes to disk. Builds into a temporary folder, then swaps.

The output folder is replaced whole, so it must be one that coursegen made: `check_output_folder`
refuses the course itself, a folder holding it, one inside a source folder and one holding files
coursegen did not write, before anything is built. Each site carries MARKER, which lists every file
the build wrote (site_marker.py): a folder holding anything else is not replaced.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import secrets
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from stat import S_ISREG

from coursegen import file_lock
from coursegen.errors import ContentError, Problem
from coursegen.paths import COURSE_INPUTS, climbs_out
from coursegen.stages.site_marker import MARKER, UnverifiedMarker, foreign_entries, listed_files, marker_bytes, named

# The site is for a web server to read: files 0644 and folders 0755 whatever the umask (077 would make
# them 0600, which a server running as another user cannot read).
FILE_MODE, FOLDER_MODE = 0o644, 0o755

# MARKER is written into every site (not one of the build's outputs, so no page, list or count names
# it): like Sphinx's .buildinfo it says who owns the folder, and it lists what the build wrote there.
# Folders of a course the build reads besides COURSE_INPUTS, and what no build may ever replace.
OTHER_SOURCES = ("extensions", ".git", ".coursegen-cache", "node_modules")


def check_output_folder(site: Path, root: Path) -> list[Problem]:
    """Return why `site` cannot be the output folder of the course at `root` (nothing when it can).

    `site` itself may be a symbolic link: the build replaces the link and leaves its target alone.
    """
    shown = str(site)
    site = _absolute(site)
    root = root.resolve()
    hint = "build into a folder of its own, e.g. the default site/ (--out site) or one outside the course"
    if site == root:
        return [Problem(shown, 0, 0, "the output folder is the course itself: building would delete it", hint)]
    if root.is_relative_to(site):
        return [Problem(shown, 0, 0, f"the output folder holds the course ({root}): building would delete it", hint)]
    for name in COURSE_INPUTS + OTHER_SOURCES:
        source = root / name
        if site.is_relative_to(source) or (source.is_symlink() and site.is_relative_to(source.resolve())):
            what = "the course's own file" if source.is_file() else "the course's source folder"
            return [Problem(shown, 0, 0, f"the output folder lies inside {what} '{name}'", hint)]
    return _foreign_contents(site, shown)


def _foreign_contents(site: Path, shown: str) -> list[Problem]:
    """Return a problem when `site` holds anything its marker does not list, or a marker that does not
    verify (a new folder, an empty one and a link to be replaced are fine)."""
    if site.is_symlink() or not os.path.lexists(site):
        return []
    if not site.is_dir():
        return [Problem(shown, 0, 0, "the output folder is a file", "remove it, or choose another folder with --out")]
    try:
        with os.scandir(site) as listing:
            if next(listing, None) is None:
                return []
        listed = listed_files(site)
        foreign = foreign_entries(site, listed or set())
    except UnverifiedMarker as unverified:
        return [Problem(shown, 0, 0, unverified.message, unverified.hint)]
    except OSError as err:
        return [Problem(shown, 0, 0, f"cannot read the output folder: {err.strerror}")]
    if not foreign:
        return []
    message = f"the output folder holds files coursegen did not write ({named(foreign)}); building would delete them"
    hint = (
        f"the build replaces the folder whole and keeps only the files its '{MARKER}' lists: "
        if listed is not None
        else f"this folder has no '{MARKER}', the list every site of coursegen carries: "
    )
    return [
        Problem(shown, 0, 0, message, hint + "move what you keep elsewhere first, or choose another folder with --out")
    ]


def write_site(outputs: dict[str, bytes], site: Path, root: Path | None = None, keep=()) -> None:
    """Replace `site` with exactly `outputs` (and MARKER, which lists them and `keep`); on any failure the
    previous site stays as it was.

    `keep` names files of the current `site` that go into the new one as they are (the caller knows
    their bytes are this build's: see unchanged_files); they are hard-linked into the staging
    folder (copied where a link cannot be made) instead of written again.

    With `root`, the course's folder, `site` is checked first (check_output_folder). A folder that
    holds files coursegen did not write is refused either way. Raises ContentError for a folder it
    refuses and for one it cannot write (read-only, a full disk), with nothing changed.

    A `site` that is a symbolic link is replaced by a folder; what it pointed to is left alone
    (a course that ships `site -> ~` must not have the build swap out the home folder).
    """
    shown = str(site)
    refused = check_output_folder(site, root) if root is not None else _foreign_contents(_absolute(site), shown)
    if refused:
        raise ContentError(refused)
    site = _absolute(site)
    try:
        _replace(outputs, site, tuple(keep) if site.is_dir() and not site.is_symlink() else ())
    except OSError as err:
        where = f" ({err.filename})" if err.filename else ""
        raise ContentError(
            [
                Problem(
                    shown,
                    0,
                    0,
                    f"cannot write the site: {err.strerror or err}{where}; the previous site is unchanged",
                    "free some space or make the folder writable, or build elsewhere with --out DIR",
                )
            ]
        ) from None


def _absolute(site: Path) -> Path:
    """`site` made absolute with its parent's links followed, the last name kept (it may be a link)."""
    site = Path(os.path.abspath(site))
    return site.parent.resolve() / site.name if site.name else site


def _replace(outputs: dict[str, bytes], site: Path, keep: tuple[str, ...] = ()) -> None:
    """Write `outputs` (and link `keep` from `site`) into a staging folder beside `site`, then swap it in."""
    check_site_paths({**outputs, **dict.fromkeys(keep, b"")})
    build = f"{os.getpid()}-{secrets.token_hex(4)}"  # unique across pid namespaces too
    staging = site.with_name(f".{site.name}.staging-{build}")
    retired = site.with_name(f".{site.name}.retired-{build}")
    site.parent.mkdir(parents=True, exist_ok=True)  # `--out` may name folders that do not exist yet
    lock = file_lock.hold(site.with_name(f".{site.name}.lock-{build}"))  # held while staging or retired exists
    try:
        remove_leftovers(site)
        _write_and_swap(outputs, site, keep, staging, retired)
    finally:
        site.with_name(f".{site.name}.lock-{build}").unlink(missing_ok=True)
        os.close(lock)


def _write_and_swap(outputs: dict[str, bytes], site: Path, keep: tuple[str, ...], staging: Path, retired: Path) -> None:
    """Write the new site into `staging` and swap it with `site` (through `retired` where needs be)."""
    try:
        for folder in [staging, *(staging / up for up in site_folders((*outputs, *keep)))]:
            folder.mkdir(parents=True, exist_ok=True)  # each folder once, not per file (the site's own parent too)
            folder.chmod(FOLDER_MODE)
        for rel in keep:
            _carry(site / rel, staging / rel)
        write_files(staging, {**outputs, MARKER: marker_bytes([*outputs, *keep])})
        if not os.path.lexists(site):
            staging.rename(site)
        elif exchange(staging, site):  # one step: site/ is never missing, and staging now holds the old site
            pass
        else:  # two steps; a build killed between them has its retired copy put back by the next one
            site.rename(retired)
            staging.rename(site)
    finally:
        _remove(staging)
        _remove(retired)


def site_folders(paths) -> list[str]:
    """Return every folder that site `paths` lie in (each once, parents first), by string: thousands of
    paths, most at the top, made into path objects would cost a build about 0.2 s."""
    found: set[str] = set()
    for rel in paths:
        folder = rel.rpartition("/")[0]
        while folder and folder not in found:
            found.add(folder)
            folder = folder.rpartition("/")[0]
    return sorted(found)


def exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths atomically (Linux's renameat2 with RENAME_EXCHANGE); return False where the
    system or the file system cannot, so the caller falls back to two renames."""
    if not sys.platform.startswith("linux"):
        return False
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)  # glibc 2.28 and later
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _remove(path: Path) -> None:
    if path.is_symlink():
        path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def check_site_paths(outputs: dict[str, bytes]) -> None:
    """Raise ValueError, before anything is written, when a site path would land outside the site.

    Site paths come from code, not from authors, so one like this is a bug; it must write nothing.
    """
    escaping = [rel for rel in outputs if not rel or climbs_out(rel)]
    if escaping:
        raise ValueError(f"site paths outside the site: {escaping[:3]}")


def remove_leftovers(site: Path) -> None:
    """Clean up after builds that were killed mid-swap: a site left missing between the two renames gets
    its retired copy back, and every other staging or retired folder is deleted.

    A build is dead when no process holds its lock (file_lock: a pid cannot tell, across pid namespaces);
    the lock is taken before its folders are made and let go after they are gone, so a folder without
    one (or an older coursegen's, named by pid alone) is a dead build's too."""
    pattern = re.compile(rf"^\.{re.escape(site.name)}\.(?:staging|retired)-(\d+(?:-[0-9a-f]+)?)$")
    taken: dict[str, int | None] = {}  # build → the descriptor of its lock, taken for as long as we clean
    try:
        dead = []
        for entry in sorted(site.parent.glob(f".{site.name}.*-*")):
            match = pattern.match(entry.name)
            if not match or not entry.is_dir() or entry.is_symlink():
                continue
            build = match.group(1)
            lock = site.with_name(f".{site.name}.lock-{build}")
            if build not in taken:
                taken[build] = file_lock.take_if_free(lock) if os.path.lexists(lock) else None
                if taken[build] is None and os.path.lexists(lock):
                    continue  # held: that build is writing
            dead.append(entry)
        orphan = re.compile(rf"^\.{re.escape(site.name)}\.lock-(\d+-[0-9a-f]+)$")  # its folders gone, itself not
        for entry in sorted(site.parent.glob(f".{site.name}.lock-*")):
            if (match := orphan.match(entry.name)) and match.group(1) not in taken:
                taken[match.group(1)] = file_lock.take_if_free(entry)
        retired = [entry for entry in dead if ".retired-" in entry.name]
        if retired and not os.path.lexists(site):
            newest = max(retired, key=lambda entry: entry.stat().st_mtime_ns)
            newest.rename(site)
            dead.remove(newest)
        for entry in dead:
            shutil.rmtree(entry, ignore_errors=True)
    finally:
        for build, fd in taken.items():
            if fd is not None:
                site.with_name(f".{site.name}.lock-{build}").unlink(missing_ok=True)
                os.close(fd)


WRITERS = 2  # threads writing a new site's files
MIN_THREADED = 64  # files: below this, starting the threads costs more than they save


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    """Write `files` (site path → bytes) into `folder`, whose folders exist, in WRITERS threads.

    Creating and filling a file is mostly the kernel's work, done with the GIL released, so two
    threads write a large site in about half the time of one (0.12 s against 0.25 s for the 2,000
    lessons' 2,684 files here), and more where the disk is slow.
    """
    prefix = f"{folder}{os.sep}"
    jobs = [(prefix + rel, data) for rel, data in files.items()]
    if len(jobs) < MIN_THREADED:
        _write_all(jobs)
        return
    with ThreadPoolExecutor(WRITERS) as pool:  # interleaved: the large pages are spread over both
        for done in [pool.submit(_write_all, jobs[start::WRITERS]) for start in range(WRITERS)]:
            done.result()  # the first failure (a full disk, a read-only folder) is raised here


def _write_all(jobs: list[tuple[str, bytes]]) -> None:
    for target, data in jobs:
        _write_file(target, data)


def _write_file(target: str | Path, data: bytes) -> None:
    """Write one file, FILE_MODE whatever the umask (one open and one write, no path looked up twice)."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
    try:
        view = memoryview(data)
        while view:  # one call but for files of gigabytes, which the system writes in parts
            view = view[os.write(fd, view) :]
        os.fchmod(fd, FILE_MODE)  # the umask may have taken bits off
    finally:
        os.close(fd)


def _carry(previous: Path, target: Path) -> None:
    """Put the previous site's file into the new one: a hard link (a directory entry, about a fifth of
    the cost of writing a page), or a copy where the file system cannot link."""
    try:
        os.link(previous, target, follow_symlinks=False)
    except OSError as err:
        if err.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        shutil.copyfile(previous, target, follow_symlinks=False)
        target.chmod(FILE_MODE)


def unchanged_files(outputs: dict[str, bytes], site: Path) -> list[str]:
    """Return the files of `outputs` whose file in `site`, a site coursegen wrote, holds the same bytes:
    linking one costs about a fifth of writing it, and most files of a rebuild are as they were (the
    unit pages, and the search index's hundreds of small files)."""
    site = _absolute(site)
    if site.is_symlink() or not (site / MARKER).is_file():
        return []
    same = []
    for rel, data in outputs.items():
        try:
            stat = os.stat(site / rel, follow_symlinks=False)
            if S_ISREG(stat.st_mode) and stat.st_size == len(data) and (site / rel).read_bytes() == data:
                same.append(rel)
        except OSError:
            continue
    return same


def update_site(outputs: dict[str, bytes], previous: dict[str, bytes], site: Path) -> list[str]:
    """Write only the files that changed since `previous` and delete vanished ones; return the paths of both.

    When files come or go, MARKER lists both sets while they are written, then only `outputs`: a serve
    killed in between leaves a folder the next build still knows as its own."""
    changed = [rel for rel, data in outputs.items() if previous.get(rel) != data]
    check_site_paths({rel: outputs[rel] for rel in changed})  # the others were checked when first written
    moved = outputs.keys() != previous.keys()
    if moved:
        _replace_file(site / MARKER, marker_bytes(outputs.keys() | previous.keys()))
    for rel in changed:
        for up in reversed(PurePosixPath(rel).parents):
            if not (site / up).is_dir():
                (site / up).mkdir()
                (site / up).chmod(FOLDER_MODE)
        _replace_file(site / rel, outputs[rel])
    gone = sorted(previous.keys() - outputs.keys())
    for rel in gone:
        (site / rel).unlink(missing_ok=True)
    for folder in reversed(site_folders(gone)):  # deepest first: a folder left empty is no longer the build's
        with contextlib.suppress(OSError):  # not empty: other files of the site are still in it
            (site / folder).rmdir()
    if moved:
        _replace_file(site / MARKER, marker_bytes(outputs))
    return changed + gone


def _replace_file(target: Path, data: bytes) -> None:
    """Write `target` whole under another name, then rename it into place (a reader never sees half)."""
    tmp = target.with_name(target.name + ".tmp")
    _write_file(tmp, data)
    tmp.replace(target)
