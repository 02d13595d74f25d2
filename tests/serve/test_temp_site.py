"""serve's temporary folders: a later serve removes only those whose lock no process holds.

A pid is no test of life across pid namespaces (a serve in a container sharing /tmp has a number this
one cannot see): a serve there had its folder removed while it ran, and answered 404 from then on.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coursegen.pipeline import BuildOptions
from coursegen.serve.server import LiveServer
from coursegen.serve.temp_site import LOCK, make_temporary_site, remove_abandoned_sites

NO_SUCH_PID = 2**22 + 4321  # above Linux's largest process id: no process here has it

HOLD = "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX); "
HOLD += "print('locked', flush=True); sys.stdin.read()"


def left_by_a_serve(parent: Path, pid: int, suffix: str) -> Path:
    """A serve's temporary folder, as one that ended (or runs elsewhere) leaves it: a site and a lock file."""
    folder = parent / f"coursegen-serve-{pid}-{suffix}"
    (folder / "site").mkdir(parents=True)
    (folder / "site" / "index.html").write_text("a page")
    (folder / LOCK).write_bytes(b"")
    return folder


@pytest.fixture
def holder(tmp_path):
    """Start a process that locks a file given to it, as a live serve in another pid namespace does."""
    started: list[subprocess.Popen] = []

    def hold(lock: Path) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        started.append(process)
        assert process.stdout is not None and process.stdout.readline() == "locked\n"
        return process

    yield hold
    for process in started:
        process.kill()
        process.wait()


def test_a_folder_whose_lock_a_live_process_holds_is_left_alone_whatever_its_pid(tmp_path, holder):
    running_elsewhere = left_by_a_serve(tmp_path, NO_SUCH_PID, "ab_12")  # its pid means nothing here
    ended = left_by_a_serve(tmp_path, NO_SUCH_PID, "cd34")
    ours_by_number = left_by_a_serve(tmp_path, os.getpid(), "ef56")  # a reused number is no serve of ours
    process = holder(running_elsewhere / LOCK)
    assert sorted(remove_abandoned_sites(tmp_path)) == sorted([ended, ours_by_number])
    assert (running_elsewhere / "site" / "index.html").read_text() == "a page"
    process.stdin.close()  # the serve ends: the kernel lets go of its lock
    process.wait()
    assert remove_abandoned_sites(tmp_path) == [running_elsewhere]
    assert list(tmp_path.iterdir()) == []


def test_what_is_no_serves_folder_with_a_lock_is_left_alone(tmp_path):
    """An older coursegen's folder (no lock file) or one being made, a file, a link, another name."""
    (tmp_path / f"coursegen-serve-{NO_SUCH_PID}-old").mkdir()
    (tmp_path / f"coursegen-serve-{NO_SUCH_PID}-file").write_text("not a folder")
    target = left_by_a_serve(tmp_path / "elsewhere", NO_SUCH_PID, "gh78")
    (tmp_path / f"coursegen-serve-{NO_SUCH_PID}-link").symlink_to(target)
    lock_link = tmp_path / f"coursegen-serve-{NO_SUCH_PID}-lockLink"
    lock_link.mkdir()
    (lock_link / LOCK).symlink_to(target / LOCK)
    before = sorted(path.name for path in tmp_path.rglob("*"))
    assert remove_abandoned_sites(tmp_path) == []
    assert sorted(path.name for path in tmp_path.rglob("*")) == before


def test_a_new_temporary_folder_is_locked_until_it_is_removed(tmp_path):
    made = make_temporary_site(tmp_path)
    assert made.folder.name.startswith(f"coursegen-serve-{os.getpid()}-") and made.site.parent == made.folder
    assert sorted(path.name for path in made.folder.iterdir()) == [LOCK]  # the site is written later
    assert remove_abandoned_sites(tmp_path) == []  # the same process, another open file: still refused
    made.remove()
    assert list(tmp_path.iterdir()) == []


def test_a_running_serve_holds_its_folders_lock_and_removes_the_folder_on_stop(mini_course):
    server = LiveServer(mini_course, BuildOptions(), port=0, log=lambda text: None).start(watch=False)
    try:
        folder = server.site.parent
        # The search index's thread starts its process after the first build; a stop while that process
        # starts is another matter (search's own), so this test stops once the thread has done its turn.
        deadline = time.monotonic() + 600  # only stops a hang
        while server.cache.background.worker is not None:
            assert time.monotonic() < deadline, "the search index's first turn never ended"
            time.sleep(0.1)
        probe = os.open(folder / LOCK, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(probe)
        assert folder not in remove_abandoned_sites(folder.parent)
        assert (server.site / "index.html").is_file()
    finally:
        server.stop()
    assert not folder.exists()
