"""What a save of the course's own Python means for `serve`: its extensions run again from scratch.

The stages track their inputs one by one (coursegen/incremental.py): a lesson's text, the course's
package and widgets, the templates, media. An extension's code is none of those: its hooks may
add syntax any page uses, check the whole course or add any file, so every page depends on it.
A save of an extension's file, or of a course module one imports, therefore starts the next
build from a fresh session (Session.afresh: the workers, compiled templates and background index
kept), with those modules imported again.
"""

from __future__ import annotations

import sys
from pathlib import Path

TRACKED = ("widgets",)  # the course's Python that the stages track themselves (its package too)
ENGINE = Path(__file__).resolve().parents[1]  # coursegen itself: inside the course when it is this repository
NEVER_FORGOTTEN = ("__main__", "__mp_main__")  # the running program (build.py), whatever folder it is in


def course_modules(root: Path, package: str = "") -> dict[str, str]:
    """Return {module name: course-relative file} for each module of the course folder imported in this
    process (extensions and what they import), but the course's package and widgets."""
    base = root.resolve()
    found = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if name in NEVER_FORGOTTEN or not isinstance(file, str) or not file.startswith((str(root), str(base))):
            continue
        if Path(file).resolve().is_relative_to(ENGINE):
            continue
        shown = _inside(base, file)
        if shown and _course_code(shown) and shown.partition("/")[0] not in (*TRACKED, package):
            found[name] = shown
    return found


def extension_files(root: Path, package: str = "", loaded_files=()) -> set[str]:
    """Return the course-relative files of every extension loaded (`loaded_files`: the session's
    extension_files) and every course module imported."""
    base = root.resolve()
    loaded = {shown for file in loaded_files if (shown := _inside(base, file))}
    return {shown for shown in loaded if shown.partition("/")[0] not in (*TRACKED, package)} | set(
        course_modules(root, package).values()
    )


def touches_extensions(root: Path, changed, package: str = "", loaded_files=()) -> bool:
    """Return whether a changed course path is the code of an extension (or a module one imports)."""
    python = {path for path in changed if path.endswith(".py")}  # else no need to look through sys.modules
    return bool(python and python & extension_files(root, package, loaded_files))


def forget_course_modules(root: Path, package: str = "") -> None:
    """Drop the course's imported modules, so the next `import` of an extension runs its new code."""
    for name in course_modules(root, package):
        sys.modules.pop(name, None)


def _course_code(shown: str) -> bool:
    """Return whether a course-relative file is the course's own code, not an installed package's (a
    virtual environment or node_modules inside the course)."""
    parts = shown.split("/")
    return not parts[0].startswith(".") and not {"site-packages", "node_modules"} & set(parts)


def _inside(base: Path, file: str) -> str | None:
    try:
        return Path(file).resolve().relative_to(base).as_posix()
    except (ValueError, OSError):
        return None
