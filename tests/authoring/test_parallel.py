"""Two-core mapping: the same results as a plain loop, whatever the forked child does."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coursegen.parallel import MIN_ITEMS, map_in_two

ITEMS = list(range(MIN_ITEMS * 2))


def slowly(n):
    time.sleep(0.005)  # long enough that the child starts before this process has taken everything
    return n * n, os.getpid()


def test_results_match_a_plain_loop_and_both_processes_share_the_work():
    results = map_in_two(slowly, ITEMS)
    assert [value for value, _ in results] == [n * n for n in ITEMS]
    pids = [pid for _, pid in results]
    assert os.getpid() in pids and len(set(pids)) == 2


def test_small_batches_and_disallowed_forks_stay_in_this_process():
    parent = os.getpid()
    assert {pid for pid in map_in_two(lambda n: os.getpid(), ITEMS[:MIN_ITEMS - 1])} == {parent}
    assert {pid for pid in map_in_two(lambda n: os.getpid(), ITEMS, allowed=False)} == {parent}


def test_what_a_failing_child_took_is_redone_here():
    parent = os.getpid()

    def fragile(n):
        time.sleep(0.002)
        if os.getpid() != parent:
            raise RuntimeError("only the child fails")
        return n + 1
    assert map_in_two(fragile, ITEMS) == [n + 1 for n in ITEMS]


def test_results_that_cannot_be_pickled_are_redone_here():
    results = map_in_two(lambda n: (lambda: n), ITEMS)  # a lambda cannot cross the pipe
    assert [make() for make in results] == ITEMS


def test_an_error_in_the_work_itself_surfaces_from_this_process():
    def broken(n):
        time.sleep(0.002)
        if n == len(ITEMS) // 2:  # whichever process takes it, the error is raised here
            raise ValueError("item is bad")
        return n
    with pytest.raises(ValueError, match="item is bad"):
        map_in_two(broken, ITEMS)


def test_text_printed_before_the_split_is_printed_once(tmp_path):
    """The child inherits this process's output buffer: it must be empty when the fork happens
    (multiprocessing flushes it; a hand-made fork would print the text twice)."""
    script = ("import sys, time; from coursegen.parallel import map_in_two; sys.stdout.write('before'); "
              "map_in_two(lambda n: time.sleep(0.002), list(range(48)))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout == "before"


def test_meanwhile_runs_here_once_and_only_when_the_work_is_split():
    ran = []
    map_in_two(slowly, ITEMS, meanwhile=lambda: ran.append(os.getpid()))
    assert ran == [os.getpid()]
    map_in_two(slowly, ITEMS[:MIN_ITEMS - 1], meanwhile=lambda: ran.append("serial"))
    assert ran == [os.getpid()]


def test_megabytes_of_results_cross_intact():
    def bulky(n):
        time.sleep(0.002)
        return str(n) * 100_000, os.getpid()  # a few hundred kB each: many pipe-fulls in all
    results = map_in_two(bulky, ITEMS)
    assert [text for text, _ in results] == [str(n) * 100_000 for n in ITEMS]
    assert len({pid for _, pid in results}) == 2


def test_a_child_that_dies_without_a_word_has_its_items_redone_here():
    parent = os.getpid()

    def mortal(n):
        time.sleep(0.002)
        if os.getpid() != parent and n >= len(ITEMS) // 2:
            os._exit(3)  # no exception, no message: the pipe just closes
        return -n
    assert map_in_two(mortal, ITEMS) == [-n for n in ITEMS]
