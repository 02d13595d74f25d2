"""Hosting in a real browser: a project sub-path, a 404 at any depth, offline reading, search."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from helpers import run_cli, serving
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


@pytest.fixture
def mini_site(mini_course, capsys):
    """The mini course, built into its site/ folder."""
    status, _, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 0, err
    return mini_course / "site"


def build_under_sub_path(course, host, capsys, base: str) -> None:
    """Build `course` into host/repo/ with base_url set to where it is served."""
    config = course / "course.yaml"
    config.write_text(re.sub(r"(?m)^base_url:.*$", f"base_url: {base}repo/", config.read_text()))
    status, _, err = run_cli(capsys, "--root", course, "build", "--out", host / "repo")
    assert status == 0, err


def walk(page, start: str, prefix: str) -> tuple[set[str], list[tuple[str, str]]]:
    """Visit every page reachable from `start` under `prefix`; return the pages and the #anchors linked."""
    seen, queue, anchors = set(), [start], []
    while queue:
        url = queue.pop()
        if url in seen:
            continue
        seen.add(url)
        page.goto(url)
        for href in page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)"):
            target, _, anchor = href.partition("#")
            if target.startswith(prefix):
                queue.append(target)
                if anchor:
                    anchors.append((target, anchor))
    return seen, anchors


def test_a_site_served_under_a_project_sub_path_has_no_broken_link_asset_or_anchor(
    mini_course, tmp_path, page_and_watch, capsys
):
    page, watch = page_and_watch
    failed = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    with serving(tmp_path / "host") as base:
        build_under_sub_path(mini_course, tmp_path / "host", capsys, base)
        prefix = base + "repo/"
        pages, anchors = walk(page, prefix + "index.html", prefix)
        assert {prefix + name for name in ("index.html", "first.html", "second.html", "check.html")} <= pages
        for target, anchor in anchors:
            page.goto(target)
            assert page.locator(f"[id='{anchor}']").count() == 1, f"{target}#{anchor} has no such id"
        page.keyboard.press("/")  # search loads its index and library lazily: they must resolve too
        page.locator("[data-search] input").fill("lesson")
        page.locator("[data-search-results] a").first.wait_for()
        assert page.evaluate("() => navigator.serviceWorker.ready.then(r => r.active.state)") == "activated"
    assert not failed, failed
    assert all(url.startswith(prefix) for url in pages)
    watch.assert_clean()


def test_the_404_page_is_styled_and_links_home_at_any_depth(mini_course, tmp_path, page_and_watch, capsys):
    page, watch = page_and_watch
    with serving(tmp_path / "host") as base:
        build_under_sub_path(mini_course, tmp_path / "host", capsys, base)
        # GitHub Pages answers any missing address of a project site with the project's 404.html;
        # the test server answers with the 404.html at its root.
        (tmp_path / "host" / "404.html").write_bytes((tmp_path / "host" / "repo" / "404.html").read_bytes())
        for depth in ("repo/missing.html", "repo/a/b/c/missing/"):
            response = page.goto(base + depth)
            assert response.status == 404
            expect(page.locator("h1")).to_have_text("Page not found")
            expect(page.locator(".site-header")).to_have_css("display", "flex")
            page.get_by_role("link", name="Go to the course map").click()
            expect(page).to_have_url(base + "repo/index.html")
    # The console reports the 404 status of the missing page itself; nothing else may fail.
    watch.errors = [e for e in watch.errors if "404" not in e]
    watch.assert_clean()


