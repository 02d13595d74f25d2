"""Doing one step for many pages on two cores: this process takes the first half, a fork the rest.

A forked child shares everything this process has built so far (parser, templates, the linked
course) without pickling it; only its results come back through a pipe. When forking is not
safe or not possible, or the child fails, the work is simply done here, so the output is the
same either way.
"""
from __future__ import annotations

import multiprocessing
import threading
from typing import Callable, Sequence, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

MIN_ITEMS = 24  # below this, starting a process costs more than it saves


def map_in_two(work: Callable[[Item], Result], items: Sequence[Item], allowed: bool = True) -> list[Result]:
    """Return `[work(item) for item in items]`, computing the second half in a forked child."""
    if not (allowed and len(items) >= MIN_ITEMS and can_fork()):
        return [work(item) for item in items]
    half = len(items) // 2
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_work_in_child, args=(work, items[half:], sender), daemon=True)
    child.start()
    sender.close()  # ours: the child holds its own copy, so recv() sees EOF if the child dies
    try:
        first = [work(item) for item in items[:half]]
        try:
            ok, second = receiver.recv()
        except EOFError:
            ok, second = False, None
    finally:
        receiver.close()
        child.join()
    if not ok:  # the child failed: redo its half here, where an exception surfaces normally
        second = [work(item) for item in items[half:]]
    return first + second


def _work_in_child(work, items, sender) -> None:
    try:
        sender.send((True, [work(item) for item in items]))
    except BaseException:  # noqa: BLE001 - the parent redoes this half and reports any error itself
        try:
            sender.send((False, None))
        except BaseException:  # noqa: BLE001 - a closed pipe reads as EOF in the parent: same outcome
            pass
    finally:
        sender.close()


def can_fork() -> bool:
    """Return True when forking is safe: a POSIX system and no other threads holding locks."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
