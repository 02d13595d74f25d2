"""The author-code worker: time limit, memory cap, exits and crashes, and its use by builds."""

from __future__ import annotations

import builtins
import os
import runpy
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import run_cli, without_time_limit

from coursegen import author_code
from coursegen.author_code import AuthorCode, AuthorCodeStopped, Limits
from coursegen.pipeline import BuildOptions, build_site
from coursegen.session import Session

FAST = Limits(seconds=0.5)  # for the tests of the time limit, each after a ROOMY call has started the worker
ROOMY = Limits(seconds=600)  # for the rest: a fresh worker's start (an interpreter, imports) takes what load makes it
HANG_GUARD = 600  # seconds a wait may take before the test calls it a hang: never a measure of speed


RUNTIME: list[AuthorCode] = []  # the one the running test uses (how_started makes it)


def call(*args, **kwargs):
    return RUNTIME[0].call(*args, **kwargs)


def worker_pid() -> int:
    pid = RUNTIME[0].worker_pid()
    assert pid is not None
    return pid


@pytest.mark.usefixtures("how_started")
def test_a_call_returns_its_value_from_another_process(tmp_path):
    assert call(ROOMY, tmp_path, builtins.eval, "6 * 7") == 42
    assert worker_pid() != os.getpid()
    assert call(ROOMY, tmp_path, builtins.eval, "__import__('os').getppid()") == os.getpid()
    first = worker_pid()
    assert [call(ROOMY, tmp_path, builtins.eval, str(n)) for n in range(5)] == list(range(5))
    assert worker_pid() == first  # one long-lived worker serves every call


@pytest.fixture(params=["fork", "fresh interpreter"])
def how_started(request, monkeypatch):
    """Each worker test runs twice: with the worker forked (the command line) and spawned (serve's threads)."""
    RUNTIME[:] = [AuthorCode()]
    if request.param != "fork":
        monkeypatch.setattr(author_code, "_can_fork", lambda: False)
    yield request.param
    RUNTIME.pop().close()


@pytest.mark.usefixtures("how_started")
def test_a_call_out_of_time_is_stopped_where_it_was_and_the_worker_replaced(tmp_path):
    spin = tmp_path / "widgets" / "spin" / "widget.py"
    spin.parent.mkdir(parents=True)
    spin.write_text("x = 0\nwhile True:\n    x += 1\n")
    call(ROOMY, tmp_path, builtins.eval, "1")  # the worker runs: only the call itself is timed
    before = worker_pid()
    with pytest.raises(AuthorCodeStopped) as stopped:
        call(FAST, tmp_path, runpy.run_path, str(spin))
    assert stopped.value.timed_out and stopped.value.message == "did not finish within 0.5 s"
    assert stopped.value.where in ("widgets/spin/widget.py line 2", "widgets/spin/widget.py line 3")
    assert call(ROOMY, tmp_path, builtins.eval, "2 + 2") == 4  # a fresh worker answers
    assert worker_pid() != before


@pytest.mark.usefixtures("how_started")
def test_a_call_stuck_inside_c_code_is_stopped_too(tmp_path):
    """The worker's own watchdog stops it inside C code: its report names the course's line (the build's
    fallback, ending a worker that did not answer, has no report). No wall clock: that measures the machine."""
    stuck = tmp_path / "widgets" / "digits" / "widget.py"
    stuck.parent.mkdir(parents=True)
    stuck.write_text("import math\nmath.factorial(10**9)\n")
    call(ROOMY, tmp_path, builtins.eval, "1")  # the worker runs: only the call itself is timed
    with pytest.raises(AuthorCodeStopped) as stopped:
        call(FAST, tmp_path, runpy.run_path, str(stuck))
    assert stopped.value.timed_out and stopped.value.message == "did not finish within 0.5 s"
    assert stopped.value.where == "widgets/digits/widget.py line 2"


