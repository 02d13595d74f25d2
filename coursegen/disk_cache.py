"""What a command-line build keeps in `.coursegen-cache/` for the next one (serve keeps its memo in memory).

Two things, each in a file of its own, each used only when its header names this very coursegen
(its version, a hash of its own files and the versions of the libraries that shape pages):

- `site.pickle`, the last build's *inputs stamp* and what it wrote: when every file the build may
  read has the stamp it had (path, size, modification time, inode), the options are the same and
  the output folder still holds exactly the files that build wrote, nothing is built at all: the
  command prints what that build printed. Any change anywhere in the course builds again.
- `pages/NN.pickle`, the parsed pages (the memo's "page" table, keyed by each page's parse key): a
  build after a change parses again only the pages whose key changed, as `serve` does. The pages
  are kept only while the course's own Python outside its package and widgets/ (its extensions
  and what they import) holds the same bytes: that code can change how any page parses.
- `warm-up.pickle`, the modules installed outside the course (numpy, matplotlib.pyplot) that each
  page's code cells import, the limits and the input stamps: the next command starts the author-code
  worker and has it import those of the pages changed since, first thing (coursegen/warm_up.py, which
  reads it before the build is even imported). Only a hint, signed as the others are.
- `notebooks.pickle`, each notebook's lesson text (what `stages/notebook.py` makes of it, with its
  CellLines) by the SHA-256 of the notebook's text: the next command converts and validates again only
  the notebooks whose text changed (nbformat's import and validation of fifty unchanged notebooks
  were a third of a one-cell rebuild's work in this process). A notebook with any problem is not kept.
- `rendered.pickle`, each unit page's render key and where its bytes lie in the output folder
  (`incremental.WrittenPage`), while that file's stamp is the one it had when the build wrote it.
  The next build renders again only the pages whose render key changed, as `serve` does, and
  links the others into the new site unread (at 2,000 lessons the pages hold 650 MB, since each
  lists every unit: reading them back would take longer than the rest of the rebuild).

The cache only saves time. A missing, damaged, foreign or unreadable file is ignored and the build
is cold; one that cannot be written is skipped. Deleting the folder is always safe. It holds
pickles, so it is trusted as much as the course itself (whose extensions run as code anyway):
`coursegen init` git-ignores it, and CI restores it only from the same repository's earlier runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import importlib.metadata
import os
import pickle
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from stat import S_ISDIR

import coursegen
from coursegen import __version__, warm_up
from coursegen.cache import CACHE_FOLDER, cache_key, refused_cache_folder, signature, verified
from coursegen.course_code import IMPORTS
from coursegen.errors import ContentError
from coursegen.incremental import ParsedPage, WrittenPage
from coursegen.parallel import can_fork
from coursegen.pipeline import collector_paused
from coursegen.serve.reload import TRACKED
from coursegen.session import Session
from coursegen.stages.notebook import CellLines
from coursegen.stages.write import MARKER
from coursegen.theme import files as theme
from coursegen.warm_up import WARM_UP_FILE

FORMAT = 2  # raised whenever what the files hold changes shape
SITE_FILE, PAGES_FOLDER, RENDERED_FILE = "site.pickle", "pages", "rendered.pickle"
NOTEBOOKS_FILE = "notebooks.pickle"
COURSE_PAGES = ("index.html", "404.html")  # the rendered pages that are not a unit's (render._course_page)
SHARDS = 32  # files the parsed pages are spread over: an edit rewrites one of them, not all (65 MB at 2,000 lessons)
# Libraries whose version can change a page's bytes.
SHAPING = ("markdown-it-py", "mdit-py-plugins", "Jinja2", "MarkupSafe", "Pygments", "selectolax")
# Top-level names the build does not read: serve.watch's list (not imported: watchfiles would load with it).
NEVER_READ = ("node_modules", "site", "__pycache__", CACHE_FOLDER)


def coursegen_identity() -> str:
    """Return a hash of this coursegen: its version, every file of the package and the shaping libraries'
    versions (an edited coursegen in a source checkout is another coursegen)."""
    from coursegen.stages.render import CompiledTemplates  # its salt: Jinja's version and our settings

    found = hashlib.sha256(f"{FORMAT} {__version__} {sys.version}\n{CompiledTemplates.SALT}".encode())
    for name in SHAPING:
        try:
            found.update(f"{name} {importlib.metadata.version(name)}\n".encode())
        except importlib.metadata.PackageNotFoundError:
            found.update(f"{name} none\n".encode())
    package = Path(coursegen.__file__).parent
    for file in sorted(package.rglob("*")):
        if file.is_file() and "__pycache__" not in file.parts:
            found.update(f"{file.relative_to(package).as_posix()}\0".encode() + file.read_bytes())
    return found.hexdigest()


def input_stamps(root: Path, out: Path) -> dict[str, tuple]:
    """Return {path: (size, mtime ns, inode, ctime ns)} of every file a build of `root` may read: the course's
    top-level files and every non-hidden top-level folder but the output folder and NEVER_READ ones,
    the theme, and a self-hosted Pyodide under node_modules/pyodide; symbolic links followed."""
    stamps: dict[str, tuple] = {}
    skipped = {out.resolve()}
    tops = [Path(entry.path) for entry in _entries(root) if not entry.name.startswith(".")]
    folders = [path for path in tops if path.name not in NEVER_READ and not (path / "pyvenv.cfg").is_file()]
    folders += [root / "node_modules" / "pyodide", theme.packaged_theme()]
    seen: set[Path] = set()
    for path in folders:
        _stamp_tree(path, stamps, skipped, seen)
    return stamps


def _entries(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entries, key=lambda entry: entry.name)
    except OSError:
        return []


def _stamp_tree(path: Path, stamps: dict, skipped: set[Path], seen: set[Path]) -> None:
    """Add the stamps of `path` (a file, or a folder walked recursively) to `stamps`."""
    try:
        stat = path.stat()
    except (OSError, RuntimeError):
        stamps[str(path)] = ("missing",)
        return
    if not S_ISDIR(stat.st_mode):
        stamps[str(path)] = (stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns)
        return
    _stamp_folder(path, stat, stamps, skipped, seen)


def _stamp_folder(path: Path, stat: os.stat_result, stamps: dict, skipped: set[Path], seen: set[Path]) -> None:
    """Add the stamps of a folder and of everything under it (one stat per entry; links followed once)."""
    real = path.resolve()
    if real in skipped or real in seen:
        return
    seen.add(real)
    stamps[str(path)] = ("folder", stat.st_mtime_ns)  # a file added or removed changes it
    for entry in _entries(path):
        if entry.name == "__pycache__":
            continue
        try:
            found = entry.stat()  # follows a link, as the build's reads do
        except OSError:
            stamps[entry.path] = ("missing",)
            continue
        if S_ISDIR(found.st_mode):
            _stamp_folder(Path(entry.path), found, stamps, skipped, seen)
        else:
            stamps[entry.path] = (found.st_size, found.st_mtime_ns, found.st_ino, found.st_ctime_ns)


def site_stamps(out: Path, prefix: str = "") -> dict[str, tuple]:
    """Return {site path: (size, mtime ns, inode)} of every file in the output folder (links not followed)."""
    found: dict[str, tuple] = {}
    for entry in sorted(os.scandir(out), key=lambda entry: entry.name):
        if entry.is_dir(follow_symlinks=False):
            found.update(site_stamps(Path(entry.path), f"{prefix}{entry.name}/"))
        else:
            stat = entry.stat(follow_symlinks=False)
            found[prefix + entry.name] = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
    return found


@dataclasses.dataclass(frozen=True)
class Inputs:
    """What one command-line build started from: compared whole with the last build's."""

    identity: str
    options: tuple
    out: str
    stamps: dict


