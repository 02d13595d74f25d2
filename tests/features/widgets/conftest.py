"""Fixtures for widget tests: a private copy of the widget course, built in memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FIXTURES, copy_course


@pytest.fixture
def widget_course(tmp_path) -> Path:
    """A private copy of tests/fixtures/widgets (a lesson with both widgets, Pyodide self-hosted)."""
    return copy_course(FIXTURES / "widgets", tmp_path / "widgets")
