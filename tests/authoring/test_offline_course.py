"""`build --offline` in a course repository (no package.json of this repository): told how to get
Pyodide, and self-hosting it from the course's own node_modules/ once it is there."""

from __future__ import annotations

import json

from helpers import run_cli


def test_offline_without_pyodide_says_how_to_get_it(tmp_path, capsys):
    course = tmp_path / "knots"
    assert run_cli(capsys, "init", course)[0] == 0
    status, _, err = run_cli(capsys, "--root", course, "build", "--offline")
    assert status == 1 and "Traceback" not in err
    assert err.startswith("course.yaml:1: pyodide source is 'local' but 'node_modules/pyodide' holds no pyodide.mjs")
    assert "in the course folder run 'npm install pyodide@314.0.7'" in err and "npm ci" not in err


def test_offline_self_hosts_the_course_folders_own_pyodide(tmp_path, capsys):
    course = tmp_path / "knots"
    assert run_cli(capsys, "init", course)[0] == 0
    dist = course / "node_modules" / "pyodide"
    dist.mkdir(parents=True)
    for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"):
        (dist / name).write_bytes(f"stand-in for {name}".encode())
    (dist / "pyodide-lock.json").write_text(json.dumps({"packages": {}}))
    (dist / "package.json").write_text(json.dumps({"name": "pyodide", "version": "314.0.7"}))  # as npm's has
    status, _, err = run_cli(capsys, "--root", course, "build", "--offline", "--strict")
    assert status == 0, err
    site = course / "site"
    assert (site / "pyodide" / "pyodide.mjs").read_bytes() == b"stand-in for pyodide.mjs"
    page = (site / "welcome.html").read_text()
    assert "cdn.jsdelivr.net" not in page and '"indexURL":"pyodide/"' in page
