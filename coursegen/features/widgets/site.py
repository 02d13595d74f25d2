"""What live widgets need in the site: the course package's wheel, Pyodide (copied or from the CDN) and its SRI.

The course's own Python package reaches the browser as a pure-Python wheel written with zipfile (see
write_wheel): sorted entries, fixed timestamps and permissions, so two builds give the same bytes. Its
file name stays a valid wheel name for `pyodide.loadPackage`; the content hash goes in the folder.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import stat
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from coursegen.memo import Memo, remembered
from coursegen.stages.config import PyodideConfig
from coursegen.stages.assets import file_stamps
from coursegen.theme import messages

PACKAGE_VERSION = "0.1.0"  # the course package's wheel: a fixed version, its content hash is in the folder
CDN = "https://cdn.jsdelivr.net/pyodide/v{version}/full/"
LOCAL_DIR = "pyodide/"
LOADER = "pyodide.mjs"  # the ES-module loader: Pyodide runs only in module workers
LOCK = "pyodide-lock.json"  # the distribution's list of packages: file names, sha256, dependencies
WORKER_VERSION = PyodideConfig.version  # the release whose layout the widget worker loads (the pinned default)
RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", LOCK)
ZIP_EPOCH = 315532800  # 1980-01-01, the earliest time a zip entry can hold
ZIP_LATEST = 4354819199  # 2107-12-31T23:59:59Z, the latest one
WHEEL_FILE_MODE = stat.S_IFREG | 0o664  # each entry's permissions, whatever the checkout's


@dataclass(frozen=True)
class PyodideSite:
    """Where the worker finds Pyodide: its base URL, the loader's SRI, the files to copy (local only),
    and the widgets' Pyodide packages a local copy cannot serve (name → why), which live Python then skips."""

    index_url: str
    integrity: str
    files: dict  # site path → source Path
    missing: dict = field(default_factory=dict)


class Reason(str):
    """Why a self-hosted Pyodide cannot serve a package: the English text (the build's own messages say
    it so), carrying its catalogue key and values, so that a page says it in the course's language."""

    key: str
    values: dict

    def __new__(cls, text: str, key: str, values: dict):
        reason = super().__new__(cls, text)
        reason.key, reason.values = key, values
        return reason

    @classmethod
    def said(cls, english: dict[str, str], key: str, **values) -> Reason:
        """Return the reason `key` with its `values`, its text from the `english` catalogue."""
        return cls(messages.say(english, key, **values), key, values)

    def __reduce__(self):  # kept in the memo and .coursegen-cache/: the text travels with its key and values
        return Reason, (str(self), self.key, self.values)

    def said_in(self, catalogue: dict[str, str]) -> str:
        """Return the reason in the language of `catalogue` (a course's messages)."""
        return messages.say(catalogue, self.key, **self.values) if self.key in catalogue else str(self)


def said_in(missing: dict, catalogue: dict[str, str]) -> dict[str, str]:
    """Return package → why, each reason in the language of `catalogue` (what a page shows)."""
    return {name: why.said_in(catalogue) for name, why in missing.items()}


class SiteError(Exception):
    """A live-widget setting in course.yaml that cannot work, with a hint."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.message, self.hint = message, hint


def wheel_name(package: str) -> str:
    """Return the file name of the course package's wheel (a valid name for `pyodide.loadPackage`)."""
    return f"{package}-{PACKAGE_VERSION}-py3-none-any.whl"


def package_wheel(root: Path, package: str = "kernels", memo: Memo | None = None) -> tuple[str, bytes]:
    """Return (site path, bytes) of the deterministic wheel holding the course's own package."""
    files = sorted(p for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts)
    key = (root, package, file_stamps(files), os.environ.get("SOURCE_DATE_EPOCH"))
    return remembered(memo, "package wheel", key, lambda: _wheel(*key))  # `serve`: zipped again when a package file changed


def _wheel(root: Path, package: str, stamps: tuple, epoch: str | None) -> tuple[str, bytes]:
    files = [p for p, _, _ in stamps]
    data = write_wheel(
        package, PACKAGE_VERSION, {p.relative_to(root).as_posix(): p.read_bytes() for p in files}, zip_time(epoch)
    )
    return f"py/{hashlib.sha256(data).hexdigest()[:12]}/{wheel_name(package)}", data


def write_wheel(package: str, version: str, files: dict[str, bytes], date_time: tuple) -> bytes:
    """Return the bytes of a pure-Python wheel (PEP 427) holding `files` (archive name → bytes).

    The entries (the files, the dist-info's METADATA and WHEEL) come sorted and RECORD last, each
    with the same time and permissions, so the same files give the same bytes.
    RECORD lists every other entry with its urlsafe-base64 sha256 and size; its own line is empty.
    """
    info = f"{package}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\nSummary: The course's own Python package\n"
    wheel_meta = "Wheel-Version: 1.0\nGenerator: coursegen\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries = sorted([*files.items(), (f"{info}/METADATA", metadata.encode()), (f"{info}/WHEEL", wheel_meta.encode())])
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        writer.writerow((name, f"sha256={digest}", len(data)))
    writer.writerow((f"{info}/RECORD", "", ""))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in [*entries, (f"{info}/RECORD", record.getvalue().encode())]:
            entry = zipfile.ZipInfo(name, date_time=date_time)
            entry.compress_type, entry.external_attr = zipfile.ZIP_DEFLATED, WHEEL_FILE_MODE << 16
            wheel.writestr(entry, data)
    return buffer.getvalue()


