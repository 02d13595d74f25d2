"""The course package's wheel (widget_site.write_wheel, the one live widgets load) is a wheel pip installs."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import subprocess
import zipfile

import pytest
from helpers import REPO, clean_env, make_venv

from coursegen.features.widgets.site import package_wheel, wheel_name

pytestmark = pytest.mark.slow


def test_pip_installs_the_kernels_wheel_and_python_imports_it_from_there(tmp_path):
    _, data = package_wheel(REPO)
    wheel = tmp_path / wheel_name("kernels")
    wheel.write_bytes(data)
    env = clean_env()
    python = make_venv(tmp_path / "venv")  # the test run's numpy stays visible: the kernels need it
    installed = subprocess.run(
        [python, "-m", "pip", "install", "--no-index", "--no-deps", wheel],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    code = "import kernels, pathlib; print(pathlib.Path(kernels.__file__).relative_to(sys.prefix))"
    imported = subprocess.run(
        [python, "-I", "-c", "import sys; " + code], capture_output=True, text=True, env=env, cwd=tmp_path, check=True
    )
    assert imported.stdout.strip().startswith("lib/") and imported.stdout.strip().endswith("kernels/__init__.py")


def test_record_lists_every_entry_with_its_digest_and_size():
    wheel = zipfile.ZipFile(io.BytesIO(package_wheel(REPO)[1]))
    record_name = "kernels-0.1.0.dist-info/RECORD"
    rows = list(csv.reader(io.StringIO(wheel.read(record_name).decode())))
    assert [row[0] for row in rows] == wheel.namelist() and rows[-1] == [record_name, "", ""]
    for name, digest, size in rows[:-1]:
        data = wheel.read(name)
        assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert int(size) == len(data)
    assert {info.external_attr >> 16 for info in wheel.infolist()} == {0o100664}


def test_source_date_epoch_is_read_not_set_and_held_within_what_a_zip_entry_can_hold(monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    first = package_wheel(REPO)
    assert "SOURCE_DATE_EPOCH" not in os.environ
    for epoch, date_time in (
        ("1700000000", (2023, 11, 14, 22, 13, 20)),
        ("100", (1980, 1, 1, 0, 0, 0)),
        ("253402300799", (2107, 12, 31, 23, 59, 58)),
    ):  # zip times count in two seconds
        monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
        wheel = zipfile.ZipFile(io.BytesIO(package_wheel(REPO)[1]))
        assert {info.date_time for info in wheel.infolist()} == {date_time}
        assert os.environ["SOURCE_DATE_EPOCH"] == epoch
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert package_wheel(REPO) == first
