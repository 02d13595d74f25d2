"""A time limit for course code that has to run in the build process itself: its extensions' hooks.

Widget entries, kernels and exercises run in the author-code worker, which a limit can simply end
(author_code). An extension cannot: it adds rules to the build's own Markdown parser and reads the
build's objects. So a watchdog thread waits beside each call; when the limit passes it notes where
the call was (the innermost frame in the course's files) and raises `OutOfTime` inside the calling
thread, which stops any Python loop. Code that does not get back to Python (a long `time.sleep`,
a C call) or catches `OutOfTime` and goes on gets `GRACE` more seconds; then `stuck` is called with
that place, and it ends the process: a build that cannot stop what it started must not hang.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

GRACE = 2.0  # seconds after the limit for OutOfTime to land before the process is ended
RETRY = 0.1  # seconds between attempts to raise OutOfTime in code that caught it


class OutOfTime(BaseException):
    """Raised in course code past its time limit. A BaseException, so the course's `except Exception`
    does not swallow it."""


class Watch:
    """One call under a limit: `where` is the course file and line it was at when the limit passed."""

    def __init__(self, files: Callable[[str], bool]):
        self.files = files  # which file names are the course's
        self.where: tuple[str, int] | None = None
        self.fired = False
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.thread_id = threading.get_ident()

    def note_where(self) -> None:
        frame = sys._current_frames().get(self.thread_id)
        stack = traceback.extract_stack(frame) if frame is not None else []
        self.where = next(((f.filename, f.lineno or 1) for f in reversed(stack) if self.files(f.filename)), None)

    def interrupt(self) -> bool:
        """Raise OutOfTime in the watched thread unless the call has ended; return whether it was raised."""
        with self.lock:
            if self.done.is_set():
                return False
            self.fired = True
            _raise_in(self.thread_id, OutOfTime)
            return True

    def finish(self) -> None:
        """Mark the call over; an OutOfTime raised too late to land inside it is withdrawn."""
        with self.lock:
            self.done.set()
            if self.fired:
                _raise_in(self.thread_id, None)


class time_limit:
    """`with time_limit(seconds, files, stuck) as watch:` runs the block under the limit (see the module's text).

    `files(name)` tells the course's files from others; `stuck(where)` is called, on the watchdog's
    thread, when the block did not stop within GRACE of the limit (it should end the process)."""

    def __init__(self, seconds: float, files: Callable[[str], bool], stuck: Callable[[tuple[str, int] | None], None]):
        self.seconds, self.stuck = seconds, stuck
        self.watch = Watch(files)

    def __enter__(self) -> Watch:
        threading.Thread(target=self._guard, daemon=True, name="coursegen time limit").start()
        return self.watch

    def __exit__(self, *exc) -> None:
        self.watch.finish()

    def _guard(self) -> None:
        watch = self.watch
        if watch.done.wait(self.seconds):
            return
        watch.note_where()
        waited = 0.0
        while waited < GRACE:
            if not watch.interrupt() or watch.done.wait(RETRY):
                return
            waited += RETRY
        if not watch.done.is_set():
            self.stuck(watch.where)


def _raise_in(thread_id: int, exception: type[BaseException] | None) -> None:
    """Make `exception` raise in the thread `thread_id` at its next Python instruction (None withdraws it)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exception) if exception else None
    )


OWN = str(Path(__file__).resolve().parent) + "/"  # coursegen's own files, even in a course folder that holds them


def in_folder(root: Path) -> Callable[[str], bool]:
    """Return a test for file names inside the course folder `root` (as written or resolved), not coursegen's."""
    bases = tuple({str(root) + "/", str(root.resolve()) + "/"})
    return lambda name: name.startswith(bases) and not name.startswith(OWN) and "site-packages" not in name


IDLE = 0.25  # seconds a Deadlines guard waits for the next call before its thread ends


@dataclass
class Call:
    """One call under a Deadlines limit: `where` is the course file and line it was at when the limit passed."""

    thread_id: int
    deadline: float
    files: Callable[[str], bool]
    stuck: Callable[[tuple[str, int] | None], None]
    where: tuple[str, int] | None = None
    fired: float = 0.0  # when OutOfTime was first raised in it (0: not yet)


class Deadlines:
    """Time limits, as time_limit's, for many short calls: the rules an extension adds to the parser run
    at place after place of every page, and a thread per call (0.1 ms to start) would cost a page more
    than its parse. One guard thread watches every call of its Deadlines; it ends after IDLE seconds
    without one (a build forks its workers only while no other thread runs), and the next call starts
    another. A call made inside another in the same thread runs under the outer one's limit.

    `call = enter(...)`, then `leave(call)` in a `finally:` (no context manager: this is paid per call)."""

    def __init__(self):
        self.lock = threading.Condition()
        self.calls: dict[int, Call] = {}  # thread id → the call it is in
        self.guard: threading.Thread | None = None

    def enter(
        self, seconds: float, files: Callable[[str], bool], stuck: Callable[[tuple[str, int] | None], None]
    ) -> Call | None:
        """Start a call under the limit (`files`, `stuck` as for time_limit); None inside another call."""
        thread = threading.get_ident()
        with self.lock:
            if thread in self.calls:
                return None
            call = self.calls[thread] = Call(thread, time.monotonic() + seconds, files, stuck)
            if self.guard is None or not self.guard.is_alive():  # a fork's child has no guard thread
                self.guard = threading.Thread(target=self._run, daemon=True, name="coursegen time limits")
                self.guard.start()
        return call

    def leave(self, call: Call | None) -> None:
        """End a call `enter` started; an OutOfTime raised too late to land inside it is withdrawn."""
        if call is None:
            return
        with self.lock:
            del self.calls[call.thread_id]
            if call.fired:
                _raise_in(call.thread_id, None)
                self.lock.notify()  # the guard may be waiting out a call given up on

    def _run(self) -> None:
        with self.lock:
            while True:
                if not self.calls:
                    self.lock.wait(IDLE)
                    if not self.calls:
                        return
                    continue
                now = time.monotonic()
                due = min(call.deadline for call in self.calls.values())
                if due > now:
                    self.lock.wait(min(due - now, 60.0))  # a call given up on waits for its end (leave)
                    continue
                for call in [call for call in self.calls.values() if call.deadline <= now]:
                    self._overdue(call, now)

    def _overdue(self, call: Call, now: float) -> None:
        """Stop a call past its deadline: OutOfTime, again every RETRY, and `stuck` after GRACE."""
        if not call.fired:
            frame = sys._current_frames().get(call.thread_id)
            stack = traceback.extract_stack(frame) if frame is not None else []
            call.where = next(((f.filename, f.lineno or 1) for f in reversed(stack) if call.files(f.filename)), None)
            call.fired = now
        if now - call.fired >= GRACE:
            call.deadline = float("inf")  # given up on (`stuck` ends the process)
            call.stuck(call.where)
            return
        _raise_in(call.thread_id, OutOfTime)
        call.deadline = now + RETRY
