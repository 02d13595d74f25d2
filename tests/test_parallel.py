"""The process-pool map: the same results as a plain loop, whatever the workers do."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from coursegen import parallel
from coursegen.parallel import MIN_ITEMS, parallel_map

ITEMS = list(range(MIN_ITEMS * 4))


def slowly(n):
    time.sleep(0.005)  # long enough that the workers start before this process has taken everything
    return n * n, os.getpid()


def test_results_match_a_plain_loop_and_every_process_shares_the_work():
    results = parallel_map(slowly, ITEMS, jobs=3)
    assert [value for value, _ in results] == [n * n for n in ITEMS]
    pids = [pid for _, pid in results]
    assert os.getpid() in pids and len(set(pids)) == 3


def test_jobs_1_small_batches_and_other_threads_keep_the_work_in_this_process(monkeypatch):
    parent = os.getpid()
    started = []
    real_pool = parallel.ProcessPoolExecutor
    monkeypatch.setattr(parallel, "ProcessPoolExecutor", lambda *a, **k: started.append(1) or real_pool(*a, **k))
    assert {pid for pid in parallel_map(lambda n: os.getpid(), ITEMS, jobs=1)} == {parent}
    assert {pid for pid in parallel_map(lambda n: os.getpid(), ITEMS[: MIN_ITEMS - 1], jobs=2)} == {parent}
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # as in `serve`: a fork could inherit a lock it holds
    other.start()
    try:
        assert {pid for pid in parallel_map(lambda n: os.getpid(), ITEMS, jobs=2)} == {parent}
    finally:
        stop.set()
        other.join()
    assert started == []  # no pool was even made
    assert len({pid for _, pid in parallel_map(slowly, ITEMS, jobs=2)}) == 2 and started == [1]


def test_the_default_is_one_process_per_core(monkeypatch):
    assert parallel.default_jobs() >= 1
    seen = []
    monkeypatch.setattr(parallel, "default_jobs", lambda: seen.append("asked") or 1)
    assert parallel_map(slowly, ITEMS)[0] == (0, os.getpid()) and seen == ["asked"]


def test_chunks_cover_every_item_once_and_shrink_as_the_two_ends_meet():
    for count in (MIN_ITEMS, 100, 2000, 2001):
        for jobs in (2, 3, 8):
            split, theirs = parallel._Split(count, jobs), []
            while taken := split.take_front():  # as a worker and this process take turns
                theirs.append(taken)
                split.take()
            covered = sorted(i for taken in theirs + split.mine for i in taken)
            assert covered == list(range(count))
            assert max(len(taken) for taken in theirs + split.mine) <= parallel.CHUNK
            assert len(theirs[0]) == max(1, min(parallel.CHUNK, count // (jobs * parallel.CHUNKS_PER_JOB)))
            for side in (theirs, split.mine):
                assert [len(t) for t in side] == sorted((len(t) for t in side), reverse=True)
            assert len(split.mine[-1]) == 1 and len(theirs[-1]) == 1  # both ends shrink to one item as they meet


def test_what_a_failing_worker_took_is_redone_here():
    parent = os.getpid()
    done_where = []

    def fragile(n):
        time.sleep(0.002)
        if os.getpid() != parent:
            raise RuntimeError("only the workers fail")
        done_where.append(n)  # this process's own list: what the workers did never shows here
        return n + 1

    assert parallel_map(fragile, ITEMS, jobs=3) == [n + 1 for n in ITEMS]
    assert sorted(done_where) == ITEMS  # every item, the workers' included, was done here once


def test_results_that_cannot_be_pickled_are_redone_here():
    results = parallel_map(lambda n: lambda: n, ITEMS, jobs=2)  # a lambda cannot cross to this process
    assert [make() for make in results] == ITEMS


def test_an_error_in_the_work_itself_surfaces_from_this_process():
    def broken(n):
        time.sleep(0.002)
        if n == 5:  # a worker takes it (the front of the list), the error is raised here
            raise ValueError("item is bad")
        return n

    with pytest.raises(ValueError, match="item is bad"):
        parallel_map(broken, ITEMS, jobs=2)


def test_text_printed_before_the_split_is_printed_once():
    """The workers inherit this process's output buffer: it must be empty when they fork
    (multiprocessing flushes it; a hand-made fork would print the text twice)."""
    script = (
        "import sys, time; from coursegen.parallel import parallel_map; sys.stdout.write('before'); "
        "parallel_map(lambda n: time.sleep(0.002), list(range(96)), jobs=2)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert out.stdout == "before"


def test_meanwhile_runs_here_once_and_only_when_the_work_is_split():
    ran = []
    parallel_map(slowly, ITEMS, jobs=2, meanwhile=lambda: ran.append(os.getpid()))
    assert ran == [os.getpid()]
    parallel_map(slowly, ITEMS[: MIN_ITEMS - 1], jobs=2, meanwhile=lambda: ran.append("serial"))
    parallel_map(slowly, ITEMS, jobs=1, meanwhile=lambda: ran.append("one job"))
    assert ran == [os.getpid()]


def test_megabytes_of_results_cross_intact():
    def bulky(n):
        time.sleep(0.002)
        return str(n) * 100_000, os.getpid()  # a few hundred kB each: many pipe-fulls in all

    results = parallel_map(bulky, ITEMS, jobs=2)
    assert [text for text, _ in results] == [str(n) * 100_000 for n in ITEMS]
    assert len({pid for _, pid in results}) == 2


def test_a_worker_that_dies_without_a_word_has_its_items_redone_here():
    parent = os.getpid()

    def mortal(n):
        time.sleep(0.002)
        if os.getpid() != parent and n >= 10:
            os._exit(3)  # no exception, no message: the pool breaks
        return -n

    assert parallel_map(mortal, ITEMS, jobs=3) == [-n for n in ITEMS]


def test_jobs_on_the_command_line_reaches_the_pool_and_1_makes_none(tmp_path, capsys, monkeypatch):
    from helpers import REPO, run_cli

    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))  # for this test only: it has a kernels.py too
    from generated_course import copy_engine_parts, write_course

    root = write_course(tmp_path / "gen", count=MIN_ITEMS + 6)
    copy_engine_parts(REPO, root)
    pools = []
    real_pool = parallel.ProcessPoolExecutor
    monkeypatch.setattr(parallel, "ProcessPoolExecutor", lambda **k: pools.append(k["max_workers"]) or real_pool(**k))
    assert run_cli(capsys, "--root", root, "build", "--jobs", "3")[0] == 0
    assert pools == [2, 2]  # parsing, then rendering: two workers beside this process
    site = {p.relative_to(root / "site"): p.read_bytes() for p in (root / "site").rglob("*") if p.is_file()}
    pools.clear()
    assert run_cli(capsys, "--root", root, "build", "--jobs", "1")[0] == 0
    assert pools == []
    assert {p.relative_to(root / "site"): p.read_bytes() for p in (root / "site").rglob("*") if p.is_file()} == site
    status, _, err = run_cli(capsys, "--root", root, "check", "--jobs", "0")
    assert status == 2 and "--jobs: must be a whole number of processes, at least 1, found '0'" in err
