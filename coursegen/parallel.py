"""Doing one step for many pages on several cores: a process pool and this process share the work.

`parallel_map(work, items, jobs)` is `[work(item) for item in items]` with `jobs` processes
working, this one included. A ProcessPoolExecutor of `jobs - 1` workers gets one task each: take
chunks of items from the front of the list until none is left, and return their results. This
process takes chunks from the back meanwhile. The two ends are one pair of shared counters (the
workers are forks, so they share them), so nobody waits for a hand-out: a thread of this process
handing out chunks would wait for the GIL behind this process's own work and leave the workers
idle. Chunks shrink as the middle nears, down to one item, so all finish close together, and
this process pickles nothing of its own share.
`jobs=1` starts no pool at all.

The workers are forks of this process, made when the map starts: they inherit the work function
and the items (a closure over the parser, the templates, the linked course) without pickling them;
only results come back. The other start methods would have to rebuild that state in every
worker: `spawn` and `forkserver` start an interpreter that imports coursegen and makes the parser
again before it can parse a page (see docs/architecture.md for the figures), and the work
function, a closure, cannot be pickled at all. Forking is only safe when no other thread runs
(one could hold a lock the child inherits, held forever): `serve`'s server and watcher threads
do, so there the work stays in this process.

Whatever a worker fails to deliver (it raises, its results cannot be pickled, it dies) is done
again here, where errors surface as they would without a pool, so the output is the same either way.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

MIN_ITEMS = 24  # below this, starting a pool costs more than it saves
CHUNK = 16  # most items per take: tens of milliseconds of work
CHUNKS_PER_JOB = 4  # a chunk is at most 1/(jobs × this) of what is left: chunks shrink as the ends meet


def default_jobs() -> int:
    """Return the number of cores this process may run on (`--jobs`' default)."""
    if hasattr(os, "process_cpu_count"):  # Python 3.13+: the affinity mask where there is one
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def parallel_map(
    work: Callable[[Item], Result],
    items: Sequence[Item],
    jobs: int | None = None,
    meanwhile: Callable[[], None] | None = None,
) -> list[Result]:
    """Return `[work(item) for item in items]`, computed by `jobs` processes (default: one per core).

    `meanwhile()`, if given, runs in this process once the pool has started, before it takes any
    items: preparation for a later stage that would otherwise run on one core while the others
    idle (the workers take more items meanwhile). It must not change any result, because it runs
    only when the work is split: in one process it would simply be done later, when needed.
    """
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 2 or len(items) < MIN_ITEMS or not can_fork():
        return [work(item) for item in items]
    split = _Split(len(items), jobs)
    pool = ProcessPoolExecutor(
        max_workers=split.workers,
        initializer=_inherit,
        initargs=(work, items, split),
        mp_context=_FORK,
    )  # see the module's docstring
    delivered: dict[int, list] = {}  # a chunk's first index → its results
    try:
        try:  # here, before any other thread runs: the first submit forks the workers
            theirs = [pool.submit(_drain) for _ in range(split.workers)]
        except (RuntimeError, OSError):  # no worker could start: everything is done here
            theirs = []
        if meanwhile and theirs:
            meanwhile()
        while taken := split.take():
            delivered[taken.start] = [work(items[index]) for index in taken]
        for future in theirs:
            if future.exception() is None:  # else it raised, its results could not be pickled or its
                delivered.update(future.result())  # worker died: what it took is redone below
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    results: list = []
    index = 0
    while index < len(items):  # in order; what no one delivered is done here, where its errors surface
        chunk = delivered.get(index)
        if chunk is None:
            results.append(work(items[index]))
            index += 1
        else:
            results += chunk
            index += len(chunk)
    return results


_FORK = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None


class _Split:
    """The items, cut from both ends: the workers' chunks from the front, this process's from the back.

    `ends` = [front, back] lives in shared memory (the workers are forks of this process):
    items[front:back] are nobody's yet."""

    def __init__(self, count: int, jobs: int):
        context = _FORK or multiprocessing.get_context()
        self.ends = context.Array("q", [0, count])  # [front, back], with its lock
        self.jobs = jobs
        self.workers = min(jobs - 1, count)
        self.mine: list[range] = []  # this process's chunks

    def _size(self) -> int:
        """Return the next chunk's size: a share of what is left, at most CHUNK, at least 1 (or
        what is left). Called with the lock held.

        A worker's chunks shrink to one item as a chunk from the back does: the last chunk a worker
        takes is what the build waits for at the end (a taking costs microseconds, the counters
        being shared; four items, the least when a thread handed chunks out, kept 200 lessons'
        parse 12 ms longer)."""
        left = self.ends[1] - self.ends[0]
        return min(left, max(1, min(CHUNK, left // (self.jobs * CHUNKS_PER_JOB))))

    def take(self) -> range:
        """Return this process's next chunk, from the back; an empty range once every item is someone's."""
        with self.ends.get_lock():
            size = self._size()
            self.ends[1] -= size
            taken = range(self.ends[1], self.ends[1] + size)
        if taken:
            self.mine.append(taken)
        return taken

    def take_front(self) -> range:
        """Return a worker's next chunk, from the front; an empty range once every item is someone's."""
        with self.ends.get_lock():
            size = self._size()
            self.ends[0] += size
            return range(self.ends[0] - size, self.ends[0])


# Set only in a pool worker, by the fork that starts it: the map's work is handed over by fork, not
# pickled, so it must be where the forked process finds it. Per process by nature; the build's own
# process never sets it.
_inherited: tuple = ()  # (work, items, split) in a worker: set by _inherit when the pool forks it


def _inherit(work, items, split) -> None:
    """Keep the map's work, items and shared ends in the worker (forked: handed over, not pickled)."""
    global _inherited
    _inherited = (work, items, split)


def _drain() -> dict[int, list]:
    """Return {first index: results} for every chunk this worker takes from the front, until none is left."""
    work, items, split = _inherited
    done = {}
    while taken := split.take_front():
        done[taken.start] = [work(items[index]) for index in taken]
    return done


def can_fork() -> bool:
    """Return True when forking is safe: a POSIX system and no other threads holding locks."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