def test_a_learner_who_visited_once_keeps_reading_reviewing_and_searching_offline(mini_site, page_and_watch):
    page, watch = page_and_watch
    with serving(mini_site) as base:
        page.goto(base + "index.html")
        # the service worker claims the page once it has precached the site
        page.evaluate("""() => navigator.serviceWorker.controller || new Promise(done =>
            navigator.serviceWorker.addEventListener('controllerchange', done, {once: true}))""")
    # The server is gone: every request now fails unless the service worker answers it.
    page.reload()
    expect(page.locator("h1")).to_have_text("Mini course")
    page.goto(base + "check.html")  # never opened while online: precached
    expect(page.locator("h1")).to_have_text("Check yourself")
    expect(page.locator("body")).to_have_css("margin", "0px")  # the stylesheet came too
    page.keyboard.press("/")
    page.locator("[data-search] input").fill("definition")  # the index's files come from the precache too
    expect(page.locator("[data-search-status]")).to_contain_text("for “definition”")
    first = page.locator("[data-search-results] a").first
    expect(first).to_have_attribute("href", re.compile(r"first\.html#code-and-a-diagram$"))
    first.click()
    expect(page.locator("h1")).to_have_text("First lesson")
    watch.assert_clean()


def distinctive_words(site) -> dict[str, str]:
    """Return, for each page in the search index, the longest word of its text that no other page uses."""
    words = {}
    for file in (site / "search" / "p").iterdir():
        for page in json.loads(file.read_bytes()):
            text = " ".join(f"{page['title']} {title} {said}" for _, title, said in page["sections"])
            words[page["url"]] = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", text)}
    counts = Counter(word for found in words.values() for word in found)
    return {page: max(sorted(w for w in found if counts[w] == 1), key=len) for page, found in words.items()}


def test_search_finds_a_word_from_each_unit_and_links_to_its_section(mini_site, page_and_watch):
    words = distinctive_words(mini_site)
    assert set(words) == {"first.html", "second.html", "check.html"}
    page, watch = page_and_watch
    with serving(mini_site) as base:
        page.goto(base + "index.html")
        for unit, word in words.items():
            page.keyboard.press("/")
            search = page.locator("[data-search] input")
            expect(search).to_be_focused()
            search.fill(word)
            expect(page.locator("[data-search-status]")).to_contain_text(f"for “{word}”")
            first = page.locator("[data-search-results] a").first
            assert first.get_attribute("href").split("#")[0] == base + unit, word
            expect(page.locator("[data-search-results] mark").first).to_have_text(re.compile(word, re.I))
            page.keyboard.press("Escape")
            # focus goes back to the Search button when the dialog's close event runs, a task later
            expect(page.locator("[data-search-open]")).to_be_focused()
    watch.assert_clean()


def test_a_result_names_its_page_and_section_and_marks_the_words_found(mini_site, page_and_watch):
    page, watch = page_and_watch
    with serving(mini_site) as base:
        page.goto(base + "second.html")
        page.keyboard.press("/")
        page.locator("[data-search] input").fill("sub-section")
        hit = page.locator("[data-search-results] li").first
        expect(hit.locator("a")).to_have_text("Second lesson › A sub-section")
        expect(hit.locator(".search-hit-where")).to_have_text("Lesson 2")
        assert hit.locator("a").get_attribute("href") == base + "second.html#a-sub-section"
    watch.assert_clean()


def test_a_query_finds_the_pages_holding_every_word_its_beginnings_and_other_endings(mini_site, page_and_watch):
    page, watch = page_and_watch
    results = page.locator("[data-search-results] a")
    status = page.locator("[data-search-status]")
    with serving(mini_site) as base:
        page.goto(base + "second.html")
        page.keyboard.press("/")
        search = page.locator("[data-search] input")
        search.fill("table math")  # both words: the section holding both comes first
        expect(status).to_contain_text("for “table math”")
        expect(results.first).to_have_attribute("href", base + "first.html#a-table-and-math")
        expect(results.first.locator("mark")).to_have_text(["table", "math"])
        search.fill("callout zyxwvut")  # one page holds the first word, none the second: that page
        expect(status).to_have_text("1 result for “callout zyxwvut”.")
        search.fill("definit")  # the beginning of a word finds the word
        expect(status).to_contain_text("for “definit”")
        expect(results.first).to_have_attribute("href", re.compile(r"first\.html#code-and-a-diagram$"))
        expect(page.locator("[data-search-results] mark").first).to_have_text(re.compile("^definit", re.I))
        search.fill("definitions")  # a word the pages do not have with that ending finds the one they have
        expect(status).to_contain_text("for “definitions”")
        expect(page.locator("[data-search-results] mark").first).to_have_text(re.compile("^definition$", re.I))
    watch.assert_clean()


