"""Fixtures for the question tests: a private copy of the review fixture course."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FIXTURES, copy_course


@pytest.fixture
def review_course(tmp_path) -> Path:
    """A private copy of tests/fixtures/review (with the repository's templates)."""
    return copy_course(FIXTURES / "review", tmp_path / "review")
