"""The front end's one module graph: the theme's scripts import one another as "coursegen/<asset name>",
and every page carries the import map that resolves those names to the content-hashed files.

Each page's scripts are followed through their static imports and their import() of a literal name
(the lazily loaded editor and scheduler too), so a module missing from the map, a hand-written URL or a
relative import (which cannot reach a hashed name) fails here. The browser tests load the same pages
and fail on any console error, which is where a refused import map or a CSP violation shows.
"""

from __future__ import annotations

import json
import re

import pytest

from coursegen.pipeline import build_site
from coursegen.theme import files as theme

STATIC = re.compile(r"""^\s*(?:import|export)\s+(?:[^"';]*?\s+from\s+)?["']([^"']+)["']""", re.M)
DYNAMIC = re.compile(r"""\bimport\(\s*["']([^"']+)["']\s*\)""")
MAP = re.compile(r'<script type="importmap">(.*?)</script>', re.S)
MODULE_SCRIPT = re.compile(r'<script type="module" src="([^"]+)"')
VIEW = re.compile(r'data-view="([^"]+)"')
ASSETS = theme.packaged_theme() / theme.ASSETS
THEME_JS = sorted(ASSETS.rglob("*.js"))
MADE_JS = ("messages.js",)  # made per course, not a theme file: the UI text's catalogue (theme/messages.py)
BUILT_HTML = re.compile(
    r"\.innerHTML\b|\.outerHTML\s*=|insertAdjacentHTML|document\.write"
    r"|createElement(?:NS)?\("
)


def specifiers(js: str) -> list[str]:
    """Return every module name a script imports, statically or by import() of a literal."""
    return STATIC.findall(js) + DYNAMIC.findall(js)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from helpers import REPO, copy_course

    return build_site(copy_course(REPO, tmp_path_factory.mktemp("graph") / "course")).outputs


def import_map(html: str) -> dict[str, str]:
    found = MAP.findall(html)
    assert len(found) == 1, "one import map per page, before any module script"
    assert html.index('<script type="importmap">') < html.index('<script type="module"')
    return json.loads(found[0])["imports"]


def test_every_module_a_page_loads_resolves_through_its_import_map_to_a_file_of_the_site(site):
    reached = set()
    for name in [name for name in site if name.endswith(".html")]:
        html = site[name].decode()
        mapped = import_map(html)
        todo = MODULE_SCRIPT.findall(html) + VIEW.findall(html)
        seen = set()
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            assert path in site, f"{name}: {path} is not a file of the site"
            for specifier in specifiers(site[path].decode()):
                assert specifier in mapped, f"{name}: {path} imports {specifier!r}, which the import map lacks"
                todo.append(mapped[specifier].removeprefix("./"))
        reached |= seen
    for lazy in ("vendor/codemirror.js", "vendor/ts-fsrs.js", "review/exercise.js", "dom.js", "constants.js"):
        assert any(path.startswith(f"assets/{lazy[:-3]}.") for path in reached), f"no page reaches {lazy}"


def test_the_import_map_names_every_script_of_the_theme_and_only_files_the_site_has(site):
    mapped = import_map(site["index.html"].decode())
    names = {file.relative_to(ASSETS).as_posix() for file in THEME_JS}
    assert set(mapped) == {f"coursegen/{name}" for name in (*names, *MADE_JS)}
    assert all(url.removeprefix("./") in site for url in mapped.values())
    assert all(import_map(site[name].decode()) == mapped for name in site if name.endswith(".html"))


def test_the_service_worker_precaches_every_module_of_the_graph(site):
    listed = re.search(r"const PRECACHE = (\[.*?\]);", site["sw.js"].decode(), re.S).group(1)
    precache = set(json.loads(listed))
    mapped = import_map(site["index.html"].decode())
    assert {url.removeprefix("./") for url in mapped.values()} - precache == {"sw.js"}  # itself, not a module


@pytest.mark.parametrize("file", THEME_JS, ids=lambda file: file.name)
def test_the_theme_s_scripts_import_only_names_of_the_graph(file):
    for specifier in specifiers(file.read_text(encoding="utf-8")):
        assert specifier.startswith("coursegen/"), f"{file.name} imports {specifier!r}: name it coursegen/…"
        name = specifier.removeprefix("coursegen/")
        assert name in MADE_JS or (ASSETS / name).is_file(), specifier


def test_scripts_build_dom_only_through_dom_js():
    from helpers import REPO

    scripts = [file for file in THEME_JS if "vendor" not in file.parts and file.name != "dom.js"]
    scripts += sorted((REPO / "widgets").glob("*/view.js")) + [REPO / "coursegen" / "serve" / "livereload.js"]
    for file in scripts:
        assert not BUILT_HTML.search(file.read_text(encoding="utf-8")), f"{file}: use h() from dom.js"


def test_the_inline_theme_script_reads_the_key_constants_js_names_and_is_the_only_reader():
    key = re.search(r'export const THEME_KEY = "([^"]+)";', (ASSETS / "constants.js").read_text()).group(1)
    inline = (theme.packaged_theme() / "partials" / "theme-init.js").read_text()
    assert re.findall(r'localStorage\.getItem\("([^"]+)"\)', inline) == [key]
    scripts = "".join(file.read_text() for file in THEME_JS if file.name != "constants.js")
    assert key not in scripts
    assert "getItem(THEME_KEY)" not in scripts  # the stored theme is applied once, before first paint


def test_the_worker_explains_a_failed_runtime_by_the_files_the_build_copies():
    # The Pyodide worker runs without the import map (workers get none), so it names the runtime's
    # files itself; they must be the ones widget_site copies for a self-hosted site (its loader aside).
    from coursegen.features.widgets.site import RUNTIME_FILES

    worker = (ASSETS / "pyodide-worker.js").read_text(encoding="utf-8")
    listed = re.search(r"const files = \[([^\]]*)\];", worker).group(1)
    assert sorted(re.findall(r'"([^"]+)"', listed)) == sorted(set(RUNTIME_FILES) - {"pyodide.mjs"})


# ---- the engine's Python: stages meet features only through the extension protocol -------------

ENGINE = ("pipeline.py", "stages/parse.py", "stages/render.py", "serve")


def imported_modules(file) -> set[str]:
    """Return every module a Python file imports, at its top or inside a function."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def test_the_pipeline_the_parser_the_renderer_and_serve_import_no_feature():
    from helpers import REPO

    package = REPO / "coursegen"
    files = [
        f for name in ENGINE for f in ([package / name] if name.endswith(".py") else (package / name).rglob("*.py"))
    ]
    assert len(files) > 3
    for file in files:
        features = sorted(m for m in imported_modules(file) if m.startswith("coursegen.features"))
        assert not features, f"{file.relative_to(REPO)} imports {features}: join through coursegen.extensions"