@dataclasses.dataclass(frozen=True)
class KeptSite:
    """What the last successful build wrote, and what it printed."""

    inputs: Inputs
    written: dict  # site_stamps(out) just after it wrote
    warnings: tuple[str, ...]
    summary: str
    pyodide: tuple = ()  # (folder, its stamps) of a Pyodide that course.yaml names in a folder not stamped above


def inputs(root: Path, out: Path, options: tuple) -> Inputs:
    """Return the stamp of this build's inputs (taken before it reads anything, so an edit made while
    it runs is seen by the next build)."""
    if refused := refused_cache_folder(root):  # before its files are read (and, after the build, written)
        raise ContentError(refused)
    out = Path(os.path.abspath(out))
    stamps = input_stamps(root, out)
    stamps["SOURCE_DATE_EPOCH"] = (os.environ.get("SOURCE_DATE_EPOCH"),)
    return Inputs(coursegen_identity(), options, str(out), stamps)


def unchanged_site(root: Path, now: Inputs) -> KeptSite | None:
    """Return the last build's record when its inputs equal `now` and its output folder is as it left it."""
    kept = _load(root / CACHE_FOLDER / SITE_FILE, now.identity)
    if not isinstance(kept, KeptSite) or kept.inputs != now or not _same_pyodide(kept.pyodide):
        return None
    try:
        same = site_stamps(Path(now.out)) == kept.written
    except OSError:
        return None
    return kept if same else None


