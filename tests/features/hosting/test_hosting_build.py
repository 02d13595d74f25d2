"""What the build writes for hosting: CSP, Open Graph, robots.txt, the service worker, the offline switch."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest
from helpers import run_cli

from coursegen.features.hosting import offline
from coursegen.pipeline import BuildOptions, build_site
from coursegen.stages import csp

PAGES = ("index.html", "first.html", "second.html", "check.html", "404.html")


def meta(html: str, attr: str, name: str) -> str:
    """Return the content of <meta {attr}="{name}" content="…">."""
    found = re.search(rf'<meta {attr}="{re.escape(name)}" content="([^"]*)">', html)
    assert found, f"no <meta {attr}={name!r}>"
    return found.group(1).replace("&#39;", "'").replace("&amp;", "&")


def inline_scripts(html: str) -> list[str]:
    """Return the text of every inline script the browser would run or read as an import map (the CSP
    covers both; JSON data blocks do neither)."""
    return re.findall(r'<script(?![^>]*\bsrc=)(?![^>]*\btype=(?!"importmap"))[^>]*>(.*?)</script>', html, re.S)


@pytest.fixture(scope="module")
def mini_site(tmp_path_factory):
    from helpers import FIXTURES, copy_course

    return build_site(copy_course(FIXTURES / "mini", tmp_path_factory.mktemp("host") / "mini")).outputs


@pytest.mark.parametrize("page", PAGES)
def test_every_inline_script_is_allowed_by_its_exact_hash_and_nothing_else_inline(page, mini_site):
    html = mini_site[page].decode()
    policy = meta(html, "http-equiv", "Content-Security-Policy")
    scripts = inline_scripts(html)
    assert len(scripts) == 2, "the theme script (inline: no flash of the wrong theme) and the import map"
    for script in scripts:
        digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy


def test_the_policy_allows_webassembly_workers_and_the_pinned_cdn_only_when_pyodide_comes_from_it(mini_course):
    from coursegen.errors import Problems
    from coursegen.stages.config import load_config

    config = load_config(mini_course, Problems())
    from coursegen.extensions import built_in_extensions

    online = csp.directives(config, mini_course / "templates", built_in_extensions().csp(config))
    pinned = f"https://cdn.jsdelivr.net/pyodide/v{config.pyodide.version}/full/"
    assert online["script-src"][-2:] == ["'wasm-unsafe-eval'", pinned]
    assert pinned in online["connect-src"] and "'self'" in online["worker-src"]
    hosted = offline.self_hosted(config)
    local = csp.directives(hosted, mini_course / "templates", built_in_extensions().csp(hosted))
    assert not any(
        "https:" in source
        for sources in local.values()
        for source in sources
        if not source.startswith("https://example.org")
    )


def test_the_csp_meta_comes_before_every_script_and_stylesheet(mini_site):
    html = mini_site["first.html"].decode()
    assert html.index('http-equiv="Content-Security-Policy"') < min(html.index("<script"), html.index("<link"))


@pytest.mark.parametrize("page", PAGES[:-1])
def test_open_graph_tags_repeat_the_title_description_and_canonical_url(page, mini_site):
    html = mini_site[page].decode()
    title = re.search(r"<title>(.*?)</title>", html).group(1)
    canonical = re.search(r'<link rel="canonical" href="([^"]*)">', html).group(1)
    assert meta(html, "property", "og:title") == title
    assert (
        meta(html, "property", "og:url")
        == canonical
        == "https://example.org/mini/" + ("" if page == "index.html" else page)
    )
    assert meta(html, "property", "og:description") == meta(html, "name", "description")
    assert meta(html, "property", "og:type") == ("website" if page == "index.html" else "article")


def test_the_404_page_resolves_its_links_against_base_url_so_it_works_at_any_depth(mini_site):
    html = mini_site["404.html"].decode()
    assert html.index('<base href="https://example.org/mini/">') < html.index("<link")
    assert "canonical" not in html


def test_robots_txt_names_the_sitemap_when_the_site_knows_its_address(mini_site, sample_course):
    assert mini_site["robots.txt"].decode().splitlines()[-1] == "Sitemap: https://example.org/mini/sitemap.xml"
    robots = build_site(sample_course).outputs["robots.txt"].decode()
    assert "Sitemap" not in robots and "User-agent: *" in robots


def precache(outputs) -> list[str]:
    """Return the PRECACHE list written into sw.js."""
    return json.loads(re.search(r"const PRECACHE = (\[.*?\]);", outputs["sw.js"].decode(), re.S).group(1))


def test_the_service_worker_sits_at_the_root_and_precaches_every_page_and_asset(mini_site):
    listed = precache(mini_site)
    assert listed[0] == "./"
    pages = {p for p in mini_site if p.endswith(".html")}
    assets = {p for p in mini_site if p.startswith("assets/") and not p.startswith("assets/sw.")}
    assert pages | assets <= set(listed)
    assert all(path in mini_site for path in listed[1:]), "every precached path must exist"
    assert re.search(r'const VERSION = "[0-9a-f]{16}";', mini_site["sw.js"].decode())
    assert 'data-service-worker="sw.js"' in mini_site["index.html"].decode()


def test_the_service_worker_version_changes_with_a_lesson_and_only_then(mini_course):
    version = lambda: re.search(r'VERSION = "(\w+)"', build_site(mini_course).outputs["sw.js"].decode()).group(1)
    before = version()
    assert version() == before
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", "Other text."))
    assert version() != before


def test_large_files_are_kept_on_first_use_rather_than_precached(mini_course):
    from coursegen.errors import Problems
    from coursegen.model import Course
    from coursegen.stages.config import load_config

    course = Course(config=load_config(mini_course, Problems()))
    files = {"pyodide/pyodide.asm.wasm": b"x" * (offline.PRECACHE_LIMIT + 1), "assets/a.1234567890.js": b"y"}
    listed = offline.precache_list(course, files)
    assert "assets/a.1234567890.js" in listed and "pyodide/pyodide.asm.wasm" not in listed
    small_python = {"pyodide/pyodide.mjs": b"z", "py/0123456789ab/kernels-0.1.0-py3-none-any.whl": b"w"}
    assert not set(offline.precache_list(course, small_python)) & set(small_python)  # live Python waits to be asked


def test_serve_mode_pages_register_no_service_worker(mini_course):
    html = build_site(mini_course, BuildOptions(serve_mode=True)).outputs["index.html"].decode()
    assert "data-service-worker" not in html


def without_comments(code: str) -> str:
    """Return code without /* block */ comments and whole-line // comments (URLs there are never fetched)."""
    return re.sub(r"^\s*//.*$", "", re.sub(r"/\*.*?\*/", "", code, flags=re.S), flags=re.M)


