"""Static assets: content-hashed names so browsers may cache them forever."""

from __future__ import annotations

import hashlib
import json
import posixpath
from pathlib import Path
from urllib.parse import quote

from coursegen.memo import Memo, remembered
from coursegen.theme import files as theme
from coursegen.theme import messages


def bad_site_path(path: str) -> str:
    """Return why `path` cannot name a file of the site (it would climb out, or no disk could hold
    it), or '' when it can."""
    if not isinstance(path, str) or not path:
        return "it is not a file name"
    if any(ord(c) < 0x20 or c == "\x7f" for c in path):
        return "it holds a control character"
    if path.startswith("/") or "\\" in path:
        return "it is an absolute path, or holds a backslash"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return "it climbs out of its folder, or has an empty part"
    return ""


def hashed_name(site_path: str, data: bytes) -> str:
    """Return `dir/name.<hash8>.ext` for the given content."""
    stem, ext = posixpath.splitext(site_path)
    return f"{stem}.{hashlib.sha256(data).hexdigest()[:10]}{ext}"


class Assets:
    """Logical asset names ('style.css') mapped to hashed site paths and their bytes."""

    def __init__(self):
        self.urls: dict[str, str] = {}
        self.files: dict[str, bytes] = {}
        self.pending: list[tuple] = []  # (make, cancel) from later(), in the order they were asked for
        self.early: list[tuple] = []  # (make, cancel) from meanwhile(), in order
        self.made: dict[str, bytes] = {}  # the files made by both

    def meanwhile(self, make, cancel=None) -> None:
        """Have `make() -> {site path: bytes}` add files while the pages render, before the later files.

        For files no page refers to by content, such as the search index: the build process makes
        them once the pages' rendering is shared out (render.render_units), while another process
        renders, or right after rendering when it renders alone; `cancel()` if the build fails."""
        self.early.append((make, cancel))

    def make_early(self) -> None:
        """Make the meanwhile() files not made yet, each into `files`."""
        while self.early:
            make, _ = self.early.pop(0)
            self._keep(make())

    def later(self, make, cancel=None) -> None:
        """Have `make() -> {site path: bytes}` add files once the pages are rendered, in order with the
        other later files (each sees the files of those before it in `files`); `cancel()` if the build fails.

        For work that needs every other file, such as the service worker's list of them."""
        self.pending.append((make, cancel))

    def finish(self) -> dict[str, bytes]:
        """Make the meanwhile() files not made yet, then the later files, each into `files`; return them all."""
        self.make_early()
        while self.pending:
            make, _ = self.pending.pop(0)
            self._keep(make())
        return self.made

    def _keep(self, files: dict[str, bytes]) -> None:
        self.files.update(files)
        self.made.update(files)

    def cancel(self) -> None:
        """Cancel the meanwhile and later files not yet made (a failed build)."""
        while self.early:
            _, cancel = self.early.pop(0)
            if cancel:
                cancel()
        while self.pending:
            _, cancel = self.pending.pop(0)
            if cancel:
                cancel()

    def add(self, name: str, data: bytes, folder: str = "assets") -> str:
        """Store an asset and return its hashed site path (ValueError for a name that cannot be one)."""
        if why := bad_site_path(f"{folder}/{name}"):
            raise ValueError(f"asset name {name!r} in folder {folder!r} cannot name a file of the site: {why}")
        path = hashed_name(f"{folder}/{name}", data)
        self.urls[name], self.files[path] = path, data
        return path

    def add_named(self, name: str, key: bytes, folder: str = "assets") -> str:
        """Name an asset whose bytes come later (by meanwhile() or later()), by `key`, which must change
        whenever they would; return its hashed site path, as add() does."""
        if why := bad_site_path(f"{folder}/{name}"):
            raise ValueError(f"asset name {name!r} in folder {folder!r} cannot name a file of the site: {why}")
        path = hashed_name(f"{folder}/{name}", key)
        self.urls[name] = path
        return path

    def overlay(self, other: Assets) -> None:
        """Add `other`'s assets; one of a name this holds replaces it, file and all (the math font cut to
        the course's characters in place of the theme's whole font)."""
        for name, path in other.urls.items():
            if self.urls.get(name, path) != path:
                self.files.pop(self.urls[name], None)
        self.urls.update(other.urls)
        self.files.update(other.files)

    def url(self, name: str) -> str:
        """Return the hashed site path of a stored asset (KeyError names a missing one)."""
        return self.urls[name]


