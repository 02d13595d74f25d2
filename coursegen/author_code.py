"""Running the course's own Python (widget entries, the kernels package, `{calc}`) in a worker process.

Author code can loop forever, exhaust memory, call `sys.exit()` or crash the interpreter; none
of that may hang the build, report a success it did not have, or take the build down with a
traceback. So it runs in one long-lived worker process per build process (started, and set to
import the kernels, while the build reads its sources; reused for every call and by later builds
in `serve`), never in the build itself:

- each call has a time limit (`limits: {seconds: …}` in course.yaml, default 10 s). The worker
  arms `faulthandler`'s watchdog for the call, which writes where the call was and ends the
  worker when the limit passes, even inside C code (`math.factorial(10**9)`); the build reads
  that place, reports it, and starts a fresh worker for the next call;
- the worker's address space is capped (`limits: {memory_mb: …}`, default 4096), so a runaway
  allocation fails there with MemoryError or ends the worker, not the machine;
- a worker that dies for any other reason (a crash, `os._exit`) is reported and replaced;
- the worker leads a process group of its own, and whatever the course's code starts (a
  `subprocess`, an `os.fork()`) stays in it: ending the worker ends the whole group, and a worker
  whose build has gone ends its group itself, so nothing the course started outlives the build
  (a child that makes a session of its own, `setsid`, leaves the group, and is beyond this).

A call names a module-level function of coursegen and its arguments (both pickled); the function
reports author mistakes by raising CalcError or EntryError, which come back as they were raised.
The worker is a fork of the build when no other thread runs (the command line: it starts in
milliseconds, coursegen already imported), else a fresh interpreter (`serve`, whose server threads
could hold locks a fork would inherit). Each process has its own: a worker of
`parallel.parallel_map`'s pool starts one when it needs it. The workers belong to the session
(`AuthorCode`, coursegen/session.py), so later builds of one session reuse them.
"""

from __future__ import annotations

import faulthandler
import gc
import os
import pickle
import re
import resource
import signal
import socket
import subprocess
import sys
import time
import traceback
import weakref
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING

from coursegen.memo import Memo

if TYPE_CHECKING:  # errors imports nothing of ours, but the worker process needs none of it at run time
    from coursegen.errors import Problems

DEFAULT_SECONDS = 10.0
# Importing the course's package (numpy, ml_dtypes, …) has a limit of its own: on a busy machine it can take
# longer than a call is allowed, and a course must not fail for the machine's load.
DEFAULT_IMPORT_SECONDS = 120.0
DEFAULT_MEMORY_MB = 4096
SEND_EVERY = 0.02  # seconds: the worker sends the results it has at least this often (fewer, larger messages)
GRACE = 2.0  # seconds the build waits beyond the limit for the worker's own watchdog to report
LIMITS_KEYS = {"seconds": object, "import_seconds": object, "memory_mb": object}
MIN_MEMORY_MB = 256  # below this the worker cannot even import numpy
MAX_MEMORY_MB = 1 << 20  # 1 TiB: a cap above any machine's memory caps nothing (and far above, the OS refuses it)
MIN_SECONDS = 0.1  # below this not even the worker's start and the kernels' import finish: every page would fail
MAX_SECONDS = 3600
FRAME = re.compile(r'^\s*File "(.+)", line (\d+) in ')


@dataclass(frozen=True)
class Limits:
    """What one call of author code may use: seconds of time, MiB of address space; and the time the
    worker's setup (importing the course's package) may take, counted apart from every call."""

    seconds: float = DEFAULT_SECONDS
    memory_mb: int = DEFAULT_MEMORY_MB
    import_seconds: float = DEFAULT_IMPORT_SECONDS


class AuthorCodeStopped(Exception):
    """A call that did not return: it ran out of time, or the worker died (`timed_out` tells which).

    `where` is the innermost course file and line the call was in when it stopped, when known
    (e.g. `widgets/spin/widget.py line 3`), and `message` says what happened in words.
    """

    def __init__(self, message: str, timed_out: bool, where: str = ""):
        super().__init__(message)
        self.message, self.timed_out, self.where = message, timed_out, where

    def located(self) -> str:
        """Return the message with the place in the course's files, if known."""
        return self.message + (f" (at {self.where})" if self.where else "")


