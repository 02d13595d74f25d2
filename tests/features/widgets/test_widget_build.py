"""What the build puts in the page and the site: baked results from the kernels, the wheel, Pyodide."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from io import BytesIO

import pytest
from helpers import REPO
from widget_pages import figure_states, runtime_settings

from coursegen.errors import ContentError
from coursegen.features.widgets.site import sri
from coursegen.pipeline import BuildOptions, build_site
from kernels import kda, overflow


@pytest.fixture
def outputs(widget_course):
    return build_site(widget_course).outputs


def test_every_baked_overflow_state_equals_a_direct_kernels_call(outputs):
    states = figure_states(outputs["gauges.html"].decode(), "overflow-slider")
    assert len(states) == 19 * 16
    for params, result in states:
        direct = overflow.analyse(params["g_min"], params["tile"])
        for key in ("fits", "verdict", "worst_log_decay", "largest_safe_tile"):
            assert result[key] == direct[key], (params, key)
        assert result["margin_nats"] == round(direct["margin_nats"], 4)
        assert result["log10"] == [round(p["log10_reciprocal"], 1) for p in direct["positions"]]
        assert result["finite"] == "".join("1" if p["bf16_finite"] else "0" for p in direct["positions"])


@pytest.mark.parametrize("g_min, tile, fits", [(-5, 16, True), (-6, 16, False), (-5, 24, False), (-5, 17, None)])
def test_the_slider_grid_holds_the_lessons_cases(outputs, g_min, tile, fits):
    baked = {(p["g_min"], p["tile"]): r for p, r in figure_states(outputs["gauges.html"].decode(), "overflow-slider")}
    if fits is None:  # off the tile grid: answered live, not baked
        assert (g_min, tile) not in baked
    else:
        assert baked[(g_min, tile)]["fits"] is fits


def test_every_baked_kda_state_equals_a_direct_kernels_call_without_timings(outputs):
    states = figure_states(outputs["gauges.html"].decode(), "kda-chunkwise")
    assert len(states) == 8
    for params, result in states:
        direct = kda.demo(**params)
        for machine_dependent in ("max_abs_diff", "diff_text", "recurrent_ms", "chunkwise_ms", "measured_text"):
            assert machine_dependent not in result
        assert result["agree"] is True and result["agree_bound"] == 1e-12 > direct["max_abs_diff"]
        assert result["equal_text"] == "Both forms give the same outputs: none differs by more than 10⁻¹²."
        assert [(c["start"], c["end"], c["bf16_dense_finite"]) for c in result["chunks"]] == [
            (c["start"], c["end"], c["bf16_dense_finite"]) for c in direct["chunks"]
        ]
        assert [c["max_log10_reciprocal"] for c in result["chunks"]] == [
            round(c["max_log10_reciprocal"], 2) for c in direct["chunks"]
        ]
    unbounded = [r for p, r in states if p["gate"] == "unbounded"]
    assert any(not c["bf16_dense_finite"] for r in unbounded for c in r["chunks"])
    assert all(c["bf16_dense_finite"] for p, r in states if p["gate"] == "bounded" for c in r["chunks"])


def test_the_page_shows_the_default_results_as_plain_html(outputs):
    html = outputs["gauges.html"].decode()
    assert "fits: 80 nats of decay stay 8.72 nats under BF16&#39;s ceiling of 88.72" in html
    assert ">5 × 16 = 80 nats<" in html and ">5.54 × 10³⁴<" in html and "(ln ≈ 88.72)" in html
    assert html.count('class="is-finite"') >= 16 and "Show the Python" in html
    assert "The exact difference and the timings come only from live runs" in html
    assert not re.search(r"difference is \d|× 10⁻¹", html)  # no round-off on the page
    assert '<form class="widget-controls" data-widget-controls hidden>' in html


def test_pages_without_widgets_load_no_widget_code(outputs):
    # the import map names every script of the theme, widgets.js too; naming it loads nothing
    plain = re.sub(r'<script type="importmap">.*?</script>', "", outputs["plain.html"].decode(), flags=re.S)
    assert "widgets." not in plain and "data-widget" not in plain
    gauges = outputs["gauges.html"].decode()
    assert gauges.count('<script type="module" src="assets/widgets.') == 1
    assert gauges.count('<link rel="stylesheet" href="assets/widgets/') == 2
    assert gauges.count("data-widget-runtime") == 1


def test_the_widget_course_builds_byte_identically_twice(widget_course):
    assert build_site(widget_course).outputs == build_site(widget_course).outputs


def test_the_kernels_wheel_is_valid_content_hashed_and_importable(outputs, tmp_path):
    settings = runtime_settings(outputs["gauges.html"].decode())
    assert settings["module"] == "kernels" and settings["packages"] == ["ml-dtypes", "numpy"]
    path = settings["wheel"]
    assert path.startswith("py/") and path.endswith("/kernels-0.1.0-py3-none-any.whl")
    wheel = zipfile.ZipFile(BytesIO(outputs[path]))
    names = wheel.namelist()
    assert names[:-1] == sorted(names[:-1]) and names[-1] == "kernels-0.1.0.dist-info/RECORD"
    assert {"kernels/__init__.py", "kernels/overflow.py", "kernels/kda.py"} <= set(names)
    assert {info.date_time for info in wheel.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    wheel.extractall(tmp_path / "site-packages")
    code = "import sys; sys.path.insert(0, '.'); import kernels; print(kernels.__file__, kernels.overflow.analyse(-5, 16)['fits'])"
    run = subprocess.run(
        [sys.executable, "-I", "-c", code], cwd=tmp_path / "site-packages", capture_output=True, text=True, check=True
    )
    assert run.stdout.split() == [str(tmp_path / "site-packages" / "kernels" / "__init__.py"), "True"]


def test_a_local_pyodide_is_copied_into_the_site_with_its_sri(outputs):
    settings = runtime_settings(outputs["gauges.html"].decode())
    assert settings["indexURL"] == "pyodide/"
    assert settings["worker"] in outputs and settings["worker"].startswith("assets/pyodide-worker.")
    npm = REPO / "node_modules" / "pyodide"
    for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"):
        assert outputs["pyodide/" + name] == (npm / name).read_bytes()
    assert settings["integrity"] == sri((npm / "pyodide.mjs").read_bytes())
    assert "pyodide/package.json" not in outputs and "pyodide/README.md" not in outputs


def test_the_cdn_source_pins_the_version_and_hashes_the_npm_loader(widget_course):
    config = widget_course / "course.yaml"
    config.write_text(config.read_text().replace("  source: local", "  source: cdn"))
    outputs = build_site(widget_course).outputs
    settings = runtime_settings(outputs["gauges.html"].decode())
    assert settings["indexURL"] == "https://cdn.jsdelivr.net/pyodide/v314.0.7/full/"
    assert settings["integrity"] == sri((REPO / "node_modules" / "pyodide" / "pyodide.mjs").read_bytes())
    assert not any(path.startswith("pyodide/") for path in outputs)


def test_a_rebuild_hashes_the_npm_loader_again_once_it_changed(widget_course):
    """The loader's SRI is kept in the session by the file's stamp: a changed loader is hashed again."""
    from coursegen.memo import Memo

    from coursegen.features.widgets.site import cdn_integrity
    from coursegen.stages.config import PyodideConfig

    dist = widget_course / "pyodide-copy"
    dist.mkdir()
    (dist / "package.json").write_text(json.dumps({"version": "314.0.7"}))
    (dist / "pyodide.mjs").write_text("export const one = 1;\n")
    settings, memo = PyodideConfig(source="cdn", version="314.0.7", path="pyodide-copy"), Memo()
    assert cdn_integrity(dist, settings, memo) == sri(b"export const one = 1;\n")
    (dist / "pyodide.mjs").write_text("export const two = 2, more = 3;\n")
    assert cdn_integrity(dist, settings, memo) == sri(b"export const two = 2, more = 3;\n")


def test_the_cdn_source_uses_the_integrity_given_in_course_yaml(widget_course):
    config = widget_course / "course.yaml"
    config.write_text(
        config.read_text().replace("  source: local", "  source: cdn\n  version: 0.27.0\n  integrity: sha384-given")
    )
    settings = runtime_settings(build_site(widget_course).outputs["gauges.html"].decode())
    assert settings["integrity"] == "sha384-given"
    assert settings["indexURL"] == "https://cdn.jsdelivr.net/pyodide/v0.27.0/full/"


def test_another_cdn_version_without_integrity_is_an_error_at_the_pyodide_key(widget_course):
    config = widget_course / "course.yaml"
    config.write_text(config.read_text().replace("  source: local", "  source: cdn\n  version: 0.27.0"))
    with pytest.raises(ContentError) as caught:
        build_site(widget_course)
    assert caught.value.problems[0].format() == (
        "course.yaml:3: cannot work out the SRI hash of Pyodide 0.27.0's pyodide.mjs "
        "(node_modules/pyodide: found version 314.0.7)\n"
        "    hint: set pyodide.integrity in course.yaml to the 'sha384-…' value of that file"
    )


def test_a_local_source_without_a_distribution_is_an_error(widget_course):
    config = widget_course / "course.yaml"
    config.write_text(config.read_text().replace("  source: local", "  source: local\n  path: nowhere"))
    with pytest.raises(ContentError) as caught:
        build_site(widget_course)
    assert (
        caught.value.problems[0]
        .format()
        .startswith(
            "course.yaml:3: pyodide source is 'local' but 'nowhere' holds no pyodide.mjs\n    hint: run 'npm ci'"
        )
    )


def make_dist(
    course,
    packages: dict,
    version: str = "314.0.7",
    skip=(),
    runtime=("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"),
):
    """Make course/dist: the npm runtime's files, a lock file stating `version` and a wheel for each
    package (name → depends) except those in `skip`; point course.yaml at it."""
    import hashlib

    dist = course / "dist"
    dist.mkdir()
    npm = REPO / "node_modules" / "pyodide"
    for name in runtime:
        (dist / name).symlink_to(npm / name)
    lock = {
        "info": {"version": version},
        "packages": {
            name: {
                "file_name": f"{name}-1.0-wasm32.whl",
                "depends": deps,
                "sha256": hashlib.sha256(name.encode()).hexdigest(),
            }
            for name, deps in packages.items()
        },
    }
    (dist / "pyodide-lock.json").write_text(json.dumps(lock))
    for name in packages:
        if name not in skip:
            (dist / f"{name}-1.0-wasm32.whl").write_bytes(name.encode())
    config = course / "course.yaml"
    config.write_text(config.read_text().replace("  source: local", "  source: local\n  path: dist"))
    return dist


def test_a_full_distribution_contributes_only_the_wheels_the_kernels_need(widget_course):
    make_dist(widget_course, {"numpy": [], "ml-dtypes": ["numpy"], "scipy": ["numpy"]})
    result = build_site(widget_course)
    copied = sorted(p for p in result.outputs if p.startswith("pyodide/"))
    assert copied == [
        "pyodide/ml-dtypes-1.0-wasm32.whl",
        "pyodide/numpy-1.0-wasm32.whl",
        "pyodide/pyodide-lock.json",
        "pyodide/pyodide.asm.mjs",
        "pyodide/pyodide.asm.wasm",
        "pyodide/pyodide.mjs",
        "pyodide/python_stdlib.zip",
    ]
    assert not result.warnings
    assert "missing" not in runtime_settings(result.outputs["gauges.html"].decode())


def test_a_missing_or_changed_wheel_is_a_warning_and_the_page_says_live_python_is_not_available(widget_course):
    dist = make_dist(widget_course, {"numpy": [], "ml-dtypes": ["numpy"]}, skip=("ml-dtypes",))
    (dist / "numpy-1.0-wasm32.whl").write_bytes(b"not numpy")
    result = build_site(widget_course)
    assert [w.format() for w in result.warnings] == [
        "course.yaml:3: warning: the Pyodide copy in 'dist' cannot serve what the widgets need for live Python: "
        "ml-dtypes: ml-dtypes-1.0-wasm32.whl is not in the distribution; "
        "numpy: numpy-1.0-wasm32.whl does not match the sha256 of the lock file\n"
        "    hint: copy each wheel into 'dist' from the full Pyodide 314.0.7 distribution (the release tarball, or "
        "https://cdn.jsdelivr.net/pyodide/v314.0.7/full/<file name>), or set pyodide.path to a full distribution; "
        "until then live Python says it is not available on this site"
    ]
    assert runtime_settings(result.outputs["gauges.html"].decode())["missing"] == {
        "ml-dtypes": "ml-dtypes-1.0-wasm32.whl is not in the distribution",
        "numpy": "numpy-1.0-wasm32.whl does not match the sha256 of the lock file",
    }
    assert not any(p.endswith(".whl") for p in result.outputs if p.startswith("pyodide/"))
    assert "data-widget-runtime" not in result.outputs["plain.html"].decode()
    with pytest.raises(ContentError) as caught:
        build_site(widget_course, BuildOptions(strict=True))
    assert "ml-dtypes: ml-dtypes-1.0-wasm32.whl is not in the distribution" in caught.value.problems[0].format()


def test_a_package_whose_dependency_is_missing_is_not_available_either(widget_course):
    make_dist(widget_course, {"numpy": [], "ml-dtypes": ["numpy"]}, skip=("numpy",))
    result = build_site(widget_course)
    assert runtime_settings(result.outputs["gauges.html"].decode())["missing"] == {
        "ml-dtypes": "needs numpy",
        "numpy": "numpy-1.0-wasm32.whl is not in the distribution",
    }
    assert not any(p.endswith(".whl") for p in result.outputs if p.startswith("pyodide/"))  # of no use alone



def test_a_french_course_says_why_live_python_is_not_available_in_french(widget_course):
    make_dist(widget_course, {"numpy": [], "ml-dtypes": ["numpy"]}, skip=("numpy",))
    config = widget_course / "course.yaml"
    config.write_text("language: fr\n" + config.read_text())
    result = build_site(widget_course)
    assert runtime_settings(result.outputs["gauges.html"].decode())["missing"] == {
        "ml-dtypes": "a besoin de numpy",
        "numpy": "numpy-1.0-wasm32.whl ne fait pas partie de la distribution",
    }
    assert "numpy: numpy-1.0-wasm32.whl is not in the distribution" in result.warnings[0].format()  # the author's

def first_problem(course) -> str:
    """Return the first problem that stops the build of `course`, as printed."""
    with pytest.raises(ContentError) as caught:
        build_site(course)
    return caught.value.problems[0].format()


def test_a_distribution_of_another_version_is_an_error(widget_course):
    make_dist(widget_course, {"numpy": [], "ml-dtypes": []}, version="0.27.0")
    assert first_problem(widget_course) == (
        "course.yaml:3: the Pyodide distribution in 'dist' is version 0.27.0, but pyodide.version is 314.0.7\n"
        "    hint: the widget worker loads Pyodide 314.0.7: point pyodide.path at that release "
        "(npm package pyodide@314.0.7, or the release's full tarball)"
    )  # not "set pyodide.version to 0.27.0": the worker cannot load that release


def test_a_pin_of_another_release_is_told_which_release_the_worker_loads(widget_course):
    """Following the hint above the wrong way (pinning 0.27.7 to match the copy) must not read as if the
    worker loaded 0.27.7's layout."""
    dist = make_dist(widget_course, {"numpy": []}, version="0.27.7", runtime=("pyodide.mjs", "pyodide.asm.wasm"))
    (dist / "pyodide.asm.js").write_text("0.27's core")
    (dist / "python_stdlib.zip").write_bytes(b"stdlib")
    config = widget_course / "course.yaml"
    config.write_text(config.read_text().replace("  source: local", "  source: local\n  version: 0.27.7"))
    problem = first_problem(widget_course)
    assert problem == (
        "course.yaml:3: the Pyodide distribution in 'dist' lacks pyodide.asm.mjs: the widget worker loads "
        "Pyodide 314.0.7's layout, and pyodide.version 0.27.7 is another release\n"
        "    hint: set pyodide.version to 314.0.7 (or leave it out) and point pyodide.path at a Pyodide 314.0.7 "
        "distribution (npm package pyodide@314.0.7, or the release's full tarball)"
    )
    assert "0.27.7's layout" not in problem


