"""Doing one step for many pages on several cores: a process pool (concurrent.futures) and this process share the work.

`parallel_map(work, items, jobs)` is `[work(item) for item in items]` with `jobs` processes
working, this one included: a ProcessPoolExecutor of `jobs - 1` workers takes chunks of items from
the front of the list while this process takes chunks from the back, handing the workers more as
it goes (each worker has two chunks queued), so all stay busy until the two ends meet, and this
process pickles nothing of its own share. `jobs=1` starts no pool at all.

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
from concurrent.futures import BrokenExecutor, ProcessPoolExecutor
from typing import Callable, Sequence, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

MIN_ITEMS = 24  # below this, starting a pool costs more than it saves
CHUNK = 16  # most items per future: a few tens of milliseconds of work, one message each way
CHUNKS_PER_JOB = 8  # at least this many chunks per process, so that all finish close together


def default_jobs() -> int:
    """Return the number of cores this process may run on (`--jobs`' default)."""
    if hasattr(os, "process_cpu_count"):  # Python 3.13+: the affinity mask where there is one
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def parallel_map(work: Callable[[Item], Result], items: Sequence[Item], jobs: int | None = None,
                 meanwhile: Callable[[], None] | None = None) -> list[Result]:
    """Return `[work(item) for item in items]`, computed by `jobs` processes (default: one per core).

    `meanwhile()`, if given, runs in this process once the pool has started, before it takes any
    items: preparation for a later stage that would otherwise run on one core while the others
    idle (the workers take more items meanwhile). It must not change any result, because it runs
    only when the work is split: in one process it would simply be done later, when needed.
    """
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 2 or len(items) < MIN_ITEMS or not can_fork():
        return [work(item) for item in items]
    chunks = _chunks(len(items), jobs)
    workers = min(jobs - 1, len(chunks))
    futures: list = []  # the workers' chunks: chunks[:len(futures)]
    finished: list = []  # one entry per future done (appended by the pool's thread)
    back = len(chunks)  # this process's chunks: chunks[back:]
    done: dict[int, list] = {}  # chunk's first index → its results
    broken: list = []  # not empty once the pool can take no more

    def hand_out(until: int) -> None:
        """Submit the next chunks to the workers, up to chunk `until` (never one this process took)."""
        while len(futures) < min(until, back) and not broken:
            try:
                future = pool.submit(_work_on, *chunks[len(futures)])  # the first submit forks the workers
            except (BrokenExecutor, OSError):  # a worker died, or none could be started: the rest is done here
                broken.append(True)
                return
            future.add_done_callback(finished.append)
            futures.append(future)

    pool = ProcessPoolExecutor(max_workers=workers, initializer=_inherit, initargs=(work, items),
                               mp_context=multiprocessing.get_context("fork"))  # see the module's docstring
    try:
        hand_out(len(chunks) * workers // jobs)  # the workers' share: enough to keep them busy meanwhile
        if meanwhile and futures:
            meanwhile()
        while True:
            hand_out(len(finished) + 2 * workers)
            if len(futures) >= back:
                break
            back -= 1
            start, end = chunks[back]
            done[start] = [work(items[index]) for index in range(start, end)]
        for future, (start, _) in zip(futures, chunks):
            if future.exception() is None:  # else it raised, its result could not be pickled or its worker
                done[start] = future.result()  # died: it is redone below
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    results = []
    for start, end in chunks:  # what no worker delivered is done here, where its errors surface
        results += done[start] if start in done else [work(items[index]) for index in range(start, end)]
    return results


def _chunks(count: int, jobs: int) -> list[tuple[int, int]]:
    """Return (start, end) bounds cutting `count` items into chunks of at most CHUNK items,
    at least CHUNKS_PER_JOB per process when there are enough items."""
    size = max(1, min(CHUNK, count // (jobs * CHUNKS_PER_JOB)))
    return [(start, min(start + size, count)) for start in range(0, count, size)]


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
