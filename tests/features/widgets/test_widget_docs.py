"""Docs as tests: every widget and each of its parameters is documented."""

from __future__ import annotations

import pytest
from helpers import REPO

from coursegen.errors import Problems
from coursegen.features.widgets.spec import load_widgets

WIDGETS = load_widgets(REPO, Problems())


def test_the_repository_widgets_load_without_problems():
    problems = Problems()
    assert sorted(load_widgets(REPO, problems)) == ["bf16-floors", "kda-chunkwise", "memory-per-sequence", "overflow-slider"]
    assert not problems.items


@pytest.mark.parametrize("name", sorted(WIDGETS))
def test_every_widget_and_parameter_is_documented(name):
    readme = (REPO / "README.md").read_text()
    guide = (REPO / "docs" / "widgets.md").read_text()
    assert f"`{name}`" in readme and f"### `{name}`" in guide
    for param in WIDGETS[name].params:
        assert f"`{param.name}`" in readme, param.name
        assert f"| `{param.name}` | {param.type} |" in guide, param.name