def test_a_copy_of_the_worker_s_release_under_another_pin_is_told_to_pin_it(widget_course):
    make_dist(widget_course, {"numpy": [], "ml-dtypes": []})
    config = widget_course / "course.yaml"
    config.write_text(config.read_text().replace("  source: local", "  source: local\n  version: 0.27.7"))
    assert first_problem(widget_course).endswith("hint: set pyodide.version to 314.0.7 (or leave it out)")


def test_a_lock_file_that_is_not_one_is_an_error(widget_course):
    dist = make_dist(widget_course, {"numpy": []})
    (dist / "pyodide-lock.json").write_text('{"info": {"version": "314.0.7"}, "packages": {"numpy": {"depends": "x"}}}')
    assert first_problem(widget_course) == (
        "course.yaml:3: 'dist/pyodide-lock.json' is not a Pyodide lock file (JSON with a file_name for every package)\n"
        "    hint: point pyodide.path at an unmodified Pyodide 314.0.7 distribution"
    )


def test_a_distribution_that_states_no_version_is_read_from_its_loader(widget_course):
    dist = make_dist(widget_course, {"numpy": [], "ml-dtypes": []})
    lock = json.loads((dist / "pyodide-lock.json").read_text())
    del lock["info"]
    (dist / "pyodide-lock.json").write_text(json.dumps(lock))
    assert not build_site(widget_course).warnings  # the npm loader holds "314.0.7"
    (dist / "pyodide.mjs").unlink()
    (dist / "pyodide.mjs").write_text("// a loader of some other version")
    assert first_problem(widget_course) == (
        "course.yaml:3: the Pyodide distribution in 'dist' is of no stated version, but pyodide.version is 314.0.7\n"
        "    hint: the widget worker loads Pyodide 314.0.7: point pyodide.path at that release "
        "(npm package pyodide@314.0.7, or the release's full tarball)"
    )