@pytest.mark.usefixtures("how_started")
def test_memory_beyond_the_cap_fails_in_the_worker_not_the_build(tmp_path):
    small = Limits(seconds=5, memory_mb=512)
    with pytest.raises(MemoryError):
        call(small, tmp_path, builtins.exec, "bytearray(1 << 30)")  # 1 GiB: fine here, too much there
    assert call(small, tmp_path, builtins.eval, "len(bytearray(1 << 20))") == 1 << 20  # the same worker goes on


@pytest.mark.usefixtures("how_started")
def test_system_exit_in_a_call_never_ends_the_build(tmp_path):
    with pytest.raises(RuntimeError, match="SystemExit: 0"):
        call(ROOMY, tmp_path, builtins.exec, "import sys; sys.exit(0)")
    assert call(ROOMY, tmp_path, builtins.eval, "1 + 1") == 2


def running(pid: int) -> bool:
    """Return whether process `pid` still runs (a zombie waiting for its parent to reap it does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def gone_soon(pid: int) -> bool:
    """Return whether `pid` ends before HANG_GUARD seconds pass (far less than the hour its own sleep lasts,
    so only being ended counts); one still running then is ended here, and the test fails."""
    deadline = time.monotonic() + HANG_GUARD
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if running(pid):
        os.kill(pid, signal.SIGKILL)
        return False
    return True


START_CHILDREN = (
    "import os, subprocess\n"
    "started = [subprocess.Popen(['sleep', '3600']).pid]\n"
    "forked = os.fork()\n"
    "if forked == 0:\n"
    "    import time; time.sleep(3600); os._exit(0)\n"
    "started.append(forked)\n"
)


@pytest.mark.usefixtures("how_started")
def test_processes_the_course_code_starts_end_with_its_worker(tmp_path):
    namespace_pids = call(
        ROOMY, tmp_path, builtins.exec, START_CHILDREN + "import builtins; builtins.STARTED = started"
    )
    assert namespace_pids is None
    started = call(ROOMY, tmp_path, builtins.eval, "__import__('builtins').STARTED")
    assert len(started) == 2 and all(running(pid) for pid in started)
    RUNTIME[0].close()
    assert all(gone_soon(pid) for pid in started)


@pytest.mark.usefixtures("how_started")
def test_a_worker_out_of_time_takes_the_processes_it_started_with_it(tmp_path):
    # The children start in a call of their own, under no tight limit (starting processes takes what load makes
    # it); then a call of the same worker runs out of time.
    call(ROOMY, tmp_path, builtins.exec, START_CHILDREN + "import builtins; builtins.STARTED = started")
    started = call(ROOMY, tmp_path, builtins.eval, "__import__('builtins').STARTED")
    assert len(started) == 2 and all(running(pid) for pid in started)
    with pytest.raises(AuthorCodeStopped):
        call(FAST, tmp_path, builtins.exec, "while True: pass\n")
    assert all(gone_soon(pid) for pid in started)


def test_nothing_the_course_code_started_outlives_the_build_command(mini_course):
    pids = mini_course / "pids"
    (mini_course / "kernels" / "forker.py").write_text(
        START_CHILDREN + f"open({str(pids)!r}, 'w').write(repr(started))\nLIMIT = 3\n"
    )
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", "The limit is {calc}`forker.LIMIT`."))
    without_time_limit(mini_course)  # numpy's import alone can take many seconds on a busy machine
    done = subprocess.run(
        [sys.executable, "-m", "coursegen", "--root", str(mini_course), "build"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    started = eval(pids.read_text())
    assert len(started) == 2 and all(gone_soon(pid) for pid in started)


@pytest.mark.usefixtures("how_started")
def test_a_worker_that_dies_is_reported_and_replaced(tmp_path):
    with pytest.raises(AuthorCodeStopped) as stopped:
        call(ROOMY, tmp_path, builtins.exec, "import os; os._exit(3)")
    assert not stopped.value.timed_out and "exit status 3" in stopped.value.message
    assert call(ROOMY, tmp_path, builtins.eval, "3") == 3


@pytest.mark.usefixtures("how_started")
def test_results_stream_back_in_order_and_stop_at_the_first_failure(tmp_path):
    results = RUNTIME[0].call_each(ROOMY, tmp_path, builtins.eval, [("1",), ("1/0",), ("3",)])
    assert next(results) == 1
    with pytest.raises(ZeroDivisionError):
        next(results)
    assert call(ROOMY, tmp_path, builtins.eval, "4") == 4  # the failed request does not confuse the next
    before = worker_pid()
    unread = RUNTIME[0].call_each(ROOMY, tmp_path, builtins.eval, [("5",)] * 3)
    assert next(unread) == 5
    unread.close()  # its other answers are never read: the next call gets a fresh worker
    assert call(ROOMY, tmp_path, builtins.eval, "6") == 6
    assert worker_pid() != before


def test_a_nested_calc_expression_is_a_problem_not_a_crash(mini_course, capsys):
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", "Minus {calc}`" + "-" * 100_000 + "1`."))
    status, _, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 1 and "Traceback" not in err
    assert err.startswith("lessons/02-second.md:12:7: {calc} expression '-----")
    assert "is nested too deeply to read" in err


def test_a_huge_int_range_is_counted_not_listed(mini_course, capsys):
    spec = mini_course / "widgets" / "kda-chunkwise" / "spec.yaml"
    spec.write_text(spec.read_text().replace("max: 9999", "max: 2147483647"))
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", "```widget kda-chunkwise T=16\n```"))
    started = time.perf_counter()
    status, _, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 0, err
    assert time.perf_counter() - started < HANG_GUARD  # listing 2**31 values would take longer, or all memory
    html = (mini_course / "site" / "second.html").read_text()
    assert 'type="number" id="widget-kda-chunkwise-seed" name="seed" min="0" max="2147483647"' in html


def test_the_pool_worker_of_a_large_build_starts_its_own_worker(mini_course, tmp_path, monkeypatch):
    starts = tmp_path / "worker-starts"
    original = author_code.Worker.__init__

    def recorded(self, *args):
        with starts.open("a") as log:  # the fork writes here too
            log.write(f"{os.getpid()}\n")
        original(self, *args)

    monkeypatch.setattr(author_code.Worker, "__init__", recorded)
    lessons = mini_course / "lessons"
    units = []
    for number in range(3, 33):
        (lessons / f"{number:02d}-extra-{number}.md").write_text(
            f"---\ntitle: Extra {number}\n---\n\nTile {{calc}}`overflow.largest_safe_tile(-{number % 5 + 1})`.\n"
        )
        units.append(f"  - slug: extra-{number}\n")
    course = mini_course / "course.yaml"
    course.write_text(course.read_text().replace("  - slug: check\n", "".join(units) + "  - slug: check\n"))
    both = build_site(mini_course, BuildOptions(jobs=2), Session()).outputs
    one = build_site(mini_course, BuildOptions(jobs=1), Session()).outputs
    assert both == one
    assert len(set(starts.read_text().split())) == 2  # this process's worker, and the fork's own
    assert ">17</span>" in both["extra-4.html"].decode()


@pytest.mark.usefixtures("how_started")
def test_the_setup_has_its_own_limit_and_calls_are_timed_without_it(tmp_path):
    """Importing the course's package (a setup) may take longer than one call is allowed: on a loaded machine
    numpy's import alone can outlast `limits.seconds`. The setup sleeps past the call limit, so it fails on a
    build that times it with that limit, however fast the machine; its own limit is roomy."""
    slow_import = Limits(seconds=0.5, import_seconds=600)
    setup = (time.sleep, (1.0,))
    assert call(slow_import, tmp_path, builtins.eval, "6 * 7", setup=setup) == 42
    with pytest.raises(AuthorCodeStopped) as stopped:  # the call itself keeps the per-call limit
        call(slow_import, tmp_path, time.sleep, 60, setup=setup)
    assert stopped.value.timed_out and stopped.value.message == "did not finish within 0.5 s"
    tight_import = Limits(seconds=600, import_seconds=0.5)
    with pytest.raises(author_code.SetupFailed) as failed:
        call(tight_import, tmp_path, builtins.eval, "1", setup=(time.sleep, (60,)))
    assert isinstance(failed.value.error, AuthorCodeStopped) and failed.value.error.message.endswith("within 0.5 s")
