"""Offline reading: a service worker at the site root that keeps every page and asset after one visit.

A service worker controls only the pages at or below its own URL, so it is written as `sw.js` at the
root under that fixed, unhashed name; its VERSION is a hash of everything it precaches, so a new build
replaces the old cache and an unchanged one keeps it. Pages are fetched network-first (a learner
online always gets the newest), everything else cache-first. Files larger than PRECACHE_LIMIT, and
live Python's files (Pyodide, the kernels wheel), are not fetched up front but kept once used.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from coursegen.incremental import theme_signature
from coursegen.memo import Memo, remembered
from coursegen.model import per_unit
from coursegen.stages.assets import course_theme_assets
from coursegen.stages.parse import page_digest
from coursegen.stages.render import SESSION
from coursegen.theme import files as theme

SW_NAME = "sw.js"
SW_SOURCE = "assets/sw.js"  # in the theme, or the course's templates/
PRECACHE_LIMIT = 1 << 20
LIVE_PYTHON = ("pyodide/", "py/")  # Pyodide and the kernels wheel: fetched only when a learner asks for them

SESSION_HOOKS = ("add_files",)  # these hooks also take the build's session (extensions.ModuleExtension)


def self_hosted(config):
    """Return `config` with Pyodide served from the site itself (`build --offline`)."""
    return dataclasses.replace(config, pyodide=dataclasses.replace(config.pyodide, source="local"))


def configure(config, options):
    """Return the configuration with Pyodide self-hosted when the command line asks (`build --offline`)."""
    return self_hosted(config) if options.offline else config


def precache_list(course, site_files: dict[str, bytes], memo: Memo | None = None) -> list[str]:
    """Return the site paths to fetch at install: the pages, then every small asset and media file."""
    units = [unit.url for unit in course.written]
    pages = ["./", "index.html", "404.html"] + ([] if SESSION in units else [SESSION]) + units
    media = sorted({site for site, _ in media_files(course.written, memo)})
    key = (tuple(site_files), tuple(map(len, site_files.values())))
    # serve: the same files (a search index of thousands) build after build
    return pages + media + list(remembered(memo, "precached files", key, lambda: _precached_files(*key)))


def _precached_files(paths: tuple[str, ...], sizes: tuple[int, ...]) -> tuple[str, ...]:
    """Return, sorted, the site files (given by path and size) that are fetched at install."""
    return tuple(
        sorted(
            path
            for path, size in zip(paths, sizes)
            if size <= PRECACHE_LIMIT and not _is_worker_copy(path) and not path.startswith(LIVE_PYTHON)
        )
    )


def _is_worker_copy(path: str) -> bool:
    # templates/assets/sw.js is also copied as a hashed asset; that copy is never used.
    return path.startswith("assets/sw.") and path.endswith(".js")


def media_files(written: tuple, memo: Memo | None = None) -> tuple[tuple[str, str], ...]:
    """Return the (site path, source path) of every media file the pages of `written` show, each once,
    sorted; in `serve` only the units replaced since the last call are looked at (model.per_unit)."""
    each = tuple(per_unit(memo, "offline assets", written, lambda unit: unit.page.assets))
    return remembered(memo, "offline media", each, lambda: tuple(sorted({pair for assets in each for pair in assets})))


def theme_digest(root: Path, memo: Memo | None = None, theme_key: str | None = None) -> bytes:
    """Return the SHA-256 of every theme file a build may read, joined in theme.files_in_use's order (kept
    in `memo` by `theme_key`, incremental.theme_signature: a rebuild in `serve` neither reads nor hashes
    the theme's 0.9 MB again)."""

    def digest() -> bytes:
        return hashlib.sha256(b"".join(file.read_bytes() for file in theme.files_in_use(root))).digest()

    return digest() if theme_key is None else remembered(memo, "theme digest", theme_key, digest)


def build_version(
    course, root: Path, precache: list[str], memo: Memo | None = None, theme_key: str | None = None
) -> str:
    """Return a short hash of what the pages are made of: sources, media, templates, config, asset names.

    Each page body counts by its digest, found while parsing: a rebuild does not hash every page again."""
    digest = hashlib.sha256("\n".join(precache).encode())
    digest.update(page_digests(course.written, memo).encode())
    digest.update(theme_digest(root, memo, theme_key))
    for _, source in media_files(course.written, memo):
        digest.update((root / source).read_bytes())
    config = root / "course.yaml"
    if config.is_file():
        digest.update(config.read_bytes())
    return digest.hexdigest()[:16]


def page_digests(written: tuple, memo: Memo | None = None) -> str:
    """Return the page digests of `written`, joined; in `serve` only those of replaced units are looked up
    (`memo` keeps the last build's written units and their digests)."""
    return "".join(per_unit(memo, "offline digests", written, lambda unit: page_digest(unit.page)))


def service_worker(
    course, root: Path, site_files: dict[str, bytes], memo: Memo | None = None, theme_key: str | None = None
) -> bytes:
    """Return sw.js with its VERSION and PRECACHE filled in (what repeats from build to build kept in `memo`;
    `theme_key` as for theme_bytes)."""
    precache = precache_list(course, site_files, memo)
    file = theme.find(root, SW_SOURCE)
    if file is None:  # the packaged theme has it: only a broken install lacks it
        raise FileNotFoundError(f"the theme has no {SW_SOURCE}")
    source = file.read_text(encoding="utf-8")
    return (
        source.replace("__VERSION__", build_version(course, root, precache, memo, theme_key))
        .replace("__PRECACHE__", _json_list(tuple(precache), memo))
        .encode()
    )


def _json_list(paths: tuple[str, ...], memo: Memo | None) -> str:
    """Return the paths as an indented JSON list (kept in `memo`: an edit that changes no file name keeps it)."""
    return remembered(memo, "precache json", paths, lambda: _dump_list(paths))


def _dump_list(paths: tuple[str, ...]) -> str:
    return json.dumps(list(paths), indent=2)


def add_files(course, root, assets, problems, session) -> None:
    """Write sw.js at the site root; templates reach it as asset('sw.js').

    It is made after the pages (assets.later), once the files it precaches are all known."""

    def worker() -> dict[str, bytes]:
        theme_key = theme_signature(root, session.changes)
        site = course_theme_assets(root, course.config, session.memo, theme_key)
        site.overlay(assets)
        site_files = site.files
        return {SW_NAME: service_worker(course, root, site_files, session.memo, theme_key)}

    assets.urls[SW_NAME] = SW_NAME
    assets.later(worker)
