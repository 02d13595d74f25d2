"""What a page with code cells carries for live runs: its cells' code, the harness, and how to reach Pyodide.

The page's cells.js reads it from one `<script type="application/json" data-cells-runtime>` written
with the first cell: every cell's code as it runs (no-op magics blanked) and tags, so a live run can
run the cells before an edited one first; the harness (figures.py and live.py, standard library
only), sent to the page's Python worker as a widget-style `run(**params)` entry; the worker's
settings (the widgets' `browser_python`); and the Pyodide packages the cells import, directly or
through the course's package (matplotlib and numpy are Pyodide packages, listed as widgets list theirs).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from coursegen.features.cells import figures, live
from coursegen.features.cells.source import CodeCell
from coursegen.features.widgets.extension import browser_python
from coursegen.features.widgets.site import said_in
from coursegen.theme import messages

# Python import names → Pyodide package names, for the packages a page's cells load live.
PYODIDE_PACKAGES = {
    "numpy": "numpy",
    "matplotlib": "matplotlib",
    "ml_dtypes": "ml-dtypes",
    "scipy": "scipy",
    "pandas": "pandas",
    "sympy": "sympy",
}
HARNESS = Path(figures.__file__).read_text(encoding="utf-8") + "\n" + Path(live.__file__).read_text(encoding="utf-8")


def runtime_json(cells: list[CodeCell], env: dict) -> str:
    """Return the page's live-run data as JSON safe inside a <script> element."""
    runtime, missing = browser_python(env["ctx"])
    package = runtime.get("module", "")
    packages = page_packages(cells, env["ctx"].root, package)
    if package not in set().union(*(imported(cell.run) for cell in cells)):
        runtime = {**runtime, "wheel": "", "module": ""}  # the cells never import it: no need to load it
    lacking = said_in({name: why for name, why in missing.items() if name in packages}, messages.texts(env))
    data = {
        "page": env["path"],
        "cells": [[cell.run, list(cell.tags)] for cell in cells],
        "harness": HARNESS,
        "runtime": {key: runtime.get(key, "") for key in ("worker", "indexURL", "integrity", "wheel", "module")},
        "packages": packages,
        **({"missing": lacking} if lacking else {}),
    }
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c")


def page_packages(cells: list[CodeCell], root: Path, package: str) -> list[str]:
    """Return the Pyodide packages the cells import, and those the course's package imports when they import it."""
    names = set().union(*(imported(cell.run) for cell in cells))
    if package and package in names:
        for file in sorted((root / package).rglob("*.py")):
            names |= imported(file.read_text(encoding="utf-8"))
    return sorted({PYODIDE_PACKAGES[name] for name in names if name in PYODIDE_PACKAGES})


def imported(code: str) -> set[str]:
    """Return the top-level module names `code` imports (none when it cannot be read)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.partition(".")[0])
    return names
