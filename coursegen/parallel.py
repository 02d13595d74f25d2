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
import pickle
import threading
from typing import Callable, Sequence, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

MIN_ITEMS = 24  # below this, starting a process costs more than it saves
CHUNK = 4  # most items taken at a time: a few milliseconds of work, a lock taken rarely


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
    _widen(sender)
    child = context.Process(target=_work_in_child, args=(work, items, counter, sender), daemon=True)
    child.start()
    sender.close()  # ours: the child holds its own copy, so recv() sees EOF if the child dies
    try:
        if meanwhile:
            meanwhile()
        results = {}
        for done in _claims(work, items, counter):
            results.update(done)
        for part in _received(receiver):  # read while the child exits
            results.update(pickle.loads(part))
    finally:
        receiver.close()
        child.join()
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
        """Claim the next few items; an empty range when all are taken.

        Near the end the claims shrink to one item, so that the two finish close together.
        """
        with self.lock:
            start = self.value.value
            end = min(start + max(1, min(CHUNK, (self.total - start) // 8)), self.total)
            self.value.value = end
        return range(start, end)


def _claims(work, items, counter: _Counter):
    """Yield {index: result} for each claim this process takes, until the counter runs out."""
    while taken := counter.take():
        yield {index: work(items[index]) for index in taken}


def _work_in_child(work, items, counter: _Counter, sender) -> None:
    try:
        parts = _work_and_pickle(work, items, counter)
    except BaseException:  # noqa: BLE001 - the parent redoes what is missing and reports any error itself
        parts = []
    try:
        sender.send(len(parts))
        for part in parts:
            sender.send_bytes(part)
    except BaseException:  # noqa: BLE001 - a closed pipe reads as EOF in the parent: same outcome
        pass
    finally:
        sender.close()


def _received(receiver) -> list[bytes]:
    """Return the child's pickled parts: as many as it announced, fewer if it died on the way."""
    parts = []
    try:
        for _ in range(receiver.recv()):
            parts.append(receiver.recv_bytes())
    except EOFError:
        pass
    return parts


def _widen(pipe) -> None:
    """Give the pipe a 1 MiB buffer where Linux allows it: the child's results (megabytes) then
    cross in a few large writes instead of many 64 KiB ones, each waiting for the other side."""
    try:
        import fcntl
        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):  # not Linux, or a lower system limit: the default works
        pass


def _work_and_pickle(work, items, counter: _Counter) -> list[bytes]:
    """Pickle each claim's results as soon as they are done.

    Pickling is the child's share of sending its results; done as it goes, it counts against the
    items the child takes from the counter, so only sending the bytes is left when the work ends.
    """
    return [pickle.dumps(done, pickle.HIGHEST_PROTOCOL) for done in _claims(work, items, counter)]


def can_fork() -> bool:
    """Return True when forking is safe: a POSIX system and no other threads holding locks."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