MODULE_PREFIX = "coursegen/"  # the theme's scripts import one another as "coursegen/<asset name>"


def import_map(names, url) -> str:
    """Return the pages' import map: each of the JavaScript asset `names` as "coursegen/<name>", mapped to
    its hashed URL (`url(name)`) relative to the site root. The page inlines this text and the
    Content-Security-Policy allows it by the hash of these exact characters."""
    imports = {MODULE_PREFIX + name: "./" + quote(url(name)) for name in sorted(names) if name.endswith(".js")}
    # Inside <script> only "</script" could end the block early: "<" is written as a JSON escape.
    return json.dumps({"imports": imports}, indent=1).replace("<", "\\u003c")


def load_theme_assets(root: Path, memo: Memo | None = None, theme_key: str | None = None) -> Assets:
    """Return the stylesheet, scripts and Pygments colours: the theme's assets/, the course's
    templates/assets/ replacing them file by file (a fresh copy; kept in `memo` by the files' stamps).
    `theme_key` (incremental.theme_signature) keeps the files' listing and stamps too: in `serve` a
    rebuild then walks no folder of the theme."""

    def listing() -> tuple:
        named = theme.asset_files(root)
        return tuple((name, *stamp) for name, stamp in zip(named, file_stamps(named.values())))

    stamps = listing() if theme_key is None else remembered(memo, "theme listing", theme_key, listing)
    loaded = remembered(
        memo, "theme assets", stamps, lambda: _theme_assets(stamps, memo)
    )  # read and hashed again when a file changed
    copy = Assets()
    copy.urls, copy.files = dict(loaded.urls), dict(loaded.files)
    return copy


def course_theme_assets(root: Path, config, memo: Memo | None = None, theme_key: str | None = None) -> Assets:
    """Return the theme's assets and the one made from course.yaml: the message catalogue's module
    (`theme_key` as for load_theme_assets)."""
    assets = load_theme_assets(root, memo, theme_key)
    assets.add(messages.SCRIPT_NAME, messages.script(messages.catalogue(root, config, memo)))
    return assets


def file_stamps(files) -> tuple:
    """Return (file, modification time, size) per file: a cache key that changes when a file does."""
    return tuple((file, stat.st_mtime_ns, stat.st_size) for file in files for stat in [file.stat()])


def _theme_assets(stamps: tuple, memo: Memo | None) -> Assets:
    assets = Assets()
    for name, file, _, _ in stamps:
        assets.add(name, file.read_bytes())
    assets.add("pygments.css", pygments_css(memo).encode())
    return assets


def pygments_css(memo: Memo | None = None) -> str:
    """Return code-highlighting colours for the light theme and, scoped, the dark one (kept in `memo`)."""

    def make() -> str:
        from pygments.formatters import HtmlFormatter  # on first use, like the highlighter (see parse.py)

        light = HtmlFormatter(style="default").get_style_defs(".highlight")
        dark = HtmlFormatter(style="github-dark")
        chosen = dark.get_style_defs(":root[data-theme=dark] .highlight")
        # The OS's dark scheme, when the learner has not picked light: the same colours (the theme's
        # dark variables apply there too, so the light colours would sit on a dark page).
        system = dark.get_style_defs(":root:not([data-theme=light]) .highlight").replace("\n", "\n  ")
        return f"{light}\n{chosen}\n@media (prefers-color-scheme: dark) {{\n  {system}\n}}\n"

    return remembered(memo, "pygments css", None, make)
