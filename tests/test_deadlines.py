"""watchdog.Deadlines: the time limit of the parser code an extension adds, one guard thread for many calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from coursegen.watchdog import Deadlines, OutOfTime


def ours(name: str) -> bool:
    return name == __file__


def test_a_call_past_its_limit_is_stopped_where_it_was():
    deadlines, stuck = Deadlines(), []
    call = deadlines.enter(0.2, ours, stuck.append)
    with pytest.raises(OutOfTime):
        try:
            while True:
                pass  # the loop
        finally:
            deadlines.leave(call)
    assert call is not None and call.where is not None
    assert call.where[0] == __file__
    assert Path(__file__).read_text().splitlines()[call.where[1] - 1].strip() in ("while True:", "pass  # the loop")
    assert stuck == []


def test_a_call_that_catches_its_stop_is_given_up_on():
    deadlines, stuck = Deadlines(), []
    call = deadlines.enter(0.2, ours, stuck.append)
    try:
        while not stuck:  # catches every OutOfTime until the guard gives up (extensions: ends the process)
            try:
                while not stuck:
                    pass
            except OutOfTime:
                pass
    finally:
        deadlines.leave(call)
    assert stuck and stuck[0] is not None and stuck[0][0] == __file__


def test_a_call_inside_another_runs_under_the_outer_limit_and_the_guard_ends_when_idle():
    deadlines = Deadlines()
    outer = deadlines.enter(60, ours, lambda where: None)
    assert outer is not None and deadlines.enter(60, ours, lambda where: None) is None
    deadlines.leave(outer)
    assert deadlines.calls == {}
    guard = deadlines.guard
    assert guard is not None
    guard.join(600)  # IDLE after its last call (a hang guard only: not a timing test)
    assert not guard.is_alive()