def _pyodide(root: Path, session: Session, now: Inputs) -> tuple:
    """Return (folder, stamps) of the Pyodide folder course.yaml names, when no input stamp covers it."""
    config = session.config
    folder = root / config.pyodide.path if config is not None and config.pyodide.path else None
    if folder is None or not folder.is_dir() or str(folder) in now.stamps:
        return ()
    stamps: dict = {}
    _stamp_tree(folder, stamps, set(), set())
    return (str(folder), stamps)


def _same_pyodide(kept: tuple) -> bool:
    if not kept:
        return True
    stamps: dict = {}
    _stamp_tree(Path(kept[0]), stamps, set(), set())
    return stamps == kept[1]


def previous_site(kept: KeptSite) -> list[str]:
    """Return the files of the output folder that make the same site again (write_site's `keep`: linked
    into a new folder as they are; its stamps were checked by unchanged_site)."""
    return [path for path in kept.written if path != MARKER]


def written_stamps(now: Inputs) -> dict[str, tuple] | None:
    """Return site_stamps of the output folder just written (None when it cannot be listed)."""
    try:
        return site_stamps(Path(now.out))
    except OSError:
        return None


def remember_site(
    root: Path, now: Inputs, warnings: list[str], summary: str, session: Session | None = None, written=None
) -> None:
    """Record a successful build's inputs and what it wrote (call right after writing; `written`, its
    written_stamps, when already taken); `session`, the build's, names the Pyodide folder it read (a
    level-one rebuild passes None and keeps the last record's)."""
    try:
        kept = KeptSite(now, written if written is not None else site_stamps(Path(now.out)), tuple(warnings), summary)
        if session is not None:
            kept = dataclasses.replace(kept, pyodide=_pyodide(root, session, now))
        else:
            last = _load(root / CACHE_FOLDER / SITE_FILE, now.identity)
            kept = dataclasses.replace(kept, pyodide=last.pyodide if isinstance(last, KeptSite) else ())
    except OSError:
        return
    _save(root / CACHE_FOLDER / SITE_FILE, now.identity, kept)


def course_code(root: Path, now: Inputs, package: str) -> str:
    """Return a hash of the course's own Python that the stages do not track themselves (its extensions and
    the modules they import, not its package or widgets/: serve's rule, coursegen.serve.reload), by
    content so that a fresh checkout in CI matches: a change there may change how any page parses."""
    found = hashlib.sha256()
    engine = Path(coursegen.__file__).parent
    for path in sorted(path for path in now.stamps if path.endswith(".py")):
        try:
            shown = Path(path).relative_to(root).as_posix()
        except ValueError:  # the theme, outside the course: in the identity or the stamps
            continue
        if shown.partition("/")[0] not in (*TRACKED, package) and not Path(path).is_relative_to(engine):
            with contextlib.suppress(OSError):
                found.update(f"{shown}\0".encode() + Path(path).read_bytes())
    return found.hexdigest()


def shard_of(path: str) -> int:
    """Return which file of PAGES_FOLDER keeps the page of source `path` (the same on every machine)."""
    return zlib.crc32(path.encode()) % SHARDS


def shard_file(root: Path, shard: int) -> Path:
    return root / CACHE_FOLDER / PAGES_FOLDER / f"{shard:02d}.pickle"


def load_pages(root: Path, session: Session, now: Inputs) -> None:
    """Put the pages the last build kept into the session memo's "page" table (each reused only if its
    parse key still matches), from every shard written with the course's extensions as they are."""
    code: str | None = None
    restored: set[str] = set()
    for shard in range(SHARDS):
        kept = _load(shard_file(root, shard), now.identity)
        if not (isinstance(kept, tuple) and len(kept) == 3 and isinstance(kept[0], str) and isinstance(kept[2], dict)):
            continue
        package, made_by, pages = kept
        if code is None:
            code = course_code(root, now, package)
        if made_by != code or not all(isinstance(entry, ParsedPage) for entry in pages.values()):
            continue
        for path, entry in pages.items():
            if shard_of(path) == shard:
                session.memo.put("page", path, entry)
                restored.add(path)
    session.pages_restored = bool(restored)  # parsed by this coursegen with this course's code (see parse.parser)
    session.pages_on_disk = frozenset(restored)


