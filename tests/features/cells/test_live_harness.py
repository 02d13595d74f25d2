"""The page's live harness (figures.py + live.py as one source) runs cells as the build does, without coursegen."""

from __future__ import annotations

import builtins
import re

import pytest

from coursegen.features.cells.page import HARNESS, imported, page_packages
from coursegen.features.cells.source import CodeCell


@pytest.fixture
def harness(monkeypatch):
    """The harness's namespace as the page's worker makes it: no coursegen to import.

    In the page the harness replaces `plt.show` in its own Python; here that Python is pytest's, whose
    later builds fork their workers from it: the fixture puts pyplot's own `show` back afterwards, or a
    later build's `plt.show()` would hand its figures to this test's finished cell."""
    pyplot = pytest.importorskip("matplotlib.pyplot")
    monkeypatch.setattr(pyplot, "show", pyplot.show)

    def guarded(name, *args, **kwargs):
        if name.startswith("coursegen"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return builtins.__import__(name, *args, **kwargs)

    namespace = {"__builtins__": {**vars(builtins), "__import__": guarded}, "__name__": "harness"}
    exec(compile(HARNESS, "<harness>", "exec"), namespace)
    return namespace


def test_a_live_run_runs_the_earlier_cells_first_and_returns_the_last_cells_outputs(harness):
    cells = [["x = 6\nprint('first')\n", []], ["print(x * 7)\nx / 4\n", []]]
    assert harness["run"](cells=cells, index=1) == {"outputs": [["stdout", "42\n", 0], ["text", "1.5", 0]]}


def test_a_live_run_reports_an_error_in_the_edited_cell_and_in_an_earlier_one(harness):
    assert harness["run"](cells=[["1 / 0\n", []]], index=0)["error"] == "ZeroDivisionError: division by zero"
    assert harness["run"](cells=[["1 / 0\n", []], ["2\n", []]], index=1) == {
        "error": "cell 1 above raised ZeroDivisionError: division by zero"
    }
    shown = harness["run"](cells=[["1 / 0\n", ["raises-exception"]]], index=0)
    assert shown == {"outputs": [["error", "ZeroDivisionError: division by zero", 0]]}


def test_a_live_figure_is_drawn_as_the_build_draws_it(harness):
    code = "import matplotlib.pyplot as plt\nprint('a')\nplt.plot([1, 2])\nplt.show()\nprint('b')\n"
    outputs = harness["run"](cells=[[code, []]], index=0)["outputs"]
    assert [kind for kind, _, _ in outputs] == ["stdout", "svg", "stdout"]
    assert "style=" not in outputs[1][1] and 'stroke="currentColor"' in outputs[1][1]
    assert re.match(r'<svg role="img" aria-label="Figure" fill="currentColor"', outputs[1][1])


def test_the_page_loads_the_pyodide_packages_its_cells_import_and_its_package_imports(tmp_path):
    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / "core.py").write_text("import numpy as np\nimport ml_dtypes\n")
    cell = CodeCell("", "import matplotlib.pyplot as plt\nfrom pack import core\nimport json\n", 1, ())
    assert page_packages([cell], tmp_path, "pack") == ["matplotlib", "ml-dtypes", "numpy"]
    assert page_packages([CodeCell("", "import json\n", 1, ())], tmp_path, "pack") == []
    assert imported("from . import x\nimport a.b, c") == {"a", "c"}
