"""Two-core mapping: the same results as a plain loop, whatever the forked child does."""
from __future__ import annotations

import os

import pytest

from coursegen.parallel import MIN_ITEMS, map_in_two

ITEMS = list(range(MIN_ITEMS * 2))


def test_results_match_a_plain_loop_and_the_second_half_runs_in_another_process():
    parent = os.getpid()
    results = map_in_two(lambda n: (n * n, os.getpid()), ITEMS)
    assert [value for value, _ in results] == [n * n for n in ITEMS]
    pids = [pid for _, pid in results]
    assert set(pids[:len(ITEMS) // 2]) == {parent}
    assert parent not in pids[len(ITEMS) // 2:]


def test_small_batches_and_disallowed_forks_stay_in_this_process():
    parent = os.getpid()
    assert {pid for pid in map_in_two(lambda n: os.getpid(), ITEMS[:MIN_ITEMS - 1])} == {parent}
    assert {pid for pid in map_in_two(lambda n: os.getpid(), ITEMS, allowed=False)} == {parent}


def test_a_failing_child_has_its_half_redone_here():
    parent = os.getpid()

    def fragile(n):
        if os.getpid() != parent:
            raise RuntimeError("only the child fails")
        return n + 1
    assert map_in_two(fragile, ITEMS) == [n + 1 for n in ITEMS]


def test_results_that_cannot_be_pickled_are_redone_here():
    results = map_in_two(lambda n: (lambda: n), ITEMS)  # a lambda cannot cross the pipe
    assert [make() for make in results] == ITEMS


def test_an_error_in_the_work_itself_surfaces_from_this_process():
    def broken(n):
        if n == len(ITEMS) - 1:  # in the child's half: redone here, where it raises
            raise ValueError("item is bad")
        return n
    with pytest.raises(ValueError, match="item is bad"):
        map_in_two(broken, ITEMS)