def save_pages(root: Path, session: Session, now: Inputs) -> None:
    """Keep the session's parsed pages for the next command: rewrite only the shards that hold a page
    parsed again, or a page that came or went."""
    parse = session.records.parse
    pages = session.memo.table("page")
    if parse is None:
        return
    touched = {shard_of(path) for path in (*parse.parsed, *(session.pages_on_disk ^ pages.keys()))}
    config = session.config
    package = config.python.package if config is not None else "kernels"
    code = course_code(root, now, package)
    for shard in range(SHARDS):
        if shard in touched or not shard_file(root, shard).is_file():
            held = {path: entry for path, entry in pages.items() if shard_of(path) == shard}
            _save(shard_file(root, shard), now.identity, (package, code, held))
    session.pages_on_disk = frozenset(pages)


def save_pages_aside(root: Path, session: Session, now: Inputs) -> Callable[[], None]:
    """Start save_pages in a fork of this process, which the caller goes on beside; return the
    function that waits for it to end (call it before the command ends, so the next one finds the
    pages). Where forking is not safe (other threads run), the pages are saved here and now.

    Pickling the pages takes 0.2 to 0.4 s at 2,000 lessons, about as long as writing the site, and
    the two are independent: a fork does the first on the second core while this process writes.
    The fork shares this process's memory until either writes to it, so it costs a few milliseconds.
    """
    if not can_fork():
        save_pages(root, session, now)
        return lambda: None
    for stream in (sys.stdout, sys.stderr):  # or the fork would print this process's buffered text again
        stream.flush()
    pid = os.fork()
    if pid == 0:  # the fork: save, and leave without running anything of the build's
        gc.disable()  # a collection would touch, and so copy, every page of the parent's memory
        status = 1
        try:
            save_pages(root, session, now)
            status = 0
        finally:
            os._exit(status)
    session.pages_on_disk = frozenset(session.memo.table("page"))  # what the fork saves

    def wait() -> None:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)  # a fork that failed saved less: the next build parses more, nothing worse

    return wait


def save_rendered(root: Path, session: Session, now: Inputs, written: dict[str, tuple] | None) -> None:
    """Keep where each page the session rendered, or carried over unread, lies in the site just written
    (`written`: its written_stamps), with its render key, for the next command; skipped when the last
    build rendered nothing again."""
    record = session.records.render
    file = root / CACHE_FOLDER / RENDERED_FILE
    if record is None or record.course is None or written is None or (not record.rerendered and file.is_file()):
        return
    site = Path(now.out)
    rendered, filled, carried = (session.memo.table(kind) for kind in ("rendered", "filled", "written"))
    kept = {}
    names = {unit.slug: unit.url for unit in record.course.written} | {page: page for page in COURSE_PAGES}
    for name, site_path in names.items():
        assert site_path is not None  # a written unit has its page
        page, fill = rendered.get(name), filled.get(name)
        if page is not None and page.key is not None and fill is not None and fill.parts is page.parts:
            lengths = tuple(len(part) for part in page.parts[0::2])
            entry = WrittenPage(site / site_path, site_path, page.key, tuple(page.parts[1::2]), lengths, fill.urls)
        elif page is None and name in carried:  # linked into this site unread: as it was
            entry = carried[name]
        else:
            continue  # kept whole (render.Unmarked): rendered every time
        if site_path in written:
            kept[name] = (written[site_path], entry)
    config = session.config
    package = config.python.package if config is not None else "kernels"
    _save(file, now.identity, (now.out, package, course_code(root, now, package), kept))


def load_rendered(root: Path, session: Session, now: Inputs) -> None:
    """Put the unit pages the last command wrote into the session memo's "written" table, each while its
    file in the output folder is as that build wrote it (each reused only if its render key still
    matches: render.render_units), when the course's extensions are as they were."""
    kept = _load(root / CACHE_FOLDER / RENDERED_FILE, now.identity)
    if not (isinstance(kept, tuple) and len(kept) == 4 and kept[0] == now.out and isinstance(kept[3], dict)):
        return
    out, package, code, pages = kept
    if code != course_code(root, now, package):  # the extensions changed: a page's key no longer tells its HTML
        return
    try:
        found = site_stamps(Path(out))
    except OSError:
        return
    for slug, (stamp, entry) in pages.items():
        if not isinstance(entry, WrittenPage):
            return
        if found.get(entry.site_path) == stamp:  # else written since (another build, a hand edit)
            session.memo.put("written", slug, entry)