def zip_time(epoch: str | None) -> tuple:
    """Return the time every wheel entry carries: SOURCE_DATE_EPOCH's (a checked whole number, see
    pipeline.check_environment) within what a zip entry can hold, or 1980-01-01."""
    seconds = ZIP_EPOCH if epoch is None else min(max(int(epoch), ZIP_EPOCH), ZIP_LATEST)
    return time.gmtime(seconds)[:6]


def sri(data: bytes) -> str:
    """Return the Subresource Integrity value (sha384) of some bytes."""
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()


def pyodide_site(root: Path, settings, packages=(), memo: Memo | None = None) -> PyodideSite:
    """Return where Pyodide comes from for `settings` (course.yaml's pyodide), or raise SiteError.

    A self-hosted copy must be the pinned version in a layout the worker supports; it holds the runtime
    and `packages` (the widgets' Pyodide packages) with what they depend on, each checked against the
    sha256 of the lock file. Packages it lacks are listed in `missing` (the build warns about them)."""
    dist = root / settings.path
    if settings.source == "local":
        if not (dist / LOADER).is_file():
            fetch = (
                "run 'npm ci' to fetch the pinned npm package"
                if (root / "package.json").is_file()
                else f"in the course folder run 'npm install pyodide@{settings.version}' (Node's npm; "
                "nothing is downloaded during the build)"
            )
            raise SiteError(
                f"pyodide source is 'local' but '{settings.path}' holds no {LOADER}",
                f"{fetch}, or set pyodide.path to a Pyodide distribution",
            )
        return local_site(dist, settings, packages, memo)
    return PyodideSite(CDN.format(version=settings.version), cdn_integrity(dist, settings, memo), {})


def local_site(dist: Path, settings, packages, memo: Memo | None = None) -> PyodideSite:
    """Check a self-hosted distribution and return what to copy from it, and which packages it cannot serve."""
    check_layout(dist, settings)
    check_version(dist, settings)
    lock = read_lock(dist, settings)
    wanted, missing = package_files(lock, packages), {}

    def reason(key: str, **values) -> Reason:  # English read (kept in memo) only when a package is missing
        return Reason.said(messages.packaged_english(memo), key, **values)

    for name, file_name, sha256 in wanted:
        if not _plain(file_name):
            missing[name] = reason("live.reason_not_a_file", entry=repr(file_name))
        elif why := wheel_problem(dist / file_name, sha256, memo):
            missing[name] = reason(why, file=file_name)
    for name in packages:
        if name not in lock:
            missing[name] = reason("live.reason_not_listed", lock=LOCK, package=name)
        blockers = [dep for dep, _, _ in package_files(lock, [name]) if dep in missing and dep != name]
        if blockers and name not in missing:  # the widget needs it, so the page must know
            missing[name] = reason("live.reason_needs", packages=", ".join(blockers))
    files = {LOCAL_DIR + name: dist / name for name in RUNTIME_FILES}
    files.update({LOCAL_DIR + file_name: dist / file_name for name, file_name, _ in wanted if name not in missing})
    return PyodideSite(LOCAL_DIR, sri((dist / LOADER).read_bytes()), files, missing)


def read_lock(dist: Path, settings) -> dict:
    """Return the packages of the distribution's lock file (name → entry with a file_name), or raise SiteError."""
    try:
        packages = json.loads((dist / LOCK).read_text(encoding="utf-8"))["packages"]
        if all(
            isinstance(entry, dict)
            and isinstance(entry.get("file_name"), str)
            and isinstance(entry.get("depends", []), list)
            for entry in packages.values()
        ):
            return packages
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    raise SiteError(
        f"'{settings.path}/{LOCK}' is not a Pyodide lock file (JSON with a file_name for every package)",
        f"point pyodide.path at an unmodified Pyodide {settings.version} distribution",
    )


def _plain(name: str) -> bool:
    return "/" not in name and "\\" not in name and name not in ("", ".", "..")