class SetupFailed(Exception):
    """The call's `setup` failed; `error` is what it raised (AuthorCodeStopped when it did not return)."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


class AuthorCode:
    """The worker processes a session's builds run the course's Python in: one per build process (a
    forked pool worker of parallel.parallel_map starts its own), and the setups that failed in them
    (memo kind "setup failure": a setup that hung would only hang again, so it fails at once).

    `close` ends every worker; so does dropping the object (a worker whose build has gone also
    ends itself, when its socket closes)."""

    def __init__(self, memo: Memo | None = None):
        self.memo = memo if memo is not None else Memo()
        self.workers: dict[int, Worker] = {}  # process id → its worker
        self._finalizer = weakref.finalize(self, _stop_all, self.workers)

    def close(self) -> None:
        """End every worker this process started (the next call starts a fresh one)."""
        _stop_all(self.workers)

    def call(self, limits: Limits, root: Path, function, *args, setup: tuple | None = None):
        """Return `function(*args)` run in this process's worker, or raise what it raised.

        `setup`, a `(function, args)` pair, runs first in each worker that has not run it yet (e.g.
        importing the kernels); when it fails, SetupFailed carries its error. Raises AuthorCodeStopped
        when the call ran out of time or the worker died; the next call gets a fresh worker.
        """
        return next(self.call_each(limits, root, function, [args], setup=setup))

    def call_each(self, limits: Limits, root: Path, function, arg_tuples: list[tuple], setup: tuple | None = None):
        """Yield `function(*args)` for each of `arg_tuples` in order, like `call`, each under the time limit.

        The worker receives them all at once and sends each result as soon as it has it, so many short
        calls (a widget's baked states) cost one round trip, not one each; it stops at the first that fails.
        """
        failed = self.memo.peek("setup failure", setup) if setup is not None else None
        if failed is not None:
            raise SetupFailed(failed)
        worker = self._warmed_worker(limits, root)
        try:
            if setup is not None and setup not in worker.done:
                serial = worker.pending_serial  # the setup warm_up sent (answers before any later request's)
                if worker.pending != setup:
                    worker.send(limits.import_seconds, root, setup[0], [setup[1]])
                    serial = None  # this request's
                worker.pending, worker.pending_serial = None, None
                try:
                    next(worker.answers(limits.import_seconds, root, 1, serial))
                except Exception as err:
                    self.memo.put("setup failure", setup, err)  # its arguments change when its inputs do
                    raise SetupFailed(err) from err
                worker.done.add(setup)
            worker.send(limits.seconds, root, function, arg_tuples)
            yield from worker.answers(limits.seconds, root, len(arg_tuples))
        except (AuthorCodeStopped, SetupFailed) as err:
            if isinstance(err, AuthorCodeStopped) or isinstance(err.error, AuthorCodeStopped):
                worker.stop()
                self.workers.pop(os.getpid(), None)
            raise

    def warm_up(self, limits: Limits, root: Path, setup: tuple) -> None:
        """Start this process's worker and its `setup` now, without waiting: the build goes on meanwhile,
        and the first call (which waits for the setup's answer) finds the worker ready."""
        worker = self._worker(limits)
        if setup not in worker.done and worker.pending is None:
            worker.send(limits.import_seconds, root, setup[0], [setup[1]])
            worker.pending, worker.pending_serial = setup, worker.serial

    def pre_import(self, limits: Limits, root: Path, function, args: tuple) -> None:
        """Start this process's worker and `function(*args)` in it now, without waiting, and never report its
        outcome: a hint of what the build's calls will import (see warm_up.start). The next call
        first waits for it under `limits.import_seconds`; when it failed, ran out of time or ended the worker,
        that call gets a fresh worker, as if there had been no warm-up."""
        worker = self._worker(limits)
        if worker.warming is None and worker.pending is None:
            worker.send(limits.import_seconds, root, function, [args])
            worker.warming = (worker.serial, limits.import_seconds)

    def _warmed_worker(self, limits: Limits, root: Path) -> Worker:
        """Return this process's worker (see _worker) once its pre_import, if any, has ended: a warm-up
        that failed in any way is forgotten with its worker."""
        worker = self._worker(limits)
        if worker.warming is None:
            return worker
        (serial, seconds), worker.warming = worker.warming, None
        try:
            for _ in worker.answers(seconds, root, 1, serial):
                pass
        except Exception:  # noqa: BLE001 - only a hint: what it failed at, the build's own calls report
            worker.stop()
            self.workers.pop(os.getpid(), None)
            worker = self._worker(limits)
        return worker

    def worker_pid(self) -> int | None:
        """Return the process id of this process's worker, or None when it has none."""
        worker = self.workers.get(os.getpid())
        return worker.process.pid if worker is not None else None

    def _worker(self, limits: Limits) -> Worker:
        """Return this process's worker, started afresh when there is none, it died, the memory cap
        changed, or a caller stopped reading its answers midway."""
        worker = self.workers.get(os.getpid())
        if worker is None or worker.memory_mb != limits.memory_mb or worker.abandoned or not worker.alive():
            if worker is not None:
                worker.stop()
            worker = self.workers[os.getpid()] = Worker(limits.memory_mb)
        return worker


def _stop_all(workers: dict[int, Worker]) -> None:
    """Stop the workers this process started (a fork's copy of the dict holds its parent's too: skipped)."""
    mine = workers.pop(os.getpid(), None)
    if mine is not None:
        mine.stop()


def parse_limits(data, path: str, problems: Problems) -> Limits:
    """Return course.yaml's `limits:` (seconds per call of author code, MiB of memory), reporting bad values."""
    from coursegen.schema import Schema, check  # here: a worker process imports this module, and needs no YAML

    good = check(data, Schema("limits", LIMITS_KEYS), path, problems)
    seconds, memory = good.get("seconds", Limits.seconds), good.get("memory_mb", Limits.memory_mb)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not MIN_SECONDS <= seconds <= MAX_SECONDS:
        problems.error(
            path,
            good.line_of("seconds"),
            f"limits: seconds must be a number of seconds from {MIN_SECONDS:g} to {MAX_SECONDS}, found {seconds!r}",
            f"it is the time each call of the course's Python may take; the default is {DEFAULT_SECONDS:g}",
        )
        seconds = Limits.seconds
    if isinstance(memory, bool) or not isinstance(memory, int) or not MIN_MEMORY_MB <= memory <= MAX_MEMORY_MB:
        problems.error(
            path,
            good.line_of("memory_mb"),
            f"limits: memory_mb must be a whole number of MiB from {MIN_MEMORY_MB} to {MAX_MEMORY_MB} (1 TiB), "
            f"found {memory!r}",
            f"it caps the memory of the course's Python; the default is {DEFAULT_MEMORY_MB}",
        )
        memory = Limits.memory_mb
    importing = good.get("import_seconds", Limits.import_seconds)
    if (
        isinstance(importing, bool)
        or not isinstance(importing, (int, float))
        or not MIN_SECONDS <= importing <= MAX_SECONDS
    ):
        problems.error(
            path,
            good.line_of("import_seconds"),
            f"limits: import_seconds must be a number of seconds from {MIN_SECONDS:g} to {MAX_SECONDS}, "
            f"found {importing!r}",
            f"it is the time importing the course's package may take; the default is {DEFAULT_IMPORT_SECONDS:g}",
        )
        importing = Limits.import_seconds
    return Limits(float(seconds), memory, float(importing))


def shown_limit(seconds: float) -> str:
    """Return a limit as written in messages: `10 s`, `0.5 s`."""
    return f"{seconds:g} s"


class Worker:
    """One worker process and the socket the build talks to it through."""

    def __init__(self, memory_mb: int):
        self.memory_mb = memory_mb
        self.done: set = set()  # the setups this worker has run
        self.pending: tuple | None = None  # a setup sent by warm_up whose answer nobody has read yet
        self.pending_serial: int | None = None  # its request's serial
        self.warming: tuple[int, float] | None = None  # (serial, seconds) of a pre_import nobody has waited for
        self.abandoned = False  # True when a request's answers were left unread: the worker is replaced
        self.serial = 0  # of the last request: answers to an earlier one (abandoned midway) are skipped
        ours, theirs = socket.socketpair()
        self.dump_read, dump_write = os.pipe()  # where the watchdog writes the stack of a call out of time
        self.process: _Forked | subprocess.Popen
        if _can_fork():
            self.process = _Forked(theirs.fileno(), dump_write, memory_mb)
        else:
            package_parent = str(Path(__file__).resolve().parent.parent)
            code = (
                f"import sys; sys.path.insert(0, {package_parent!r}); "
                "from coursegen.author_code import serve_calls; serve_calls()"
            )
            self.process = subprocess.Popen(
                [sys.executable, "-c", code, str(theirs.fileno()), str(dump_write), str(memory_mb)],
                pass_fds=(theirs.fileno(), dump_write),
                stdin=subprocess.DEVNULL,
                process_group=0,
            )
        theirs.close()
        os.close(dump_write)
        self.connection = Connection(ours.detach())

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, seconds: float, root: Path, function, arg_tuples: list[tuple]) -> None:
        """Ask the worker for `function(*args)` for each argument tuple (answers() reads them)."""
        self.serial += 1
        try:
            self.connection.send((self.serial, function, arg_tuples, seconds))
        except OSError:  # the worker died before the call
            raise self._stopped(seconds, root) from None

    def answers(self, seconds: float, root: Path, count: int, serial: int | None = None):
        """Yield the results of the last request (or of request `serial`, sent before it and not yet
        answered), `count` of them, raising at the first that failed."""
        self.abandoned = True  # until every answer is read: a worker still sending could block the next request
        while count > 0:
            outcomes = self._answer(seconds, self.serial if serial is None else serial)
            if not isinstance(outcomes, list):
                raise self._stopped(seconds, root, late=outcomes == "late")
            for outcome, value in outcomes:
                if outcome != "returned":
                    self.abandoned = False  # the worker stops at a failure: nothing more is coming
                if outcome == "raised":  # an author mistake (CalcError, EntryError), or a bug shown with its cause
                    error, text = value
                    raise error from WorkerTraceback(text)
                if outcome == "bug":  # what the worker could not even send back: coursegen's own failure
                    raise RuntimeError("the author-code worker failed:\n" + value)
                count -= 1
                if count == 0:  # all read (before the yield: `call` takes one answer and never resumes)
                    self.abandoned = False
                yield value

    def _answer(self, seconds: float, wanted: int) -> list | str:
        """Return the next few (outcome, value) pairs of request `wanted`; "late" when none came in time,
        "ended" when the worker ended."""
        try:
            while self.connection.poll(seconds + GRACE):
                serial, outcomes = self.connection.recv()
                if serial == wanted:
                    return outcomes
        except (EOFError, OSError):  # the worker died during the call
            return "ended"
        return "late"

    def _stopped(self, seconds: float, root: Path, late: bool = False) -> AuthorCodeStopped:
        """Return what stopped the call: the watchdog's report, or how the worker ended."""
        stuck = late and self.alive()  # not even the watchdog answered: end the worker here
        if not late:  # its socket closed: it is ending (or the course's code closed it; it gets GRACE to end)
            deadline = time.monotonic() + GRACE
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.005)
            stuck = self.alive()
        if stuck:
            _kill_group(self.process)
        status = self.process.wait()
        _kill_group(self.process)  # what the course's code started, the worker gone or not
        report = _read_all(self.dump_read)
        where = _innermost_course_frame(report, root)
        if stuck or report.startswith("Timeout"):
            return AuthorCodeStopped(f"did not finish within {shown_limit(seconds)}", True, where)
        how = f"signal {signal.Signals(-status).name}" if status < 0 else f"exit status {status}"
        return AuthorCodeStopped(f"ended the Python process running it ({how}; out of memory?)", False, where)

    def stop(self) -> None:
        """End the worker, and every process the course's code started in it, and close its pipes."""
        _kill_group(self.process)
        self.process.wait()
        self.connection.close()
        try:
            os.close(self.dump_read)
        except OSError:
            pass


