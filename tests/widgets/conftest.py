"""Fixtures for widget tests: a private copy of the widget course, built in memory."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers import FIXTURES, copy_course


@pytest.fixture
def widget_course(tmp_path) -> Path:
    """A private copy of tests/fixtures/widgets (a lesson with both widgets, Pyodide self-hosted)."""
    return copy_course(FIXTURES / "widgets", tmp_path / "widgets")


def figure_states(html: str, name: str) -> list[tuple[dict, dict]]:
    """Return [(params, result)] baked into the page for the first figure of widget `name`."""
    figure = html[html.index(f'data-widget="{name}"'):]
    data = json.loads(re.search(r"<script type=\"application/json\" data-widget-states>(.*?)</script>",
                                figure, re.S).group(1))
    width = len(data["params"])
    return [(dict(zip(data["params"], row[:width])), {**data["const"], **dict(zip(data["keys"], row[width:]))})
            for row in data["rows"]]


def runtime_settings(html: str) -> dict:
    """Return the page's widget runtime settings (worker, Pyodide base URL, SRI, kernels wheel)."""
    return json.loads(re.search(r"data-widget-runtime>(.*?)</script>", html, re.S).group(1))
