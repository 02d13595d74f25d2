"""The theme: the packaged default templates and assets, overridden file by file by the course's own.

The default theme ships inside the installed package as `coursegen/default_theme/` (package data made from
this repository's top-level `templates/`; see pyproject.toml). In a source checkout run without
installing, that folder is the repository's `templates/` itself. A course's `templates/` comes
first: any template, partial or asset it holds replaces the theme's file of the same name, and
everything it lacks comes from the theme, as with MkDocs' `custom_dir`.
"""

from __future__ import annotations

from pathlib import Path

COURSE_TEMPLATES = "templates"  # the course's own overrides, relative to its root
ASSETS = "assets"


def _locate_packaged_theme() -> Path:
    installed = Path(__file__).parent.with_name("default_theme")
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parents[2] / "templates"


# Where the installed package is does not change while coursegen runs: found once, not ~20 times a rebuild.
_PACKAGED = _locate_packaged_theme()
_PACKAGED_RESOLVED = _PACKAGED.resolve()


def packaged_theme() -> Path:
    """Return the folder of the default theme: installed package data, else the source checkout's."""
    return _PACKAGED


def folders(root: Path) -> tuple[Path, ...]:
    """Return the template folders in lookup order: the course's own (when it has one), then the theme."""
    own = root / COURSE_TEMPLATES
    if own.is_dir() and own.resolve() != _PACKAGED_RESOLVED:
        return (own, _PACKAGED)
    return (_PACKAGED,)


def find(root: Path, name: str) -> Path | None:
    """Return the file that `name` (e.g. 'assets/sw.js') resolves to, or None when no folder has it."""
    return next((folder / name for folder in folders(root) if (folder / name).is_file()), None)


def asset_files(root: Path) -> dict[str, Path]:
    """Return {asset name: file} for every asset, the course's files replacing the theme's one by one."""
    merged: dict[str, Path] = {}
    for folder in reversed(folders(root)):
        base = folder / ASSETS
        for file in sorted(base.rglob("*")) if base.is_dir() else ():
            if file.is_file():
                merged[file.relative_to(base).as_posix()] = file
    return dict(sorted(merged.items()))


def files_in_use(root: Path) -> list[Path]:
    """Return every theme file a build may read (templates, partials, assets), overrides resolved."""
    merged: dict[str, Path] = {}
    for folder in reversed(folders(root)):
        for file in sorted(folder.rglob("*")):
            if file.is_file() and "__pycache__" not in file.parts:
                merged[file.relative_to(folder).as_posix()] = file
    return [merged[name] for name in sorted(merged)]


def shown_path(root: Path, file: str) -> str:
    """Return a template file's path as a problem shows it: relative to the course when it is the
    course's, else where the installed theme's file is."""
    path = Path(file)
    if not path.is_absolute():
        return file
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def is_template_file(root: Path, file: str) -> bool:
    """Return True when `file` (a traceback frame's file name) is one of the course's or the theme's templates."""
    return any(file.startswith(str(folder) + "/") for folder in folders(root))
