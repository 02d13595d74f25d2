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
import traceback
from collections.abc import Callable
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