def _can_fork() -> bool:
    """Return True when the worker may be a fork of this process: POSIX, and no other thread holds locks.

    A fork starts in milliseconds with coursegen already imported; otherwise (in `serve`, whose server
    threads run) the worker is a fresh interpreter, which takes a tenth of a second more.
    """
    from coursegen.parallel import can_fork

    return can_fork()


class _Forked:
    """A worker forked from this process, with the part of subprocess.Popen's interface used here."""

    def __init__(self, connection_fd: int, dump_fd: int, memory_mb: int):
        for stream in (sys.stdout, sys.stderr):  # or the fork would write out this process's buffered text again
            stream.flush()
        self.returncode: int | None = None
        self.pid = os.fork()
        if self.pid == 0:
            status = 1
            try:
                os.setpgid(0, 0)
                # a group outside the terminal's foreground one is stopped if it reads the terminal: read nothing
                os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
                _close_all_but(connection_fd, dump_fd)
                _serve(connection_fd, dump_fd, memory_mb)
                status = 0
            finally:
                os._exit(status)  # never return into the build's code
        try:  # the child does so too: whichever runs first, the group exists before a kill can be sent to it
            os.setpgid(self.pid, self.pid)
        except OSError:  # the child has already made it, or has ended
            pass

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode


def _kill_group(process) -> None:
    """Kill the worker's process group: the worker and whatever the course's code started in it.

    The group is the worker's own (its id the worker's pid) as long as a member lives, so this never
    reaches the build's group."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # the worker and all it started have ended
        pass


def _close_all_but(*keep: int) -> None:
    """Close every inherited descriptor above stderr but `keep`: a fork holding the build's pipes (other
    workers' sockets, the process pool's pipes) would keep their readers from seeing them close."""
    start = 3
    for fd in sorted(keep):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, os.sysconf("SC_OPEN_MAX"))


class WorkerTraceback(Exception):
    """The traceback of an exception raised in the worker, attached as its cause."""

    def __str__(self) -> str:
        return "\n" + self.args[0]


def _read_all(fd: int) -> str:
    """Return what the worker's watchdog wrote (the pipe's write end is closed: the worker is gone)."""
    chunks = []
    os.set_blocking(fd, False)
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except (BlockingIOError, OSError):
        pass
    return b"".join(chunks).decode("utf-8", "replace")


def _innermost_course_frame(report: str, root: Path) -> str:
    """Return `widgets/x/widget.py line 3` for the innermost frame of `report` in the course's files."""
    bases = {str(root) + os.sep, str(root.resolve()) + os.sep}
    for line in report.splitlines():  # the watchdog lists the most recent call first
        match = FRAME.match(line)
        base = next((b for b in bases if match and match.group(1).startswith(b)), None)
        if match and base:
            return f"{match.group(1)[len(base) :]} line {match.group(2)}"
    return ""