def test_a_distribution_in_an_older_layout_names_the_files_the_worker_needs(widget_course):
    dist = make_dist(widget_course, {"numpy": []}, runtime=("pyodide.mjs",))
    for name in ("repodata.json", "pyodide.asm.js", "pyodide.asm.data", "pyodide_py.tar"):
        (dist / name).write_text("old")
    assert first_problem(widget_course) == (
        "course.yaml:3: the Pyodide distribution in 'dist' lacks pyodide.asm.mjs, pyodide.asm.wasm, "
        "python_stdlib.zip: the widget worker loads Pyodide 314.0.7's layout (repodata.json and pyodide.asm.js "
        "belong to Pyodide before 0.23)\n"
        "    hint: point pyodide.path at a Pyodide 314.0.7 distribution (npm package pyodide@314.0.7, "
        "or the release's full tarball)"
    )


def test_the_pinned_integrity_table_matches_the_npm_copy_of_that_version():
    from coursegen.features.widgets.site import KNOWN_INTEGRITY

    package = REPO / "node_modules" / "pyodide"
    version = json.loads((package / "package.json").read_text())["version"]
    assert KNOWN_INTEGRITY[version] == sri((package / "pyodide.mjs").read_bytes())


def test_a_fresh_clone_without_npm_packages_builds_the_sample_course_for_the_cdn(tmp_path):
    from helpers import copy_course

    root = copy_course(REPO, tmp_path / "course")
    (root / "node_modules").unlink()
    (root / "package.json").unlink()
    settings = runtime_settings(build_site(root).outputs["sequence-axis.html"].decode())
    assert settings["integrity"].startswith("sha384-")
    assert settings["indexURL"] == "https://cdn.jsdelivr.net/pyodide/v314.0.7/full/"


def test_the_sample_course_checks_clean_for_the_cdn_and_warns_offline_that_the_npm_copy_lacks_numpy(capsys):
    from helpers import run_cli

    assert run_cli(capsys, "--root", REPO, "check", "--strict")[0] == 0
    status, _, err = run_cli(capsys, "--root", REPO, "check", "--offline")
    assert status == 0 and err.count("warning:") == 1, err
    assert (
        "warning: the Pyodide copy in 'node_modules/pyodide' cannot serve what the widgets need for live Python: "
        "ml-dtypes: ml_dtypes-"
    ) in err and "; numpy: numpy-" in err
    status, _, err = run_cli(capsys, "--root", REPO, "check", "--offline", "--strict")
    assert status == 1 and "cannot serve what the widgets need" in err