def save_warm_up(root: Path, session: Session, now: Inputs) -> None:
    """Keep what the code cells of every page (parsed now or kept) import, for the next command's warm_up.start."""
    config = session.config
    if config is None:
        return
    table = session.memo.table("page")
    pages = {path: table[path].page.derived[IMPORTS] for path in sorted(table) if IMPORTS in table[path].page.derived}
    _save(root / CACHE_FOLDER / WARM_UP_FILE, warm_up.IDENTITY, warm_up.WarmUp(config.limits, now.stamps, pages))


def load_notebooks(root: Path, session: Session, now: Inputs) -> None:
    """Put the notebooks' lesson texts the last command kept into the session memo's "notebook" table (each
    used only while the notebook's text has the SHA-256 it was kept under: incremental.kept_notebooks)."""
    kept = _load(root / CACHE_FOLDER / NOTEBOOKS_FILE, now.identity)
    if not isinstance(kept, dict):
        return
    for path, entry in kept.items():
        if not (
            isinstance(path, str)
            and isinstance(entry, tuple)
            and len(entry) == 3
            and isinstance(entry[0], bytes)
            and isinstance(entry[1], str)
            and isinstance(entry[2], CellLines)
        ):
            return
    for path, entry in kept.items():
        session.memo.put("notebook", path, entry)
    session.notebooks_on_disk = dict(kept)


def save_notebooks(root: Path, session: Session, now: Inputs) -> None:
    """Keep the lesson texts of this build's notebooks for the next command (rewritten only when one changed)."""
    sources = session.records.sources
    if sources is None:
        return
    table = session.memo.table("notebook")
    kept = {path: table[path] for path in sorted(sources.sources) if path in table}
    if kept != session.notebooks_on_disk:
        _save(root / CACHE_FOLDER / NOTEBOOKS_FILE, now.identity, kept)
        session.notebooks_on_disk = kept


def _load(file: Path, identity: str):
    """Return what `file` holds when it was written by this coursegen for this user (its signature is made
    with the user's cache key: cache.verified), else None (whatever is wrong: the build is simply cold)."""
    try:
        data = verified(cache_key(), _name(file), file.read_bytes())
        if data is None:  # unsigned, signed with another key, or damaged: never unpickled
            return None
        with collector_paused():  # else it walks the new objects again and again
            header, value = pickle.loads(data)
        return value if header == (FORMAT, identity) else None
    except Exception:  # noqa: BLE001 - missing, damaged, foreign: the build is simply cold
        return None


def _save(file: Path, identity: str, value) -> None:
    """Write `value` under a header naming this coursegen, signed, atomically; skipped when it cannot be
    written, when the user has no cache key, or when its folder leads out of the course."""
    key = cache_key()
    temporary = file.with_name(f".{file.name}.{os.getpid()}")
    try:
        if key is None or not _inside_cache(file):
            return
        data = pickle.dumps(((FORMAT, identity), value), protocol=pickle.HIGHEST_PROTOCOL)
        file.parent.mkdir(parents=True, exist_ok=True)
        with temporary.open("wb") as stream:  # the signature, then the data (not copied behind it: 65 MB at 2,000)
            stream.write(signature(key, _name(file), data))
            stream.write(data)
        temporary.replace(file)
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        with contextlib.suppress(OSError):
            temporary.unlink()


def _name(file: Path) -> str:
    """Return the file's name within the cache folder (`pages/03.pickle`): what its signature is made for."""
    return file.name if file.parent.name == CACHE_FOLDER else f"{file.parent.name}/{file.name}"


def _inside_cache(file: Path) -> bool:
    """Return True when the file's folder, links followed, lies in its course (a planted link would have the
    build write elsewhere)."""
    cache = next((folder for folder in file.parents if folder.name == CACHE_FOLDER), None)
    if cache is None:
        return False
    return Path(os.path.realpath(file.parent)).is_relative_to(Path(os.path.realpath(cache.parent)))
