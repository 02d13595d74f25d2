"""Doing one step for many pages on several cores: a process pool and this process share the work.

`parallel_map(work, items, jobs)` is `[work(item) for item in items]` with `jobs` processes
working, this one included: a ProcessPoolExecutor of `jobs - 1` workers takes chunks of items from
the front of the list while this process takes chunks from the back, and a thread here hands the
workers their next chunk as each one finishes (two each in hand), until the two ends meet. Chunks
shrink as the middle nears (the workers' to LEAST_HANDED_OUT items, enough to cover a hand-out's
delay; this process's to one), so all finish close together, and this process pickles nothing of
its own share. `jobs=1` starts no pool at all.

The workers are forks of this process, made when the map starts: they inherit the work function
and the items (a closure over the parser, the templates, the linked course) without pickling them;
only chunk bounds go to them and only results come back. The other start methods would have to
rebuild that state in every worker: `spawn` and `forkserver` start an interpreter that imports
coursegen and makes the parser again before it can parse a page (see docs/architecture.md for the
figures), and the work function, a closure, cannot be pickled at all. Forking is only safe when no
other thread runs (one could hold a lock the child inherits, held forever): `serve`'s server and
watcher threads do, so there the work stays in this process.

Whatever a worker fails to do (it raises, its result cannot be pickled, it dies) is done again
here, where errors surface as they would without a pool, so the output is the same either way.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

MIN_ITEMS = 24  # below this, starting a pool costs more than it saves
CHUNK = 16  # most items per future: tens of milliseconds of work, one message each way
CHUNKS_PER_JOB = 4  # a chunk is at most 1/(jobs × this) of what is left: chunks shrink as the ends meet
LEAST_HANDED_OUT = 4  # fewest items per future: more work than the hand-out's few milliseconds of delay


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
        initargs=(work, items),
        mp_context=multiprocessing.get_context("fork"),
    )  # see the module's docstring
    done: dict[int, list] = {}  # a range's first index → its results
    try:
        split.hand_out(pool)  # here, before any other thread runs: the first submit forks the workers
        feeder = threading.Thread(target=split.keep_handing_out, args=(pool,), daemon=True)
        feeder.start()
        if meanwhile and split.theirs:
            meanwhile()
        while taken := split.take():
            done[taken.start] = [work(items[index]) for index in taken]
        feeder.join()
        for taken, future in split.theirs:
            if future.exception() is None:  # else it raised, its result could not be pickled or its worker
                done[taken.start] = future.result()  # died: it is redone below
    finally:
        split.stop()
        pool.shutdown(wait=True, cancel_futures=True)
    results: list = []
    for taken in sorted([taken for taken, _ in split.theirs] + split.mine, key=lambda taken: taken.start):
        results += done[taken.start] if taken.start in done else [work(items[index]) for index in taken]
    return results  # what no worker delivered was done here just above, where its errors surface


class _Split:
    """The items, cut from both ends: the workers' chunks from the front, this process's from the back."""

    def __init__(self, count: int, jobs: int):
        self.front, self.back, self.jobs = 0, count, jobs  # items[front:back] are nobody's yet
        self.workers = min(jobs - 1, count)
        self.lock = threading.Lock()  # taken by this process's two threads
        self.theirs: list[tuple[range, Future]] = []  # the workers' chunks, with their futures
        self.mine: list[range] = []  # this process's chunks
        self.in_hand: set[Future] = set()  # the workers' chunks not yet done
        self.broken = False  # True once the pool takes no more (a worker died, none could start, an error)

    def _size(self, least: int = 1) -> int:
        """Return the next chunk's size: a share of what is left, at most CHUNK, at least `least`
        (or what is left)."""
        left = self.back - self.front
        return min(left, max(least, min(CHUNK, left // (self.jobs * CHUNKS_PER_JOB))))

    def take(self) -> range:
        """Return this process's next chunk; an empty range once every item is someone's."""
        with self.lock:
            size = self._size()
            self.back -= size
            taken = range(self.back, self.back + size)
        if taken:
            self.mine.append(taken)
        return taken

    def hand_out(self, pool: ProcessPoolExecutor) -> None:
        """Submit chunks until each worker has two in hand (the one it works on and the next)."""
        with self.lock:
            self.in_hand = {future for future in self.in_hand if not future.done()}
            while not self.broken and self.front < self.back and len(self.in_hand) < 2 * self.workers:
                taken = range(self.front, self.front + self._size(LEAST_HANDED_OUT))
                try:
                    future = pool.submit(_work_on, taken.start, taken.stop)
                except (RuntimeError, OSError):  # broken, or shut down after an error: the rest is done here
                    self.broken = True
                    return
                self.front = taken.stop
                self.theirs.append((taken, future))
                self.in_hand.add(future)

    def stop(self) -> None:
        """Hand out nothing more."""
        with self.lock:
            self.broken = True

    def keep_handing_out(self, pool: ProcessPoolExecutor) -> None:
        """Hand out a chunk each time one is done, until every item is someone's (runs in a thread)."""
        while True:
            self.hand_out(pool)
            with self.lock:
                if self.broken or self.front >= self.back:
                    return
                in_hand = set(self.in_hand)
            wait(in_hand, return_when=FIRST_COMPLETED)


_inherited: tuple = ()  # (work, items) in a worker: set by _inherit when the pool forks it


def _inherit(work, items) -> None:
    """Keep the map's work and items in the worker (forked: handed over, not pickled)."""
    global _inherited
    _inherited = (work, items)


def _work_on(start: int, end: int) -> list:
    """Return the results of items[start:end], in a worker."""
    work, items = _inherited
    return [work(items[index]) for index in range(start, end)]


def can_fork() -> bool:
    """Return True when forking is safe: a POSIX system and no other threads holding locks."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
