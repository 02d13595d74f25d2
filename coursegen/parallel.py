"""Doing one step for many pages on two cores: this process and a fork of it share the work.

A forked child shares everything this process has built so far (parser, templates, the linked
course) without pickling it; only its results come back through a pipe. The two take the next
few items from a shared counter until none are left, so neither waits long for the other when
one runs slower (the child starts later and must send its results; the machine may be busy).
When forking is not safe or not possible, or the child fails, the work is done here, so the
output is the same either way.
"""
from __future__ import annotations

import multiprocessing
import threading
from typing import Callable, Sequence, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

MIN_ITEMS = 24  # below this, starting a process costs more than it saves
CHUNK = 4  # items taken at a time: a few milliseconds of work, a lock taken rarely


def map_in_two(work: Callable[[Item], Result], items: Sequence[Item], allowed: bool = True,
               meanwhile: Callable[[], None] | None = None) -> list[Result]:
    """Return `[work(item) for item in items]`, computed by this process and a forked child.

    `meanwhile()`, if given, runs in this process once the child has started, before it takes any
    items: preparation for a later stage that would otherwise run on one core while the other
    idles (the child takes more items meanwhile). It must not change any result, because it runs
    only when the work is split: on one core it would simply be done later, when needed.
    """
    if not (allowed and len(items) >= MIN_ITEMS and can_fork()):
        return [work(item) for item in items]
    context = multiprocessing.get_context("fork")
    counter = _Counter(context, len(items))
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_work_in_child, args=(work, items, counter, sender), daemon=True)
    child.start()
    sender.close()  # ours: the child holds its own copy, so recv() sees EOF if the child dies
    try:
        if meanwhile:
            meanwhile()
        results = _work_through(work, items, counter)
        try:
            ok, theirs = receiver.recv()
        except EOFError:
            ok, theirs = False, {}
    finally:
        receiver.close()
        child.join()
    results.update(theirs if ok else {})
    for index in range(len(items)):  # what a failed child took is redone here, where errors surface
        if index not in results:
            results[index] = work(items[index])
    return [results[index] for index in range(len(items))]


class _Counter:
    """The index of the next item nobody has taken, shared by both processes."""

    def __init__(self, context, total: int):
        self.total = total
        self.value = context.RawValue("l", 0)
        self.lock = context.Lock()

    def take(self) -> range:
        """Claim the next few items; an empty range when all are taken."""
        with self.lock:
            start = self.value.value
            self.value.value = min(start + CHUNK, self.total)
        return range(start, min(start + CHUNK, self.total))


def _work_through(work, items, counter: _Counter) -> dict[int, object]:
    results = {}
    while taken := counter.take():
        for index in taken:
            results[index] = work(items[index])
    return results


def _work_in_child(work, items, counter: _Counter, sender) -> None:
    try:
        sender.send((True, _work_through(work, items, counter)))
    except BaseException:  # noqa: BLE001 - the parent redoes what is missing and reports any error itself
        try:
            sender.send((False, {}))
        except BaseException:  # noqa: BLE001 - a closed pipe reads as EOF in the parent: same outcome
            pass
    finally:
        sender.close()


def can_fork() -> bool:
    """Return True when forking is safe: a POSIX system and no other threads holding locks."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
