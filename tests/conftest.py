"""Shared fixtures: private copies of the sample and mini courses."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FIXTURES, REPO, copy_course


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files from this run")


@pytest.fixture(autouse=True)
def cache_key_of_this_run(tmp_path_factory, monkeypatch):
    """The key that signs .coursegen-cache/ files (coursegen.cache) lives in this run's temporary folder, not the
    user's ~/.cache: one key for the whole run, as one user has, for the builds of the tests and their children."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))


@pytest.fixture
def sample_course(tmp_path) -> Path:
    """A private copy of the repository's sample course."""
    return copy_course(REPO, tmp_path / "course")


@pytest.fixture
def mini_course(tmp_path) -> Path:
    """A private copy of the small fixed course in tests/fixtures/mini."""
    return copy_course(FIXTURES / "mini", tmp_path / "mini")


def pytest_collection_modifyitems(items):
    """Run the browser tests last: their session-wide Chromium keeps a thread (Playwright's
    asyncio-waitpid) alive until the session ends, and with another thread running the build
    never forks (parallel.can_fork), which the tests of parallel_map and the author-code worker
    check. The order within each group stays pytest's."""
    items.sort(key=lambda item: "browser" in Path(str(item.path)).parts)