# ---- the worker process -------------------------------------------------------------------


def _reserved_by_v8() -> int:
    """Return the address space this worker holds at its start when it is a fork of a process that ran
    embedded V8 (the math converter, features/math/temml.py), else 0. V8 reserves about a terabyte and
    maps hundreds of megabytes it never touches; the fork inherits them all, so there the cap is what the
    worker may add to them, rather than a total no fork of that process could stay under."""
    if "py_mini_racer" not in sys.modules:
        return 0
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[0])
    except (OSError, ValueError, IndexError):  # no /proc: a system whose RLIMIT_AS the kernel does not enforce
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def serve_calls() -> None:
    """The worker's entry point as a fresh interpreter: its descriptors and memory cap come as arguments."""
    _serve(*(int(arg) for arg in sys.argv[1:4]))


def _serve(connection_fd: int, dump_fd: int, memory_mb: int) -> None:
    """The worker's main loop: run each call it receives under the time limit, send back the outcome."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the build, which then ends this worker
    sys.dont_write_bytecode = True  # nothing is written into the course (course_code.TextLoader reads none of it)
    gc.enable()  # a fork inherits the build's paused collector (pipeline.collector_paused)
    cap = memory_mb * 1024 * 1024 + _reserved_by_v8()
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    connection = Connection(connection_fd)
    dump = os.fdopen(dump_fd, "w")
    while True:
        try:
            serial, function, arg_tuples, seconds = connection.recv()
        except (EOFError, OSError):  # the build has ended: so does what the course's code started
            _end_own_group()
            return
        outcomes, sent = [], time.monotonic()
        for index, args in enumerate(arg_tuples):
            outcomes.append(_run_one(function, args, seconds, dump))
            failed = outcomes[-1][0] != "returned"
            if failed or index == len(arg_tuples) - 1 or time.monotonic() - sent > SEND_EVERY:
                try:
                    connection.send((serial, outcomes))
                except (pickle.PicklingError, TypeError, AttributeError):
                    connection.send((serial, [("bug", traceback.format_exc())]))
                except OSError:  # the build has ended
                    _end_own_group()
                    return
                outcomes, sent = [], time.monotonic()
            if failed:
                break
        for stream in (sys.stdout, sys.stderr):  # what the course's code printed (a fork ends without flushing)
            stream.flush()


def _end_own_group() -> None:
    """Kill the worker's process group, this worker included, if the worker leads one (it always should)."""
    if os.getpgid(0) == os.getpid():
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os.killpg(0, signal.SIGKILL)


def _run_one(function, args: tuple, seconds: float, dump) -> tuple:
    """Return ("returned", value), ("raised", (exception, traceback)) or ("bug", traceback) for one call."""
    faulthandler.dump_traceback_later(seconds, exit=True, file=dump)
    try:
        return "returned", function(*args)
    except BaseException as err:  # noqa: BLE001 - the calling side tells author mistakes from bugs
        text = traceback.format_exc()
        kept = isinstance(err, Exception) and _picklable(err)  # never a SystemExit raised in the build
        return ("raised", (err, text)) if kept else ("bug", text)
    finally:
        faulthandler.cancel_dump_traceback_later()


def _picklable(err: BaseException) -> bool:
    try:
        pickle.dumps(err)
        return True
    except Exception:  # noqa: BLE001 - whatever pickling raises, the answer is no
        return False
