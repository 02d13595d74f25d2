"""Code cells: ```` ```{code-cell} python ```` fences (MyST-NB's syntax) run at build time, their outputs baked.

A core rule reads every cell of a page (source.py), runs them in order in one namespace in the
author-code worker (execute.py, one call per cell: the course's limits apply to each), and stores
each cell's outputs in `token.meta`; the fence renderer writes the code, highlighted as any Python
fence is, and the outputs as plain HTML under it (output.py). A page with a problem in any cell runs
none of them: its cells run in order, and a later one may need what an earlier one defines.

A page's outputs are kept in the session's memo by what they depend on: its cells' code and tags
in order, the course package's signature and the limits. In `serve`, an edit to the prose around
the cells re-parses the page but runs no cell again. The first cell also carries what the page's
live runs need (page.py), which templates/assets/cells.js reads.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from coursegen.author_code import AuthorCodeStopped
from coursegen.course_code import IMPORT_HINT, IMPORTS, LIMIT_HINT, CalcError, imported_names
from coursegen.features.cells.execute import CellError, run_cell
from coursegen.features.cells.output import render_cell
from coursegen.features.cells.page import runtime_json
from coursegen.features.cells.source import FENCE, CodeCell, is_cell, read_cell
from coursegen.features.widgets.site import SiteError, package_wheel, pyodide_site
from coursegen.stages.parse import highlight_code, register_fence

NAME = "cells"  # this extension's name: its page analysis is page.derived["cells"]
RUNTIME = re.compile(r'<script type="application/json" data-cells-runtime>(.*?)</script>', re.S)
SESSION_HOOKS = ("add_files",)  # this hook also takes the build's session (extensions.ModuleExtension)


def install(md) -> None:
    """Register the code cells' core rule and their fence renderer."""
    md.core.ruler.push("code_cells", run_code_cells)
    register_fence(md, FENCE, render_cell)


def analyse(html: str, source) -> tuple[str, ...] | None:
    """Return the Pyodide packages a page's code cells load live (None: the page has no cells), for add_files."""
    found = RUNTIME.search(html) if "data-cells-runtime" in html else None
    if found is None:
        return None
    data = json.loads(found.group(1))
    module = data["runtime"]["module"]
    return tuple(data["packages"]) + ((":wheel",) if module and data["runtime"]["wheel"] else ())


def add_files(course, root: Path, assets, problems, session) -> None:
    """Add what live cells load from this site: the course package's wheel, and (self-hosted Pyodide) the
    packages the cells import."""
    wanted = {name for unit in course.written for name in (unit.page.derived.get(NAME) or ())}
    if not wanted:
        return
    if ":wheel" in wanted:
        site_path, data = package_wheel(root, course.config.python.package, session.memo)
        assets.files[site_path] = data
    try:
        site = pyodide_site(root, course.config.pyodide, sorted(wanted - {":wheel"}), session.memo)
    except SiteError:
        return  # the widgets' prepare reported it
    for site_path, file in site.files.items():
        assets.files[site_path] = file.read_bytes()


def run_code_cells(state) -> None:
    """Read every code cell of the page, run them in order, and store each one's outputs in `token.meta`."""
    env = state.env
    tokens = [token for token in state.tokens if is_cell(token)]
    if not tokens:
        return
    cells = [read_cell(token, env) for token in tokens]
    for number, (token, cell) in enumerate(zip(tokens, cells), 1):
        token.meta["cell"] = {"cell": cell, "outputs": None, "number": number}
    if None in cells:
        return  # reported; the page's cells depend on each other, so none runs
    ready: list[CodeCell] = [cell for cell in cells if cell is not None]
    tokens[0].meta["cell"]["runtime"] = runtime_json(ready, env)
    running = [cell for cell in ready if not cell.tagged("skip-execution")]
    names = tuple(dict.fromkeys(name for cell in running for name in imported_names(cell.run)))
    if names:  # what the next command's worker may import before this page is parsed (warm_up.start)
        env["derived"][IMPORTS] = (*env["derived"].get(IMPORTS, ()), *names)
    outputs = page_outputs(ready, env, names)
    if outputs is not None:
        for token, shown in zip(tokens, outputs):
            token.meta["cell"]["outputs"] = shown


def page_outputs(cells: list[CodeCell], env: dict, names: tuple[str, ...]) -> list[tuple] | None:
    """Return each cell's outputs (empty for a skipped cell), kept in the memo by what they depend on, or None
    after reporting the cell that failed. `names`: the modules the cells that run import."""
    python = env["ctx"].python
    # Lines matter only to a traceback shown as output: without one, prose added above the cells runs none again.
    lines = any(cell.tagged("raises-exception") for cell in cells)
    code = tuple((cell.run, cell.tags, cell.line if lines else 0) for cell in cells)
    key = (env["path"], code, python.setup, python.limits)
    memo = env["ctx"].memo
    kept = memo.peek("code cells", key) if memo is not None else None
    if kept is not None:
        return kept
    outputs = _run(cells, env, names)
    if outputs is not None and memo is not None:
        memo.put("code cells", key, outputs)
    return outputs


def _run(cells: list[CodeCell], env: dict, names: tuple[str, ...]) -> list[tuple] | None:
    """Run the page's cells in the worker, one call each; return their outputs or None after reporting."""
    python, path, problems = env["ctx"].python, env["path"], env["problems"]
    running = [cell for cell in cells if not cell.tagged("skip-execution")]
    calls = [(path, index, cell.run, cell.line, cell.tags) for index, cell in enumerate(running)]
    results: list[tuple] = []
    # Pygments' Python lexer, which shows the cells' code once they ran, is made now, while this process would
    # only wait for the worker's imports (on a command-line rebuild it is made in this process first).
    highlight_code("", "python", None, env["ctx"].memo)
    try:  # what the cells import from outside the course, under the import limit: not their calls' time
        python.import_installed(list(names))
    except AuthorCodeStopped as stopped:
        problems.error(path, running[0].line, f"importing what the code cells import {stopped.located()}", IMPORT_HINT)
        return None
    except CalcError as err:  # the course's package cannot be imported
        problems.error(path, running[0].line, err.message, err.hint)
        return None
    try:
        for call in calls:  # one request each (not call_each's batches): a cell that stops is known for sure
            results.append(python.call(run_cell, *call))
    except CellError as err:
        problems.error(path, err.line, err.message, err.hint)
        return None
    except AuthorCodeStopped as stopped:  # the watchdog's report names the page's line, when it came in time
        at = int(stopped.where.rpartition(" line ")[2]) if stopped.where.startswith(path + " line ") else 0
        cell = running[len(results)]
        where = f" (at line {at})" if at else ""
        hint = LIMIT_HINT if stopped.timed_out else "the memory it may use is `limits: {memory_mb: …}` in course.yaml"
        problems.error(path, cell.line, f"code cell {stopped.message}{where}", hint)
        return None
    except CalcError as err:  # the course's package cannot be imported
        problems.error(path, running[len(results)].line, err.message, err.hint)
        return None
    ran = iter(results)
    return [() if cell.tagged("skip-execution") else next(ran) for cell in cells]