def test_search_says_when_nothing_matches_and_enter_follows_the_first_result(mini_site, page_and_watch):
    page, watch = page_and_watch
    with serving(mini_site) as base:
        page.goto(base + "second.html")
        page.get_by_role("button", name="Search").click()
        page.keyboard.type("zyxwvut")
        status = page.locator("[data-search-status]")
        expect(status).to_have_text("No results for “zyxwvut”.")
        expect(status).to_have_attribute("aria-live", "polite")
        page.locator("[data-search] input").fill("callout")
        expect(status).to_have_text("1 result for “callout”.")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"first\.html#code-and-a-diagram$"))
    watch.assert_clean()


def test_typing_before_the_index_arrives_says_loading_then_shows_the_results(mini_site, page_and_watch):
    page, watch = page_and_watch
    held = []  # the index's entry file, answered only when the test says so: a slow network
    page.route("**/search/index.json", lambda route: held.append(route))
    page.clock.install()  # the pause after typing runs when the test moves the clock on, not after a sleep
    with serving(mini_site) as base:
        page.goto(base + "second.html")
        with page.expect_request("**/search/index.json"):
            page.keyboard.press("/")
        page.keyboard.type("callout")
        page.clock.run_for(400)  # well past the 80 ms pause after typing that starts a search
        status = page.locator("[data-search-status]")
        expect(status).to_have_text("Loading the search index…")
        expect(page.locator("[data-search-results] a")).to_have_count(0)
        held[0].continue_()
        expect(status).to_have_text("1 result for “callout”.")
        expect(page.locator("[data-search-results] a")).to_have_count(1)
    watch.assert_clean()


def test_search_says_so_when_its_index_cannot_be_fetched(mini_site, context_factory, page_and_watch):
    page = context_factory(service_workers="block").new_page()  # else its precache would answer
    watch = type(page_and_watch[1])(page)  # conftest's PageWatch, not imported by a module name that clashes
    page.route("**/search/p/**", lambda route: route.abort())  # offline, never searched before
    with serving(mini_site) as base:
        page.goto(base + "second.html")
        page.keyboard.press("/")
        page.locator("[data-search] input").fill("callout")
        expect(page.locator("[data-search-status]")).to_have_text(
            "Search could not load. The course map lists every unit."
        )
        expect(page.locator("[data-search-results] a")).to_have_count(0)
    watch.errors = [e for e in watch.errors if "net::ERR_FAILED" not in e]  # the aborted fetch itself
    watch.assert_clean()


def test_the_header_and_page_do_not_move_when_scripts_show_the_header_buttons(mini_site, context_factory):
    # A phone-sized window, where the buttons' room decides whether the course title wraps.
    page = context_factory(viewport={"width": 412, "height": 823}).new_page()
    page.context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": 4})
    with serving(mini_site) as base:
        for name in ("index.html", "first.html"):
            page.goto(base + name)
            page.locator("[data-search-open]").wait_for(state="visible")
            shifts = page.evaluate("""() => new Promise(done => {
                const seen = [];  // the observer calls back only when there was a shift
                const mine = (entry) => entry.sources.some(s => s.node && s.node.nodeType === 1
                    && (s.node.closest('.site-header') || s.node.matches('main')));
                const observer = new PerformanceObserver(list => seen.push(...list.getEntries().filter(mine)));
                observer.observe({type: 'layout-shift', buffered: true});
                // Two frames painted after the buttons showed: any shift they caused is recorded by then.
                requestAnimationFrame(() => requestAnimationFrame(() =>
                    done([...seen, ...observer.takeRecords().filter(mine)].map(e => e.value))));
            })""")
            assert sum(shifts) < 0.01, (name, shifts)
