"""Headless Chromium through Playwright: Debian's browser, only localhost reachable, errors collected."""

from __future__ import annotations

import os
from urllib.parse import urlparse

import pytest
from helpers import WAIT_GUARD_MS

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@pytest.fixture(scope="session")
def sample_course(tmp_path_factory):
    """The repository's sample course, copied and built once for every browser test that only reads it."""
    from helpers import REPO, copy_course

    from coursegen.cli import main

    root = copy_course(REPO, tmp_path_factory.mktemp("sample") / "course")
    assert main(["--root", str(root), "build"]) == 0
    return root


@pytest.fixture(scope="session")
def sample_site(sample_course):
    """The sample course's site, served on 127.0.0.1; yields its base URL."""
    from helpers import serving

    with serving(sample_course / "site") as base:
        yield base


@pytest.fixture(scope="session", autouse=True)
def _roomy_waits():
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT_GUARD_MS)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (scripts/test.sh does)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


class PageWatch:
    """What a page did wrong: console errors, page errors and requests that left localhost."""

    def __init__(self, page):
        self.errors: list[str] = []
        self.foreign: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.route("**/*", self._route)

    def _route(self, route):
        host = urlparse(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host in LOCAL_HOSTS:
            route.continue_()
        else:
            self.foreign.append(route.request.url)
            route.abort()

    def assert_clean(self):
        assert not self.errors, f"console errors: {self.errors}"
        assert not self.foreign, f"requests that left localhost: {self.foreign}"


@pytest.fixture
def context_factory(browser):
    """Make browser contexts (optionally with JavaScript off); closes them afterwards."""
    contexts = []

    def make(**kwargs):
        context = browser.new_context(**kwargs)
        context.set_default_timeout(WAIT_GUARD_MS)
        context.set_default_navigation_timeout(WAIT_GUARD_MS)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def page_and_watch(context_factory):
    """A fresh page with a PageWatch attached."""
    page = context_factory().new_page()
    return page, PageWatch(page)
