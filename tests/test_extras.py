"""A module the course's Python imports and the build's environment lacks is named with what to install:
coursegen's bfloat16 extra for ml_dtypes, the course's requirements.txt for anything else."""

from __future__ import annotations

import subprocess
import sys

from helpers import clean_env, run_cli

from coursegen import __version__

# As where ml_dtypes is not installed: its import fails as Python fails it for any missing module.
WITHOUT_ML_DTYPES = """
import sys
from importlib.machinery import PathFinder

class NotInstalled(PathFinder):
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] == "ml_dtypes":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled)
from coursegen.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_course_package_that_needs_ml_dtypes_names_the_bfloat16_extra(tmp_path, capsys):
    course = tmp_path / "tides"
    assert run_cli(capsys, "init", course)[0] == 0
    growth = course / "kernels" / "growth.py"
    growth.write_text("import ml_dtypes\n" + growth.read_text())
    env = clean_env()
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_ML_DTYPES, "--root", course, "check"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    first, hint = done.stderr.splitlines()[:2]
    assert (
        first
        == "lessons/01-welcome.md:15:1: kernels/ cannot be imported: ModuleNotFoundError: No module named 'ml_dtypes'"
    )
    assert hint == (
        '    hint: ml_dtypes comes with coursegen\'s bfloat16 extra: pip install "coursegen[bfloat16]"; '
        f"in requirements.txt write coursegen[bfloat16]=={__version__}"
    )


def test_a_widget_that_imports_a_module_not_installed_says_to_install_it_and_list_it(tmp_path, capsys):
    course = tmp_path / "tides"
    assert run_cli(capsys, "init", course)[0] == 0
    widget = course / "widgets" / "growth-steps" / "widget.py"
    widget.write_text("import tidal_tables_nowhere\n" + widget.read_text())
    status, _, err = run_cli(capsys, "--root", course, "check")
    assert status == 1 and "Traceback" not in err
    first, hint = err.splitlines()[:2]
    assert first.endswith(
        "widget 'growth-steps' failed for rate=5 steps=10: ModuleNotFoundError: No module named "
        "'tidal_tables_nowhere' (widgets/growth-steps/widget.py line 1)"
    ), first
    assert hint == (
        "    hint: install the package that provides 'tidal_tables_nowhere' (pip install …), and list it, pinned, "
        "in the course's requirements.txt so the published build has it too"
    )


def test_matplotlib_missing_is_the_plots_extra():
    from coursegen.extras import missing_module_hint

    assert missing_module_hint(ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib")) == (
        f'matplotlib comes with coursegen\'s plots extra: pip install "coursegen[plots]"; '
        f"in requirements.txt write coursegen[plots]=={__version__}"
    )