def check_layout(dist: Path, settings) -> None:
    """Raise SiteError unless the distribution holds every runtime file the worker loads."""
    absent = [name for name in RUNTIME_FILES if not (dist / name).is_file()]
    if absent:
        older = (
            " (repodata.json and pyodide.asm.js belong to Pyodide before 0.23)"
            if (dist / "repodata.json").is_file()
            else ""
        )
        other = settings.version != WORKER_VERSION  # a pin the worker was not made for: say so, not "its layout"
        raise SiteError(
            f"the Pyodide distribution in '{settings.path}' lacks {', '.join(absent)}: "
            f"the widget worker loads Pyodide {WORKER_VERSION}'s layout{older}"
            + (f", and pyodide.version {settings.version} is another release" if other else ""),
            (f"set pyodide.version to {WORKER_VERSION} (or leave it out) and " if other else "")
            + f"point pyodide.path at a Pyodide {WORKER_VERSION} distribution (npm package "
            f"pyodide@{WORKER_VERSION}, or the release's full tarball)",
        )


def distribution_version(dist: Path, expected: str) -> str:
    """Return the version the distribution says it is: its package.json's, else its lock file's info, else
    `expected` when the loader holds that version as a string (it does, minified), else ""."""
    for name, keys in (("package.json", ("version",)), (LOCK, ("info", "version"))):
        try:
            value = json.loads((dist / name).read_text())
            for key in keys:
                value = value[key]
            return str(value)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return expected if f'"{expected}"'.encode() in (dist / LOADER).read_bytes() else ""


def check_version(dist: Path, settings) -> None:
    """Raise SiteError unless the distribution is the release course.yaml pins."""
    found = distribution_version(dist, settings.version)
    if found != settings.version:
        raise SiteError(
            f"the Pyodide distribution in '{settings.path}' is "
            f"{'version ' + found if found else 'of no stated version'}, "
            f"but pyodide.version is {settings.version}",
            version_hint(found),
        )


def version_hint(found: str) -> str:
    """Return what to do about a distribution of version `found` ("" when it states none): pin it only when
    it is the release the worker loads, else fetch that release (pinning another leads to the layout error)."""
    if found == WORKER_VERSION:
        return f"set pyodide.version to {found} (or leave it out)"
    return (
        f"the widget worker loads Pyodide {WORKER_VERSION}: point pyodide.path at that release "
        f"(npm package pyodide@{WORKER_VERSION}, or the release's full tarball)"
    )


def wheel_problem(path: Path, sha256: str, memo: Memo | None = None) -> str:
    """Return the catalogue key of what is wrong with one package file of the distribution ("" when it is
    there, intact)."""
    if not path.is_file():
        return "live.reason_absent"
    stat = path.stat()
    key = (path, stat.st_size, stat.st_mtime_ns)
    if sha256 and remembered(memo, "wheel sha256", key, lambda: _sha256(path)) != sha256:
        return "live.reason_sha256"
    return ""


def _sha256(path: Path) -> str:  # kept by size and time: `serve` hashes a wheel again when it changed
    return hashlib.sha256(path.read_bytes()).hexdigest()


def package_files(lock: dict, names) -> list[tuple[str, str, str]]:
    """Return (name, file name, sha256) of `names` and everything they depend on, per the lock's packages.

    A full distribution holds hundreds of packages; the site needs only what the widgets import.
    """
    todo, seen = list(names), set()
    while todo:
        name = todo.pop()
        if name in lock and name not in seen:
            seen.add(name)
            todo += lock[name].get("depends", [])
    return [(name, lock[name]["file_name"], lock[name].get("sha256", "")) for name in sorted(seen)]


def missing_hint(settings, missing: dict) -> str:
    """Say where each missing package comes from."""
    cdn = CDN.format(version=settings.version)
    return (
        f"copy each wheel into '{settings.path}' from the full Pyodide {settings.version} distribution "
        f"(the release tarball, or {cdn}<file name>), or set pyodide.path to a full distribution; "
        "until then live Python says it is not available on this site"
    )


# SRI of pyodide.mjs for the versions we pin, taken from the npm package of the same version, so
# a fresh clone builds for the CDN without `npm ci` (the npm file is the CDN file of that release).
KNOWN_INTEGRITY = {"314.0.7": "sha384-Lp79fMwxa4n2BLtugpUAoQMlbxIdg8iCUiP1r3h7nJLkQjwlXT1JzZTeHVL+f4Dg"}


def cdn_integrity(dist: Path, settings, memo: Memo | None = None) -> str:
    """Return pyodide.mjs's SRI: course.yaml's, else the npm copy's hash (kept in `memo` by the file's
    stamp: serve's rebuilds read it once), else the pinned table's."""
    if settings.integrity:
        return settings.integrity
    package = dist / "package.json"
    if not package.is_file() and settings.version in KNOWN_INTEGRITY:
        return KNOWN_INTEGRITY[settings.version]
    version = json.loads(package.read_text()).get("version") if package.is_file() else None
    if version != settings.version or not (dist / LOADER).is_file():
        found = f"found version {version}" if version else "found none"
        raise SiteError(
            f"cannot work out the SRI hash of Pyodide {settings.version}'s {LOADER} ({settings.path}: {found})",
            "set pyodide.integrity in course.yaml to the 'sha384-…' value of that file",
        )
    stamp = file_stamps([dist / LOADER])
    return remembered(memo, "pyodide integrity", stamp, lambda: sri((dist / LOADER).read_bytes()))
