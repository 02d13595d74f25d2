"""Content tests reuse the shared Playwright fixtures (Debian's Chromium, localhost only)."""
from browser.conftest import browser, context_factory, page_and_watch  # noqa: F401