def test_offline_build_self_hosts_pyodide_and_names_no_outside_address(tmp_path, capsys):
    from helpers import copy_course

    course = copy_course(Path(__file__).parent / "course", tmp_path / "course")  # has a widget
    assert "source: local" not in (course / "course.yaml").read_text()
    status, _out, err = run_cli(capsys, "--root", course, "build", "--offline")
    assert status == 0, err
    site = course / "site"
    assert (site / "pyodide" / "pyodide.mjs").is_file() and (site / "pyodide" / "pyodide.asm.wasm").is_file()
    for file in site.rglob("*"):
        if file.suffix in (".html", ".js", ".css", ".json") and not file.is_relative_to(site / "pyodide"):
            text = without_comments(file.read_text(encoding="utf-8"))
            urls = set(re.findall(r"https?://[^\s\"'<>)]+", text))
            kept = {u for u in urls if not u.startswith(("https://example.org", "http://www.w3.org/"))}
            assert not kept, f"{file.relative_to(site)} names {sorted(kept)[:3]}"
    assert "cdn.jsdelivr" not in (site / "moon.html").read_text()


def test_two_builds_write_the_same_service_worker_and_search_index(mini_course):
    first, second = build_site(mini_course).outputs, build_site(mini_course).outputs
    for name in ("sw.js", "robots.txt"):
        assert first[name] == second[name]
    index = [p for p in first if p.startswith("search/")]
    assert len(index) > 5 and [second[p] for p in index] == [first[p] for p in index]
