"""The site depends only on the sources: the same bytes under any BLAS, CPU path, thread count,
folder, hash seed and cache state.

Each build runs in its own process (`sys.executable build.py` from this worktree, with
PYTHONPATH pointing here), because BLAS reads its settings once, when numpy is first imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, copy_course

# Settings that change which floating-point code runs, and so its last bits:
# OpenBLAS's threads and kernels (Haswell's use FMA, Nehalem's do not; both are in the
# DYNAMIC_ARCH build numpy ships, which reports other names it lacks as a different core),
# OpenMP's threads, and numpy's own SIMD paths (without AVX-512 its float64 exp and log
# round differently; without AVX2 its float32 exp does too).
MACHINE_SETTINGS = (
    "OPENBLAS_NUM_THREADS",
    "OPENBLAS_CORETYPE",
    "OMP_NUM_THREADS",
    "NPY_DISABLE_CPU_FEATURES",
    "PYTHONHASHSEED",
    "LC_ALL",
    "TZ",
)
NO_AVX512 = "X86_V4 AVX512_ICL AVX512_SPR"
VARIANTS = {
    "one BLAS thread": {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
    "two OpenMP threads": {"OMP_NUM_THREADS": "2"},
    "Haswell BLAS kernels": {"OPENBLAS_CORETYPE": "Haswell"},
    "Nehalem BLAS kernels": {"OPENBLAS_CORETYPE": "Nehalem", "OPENBLAS_NUM_THREADS": "1"},
    "numpy without AVX-512": {"NPY_DISABLE_CPU_FEATURES": NO_AVX512},
    "numpy without AVX2 or AVX-512": {
        "NPY_DISABLE_CPU_FEATURES": "X86_V3 " + NO_AVX512,
        "OPENBLAS_CORETYPE": "Nehalem",
    },
    "C locale, a far time zone": {"LC_ALL": "C", "TZ": "Pacific/Kiritimati"},
}


def build(course: Path, out: Path, **settings: str) -> Path:
    """Build `course` into `out` in a fresh process with only `settings` among MACHINE_SETTINGS."""
    env = {k: v for k, v in os.environ.items() if k not in MACHINE_SETTINGS}
    env.update(settings, PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, str(REPO / "build.py"), "--root", str(course), "build", "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"build with {settings} failed:\n{done.stdout}{done.stderr}"
    return out


def site_files(site: Path) -> dict[str, bytes]:
    """Return {relative path: bytes} for every file under `site`."""
    return {path.relative_to(site).as_posix(): path.read_bytes() for path in sorted(site.rglob("*")) if path.is_file()}


def assert_same_site(expected: Path, actual: Path, what: str) -> None:
    """Fail naming the first file (in path order) whose bytes differ, and where."""
    want, got = site_files(expected), site_files(actual)
    assert sorted(want) == sorted(got), (
        f"{what}: files differ; only in the first build: "
        f"{sorted(set(want) - set(got))}, only in the second: "
        f"{sorted(set(got) - set(want))}"
    )
    for name in sorted(want):
        if want[name] != got[name]:
            at = next(
                (i for i, (a, b) in enumerate(zip(want[name], got[name])) if a != b),
                min(len(want[name]), len(got[name])),
            )
            pytest.fail(
                f"{what}: {name} differs first at byte {at}:\n"
                f"  {want[name][max(0, at - 80) : at + 80]!r}\n  {got[name][max(0, at - 80) : at + 80]!r}"
            )
    assert want, "the build wrote no files"


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The sample course built once with none of the machine settings and hash seed 0."""
    course = copy_course(REPO, tmp_path_factory.mktemp("a") / "c")
    return build(course, course / "site", PYTHONHASHSEED="0")


@pytest.fixture(scope="module")
def reference_course(reference) -> Path:
    return reference.parent


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_site_is_the_same_under_every_blas_and_cpu_setting(reference, reference_course, tmp_path, variant):
    site = build(reference_course, tmp_path / "site", PYTHONHASHSEED="0", **VARIANTS[variant])
    assert_same_site(reference, site, variant)


def test_the_site_is_the_same_from_another_folder_hash_seed_and_cold_cache(reference, tmp_path):
    """A second copy at a longer path, never built before, with another hash seed and newer files."""
    course = copy_course(REPO, tmp_path / "a-much-longer-folder-name" / "with more, and spaces" / "course")
    assert not (course / ".coursegen-cache").exists()
    later = time.time() + 86400 * 400  # a checkout made another day: every source's mtime differs
    for folder, _, names in os.walk(course):  # not into the node_modules link: that is the repository's
        for name in names:
            if not os.path.islink(os.path.join(folder, name)):
                os.utime(os.path.join(folder, name), (later, later))
    site = build(course, tmp_path / "elsewhere" / "out", PYTHONHASHSEED="4242")
    assert (course / ".coursegen-cache").exists()  # the build did fill its own cache
    assert_same_site(reference, site, "another folder, PYTHONHASHSEED=4242, cold cache")


def test_a_warm_cache_and_a_random_hash_seed_change_nothing(reference, reference_course, tmp_path):
    """The reference course again: its cache is now warm, and the hash seed is left random."""
    assert (reference_course / ".coursegen-cache").exists()
    site = build(reference_course, tmp_path / "site", PYTHONHASHSEED="random")
    assert_same_site(reference, site, "warm cache, random hash seed")
