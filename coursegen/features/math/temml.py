"""LaTeX → MathML with Temml, run in this process's own embedded V8 (mini-racer); no Node needed.

vendor/temml.min.js is the pinned npm package's file, copied by `npm run vendor-temml` and shipped
in the wheel (tests/features/math/test_temml.py checks that it equals node_modules' copy).

A V8 isolate does not survive a fork, and the parse stage forks its workers
(coursegen/parallel.py). So the converter is made lazily, on the first formula a process
converts, and belongs to the process that made it, for the process's life: `_CONVERTERS` keeps it by
process id, so a forked worker that inherited one (its parent converted formulas in an earlier build
of a `serve` or a test run) makes its own and never touches the inherited one, not even to free it
(freeing an isolate whose thread the fork does not have hangs or aborts the fork; a session's memo,
which forks drop and collect, must therefore not hold it). The
asyncio loop mini-racer wants is one we never run in a thread: mini-racer then starts no thread
of its own, so `parallel.can_fork` (no other thread) stays true after a build with formulas, and
each call skips the hop to another thread. Formulas are converted a page at a time, in one call:
crossing into V8 costs more than converting a short formula.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import threading
from importlib import resources

SOURCE = "vendor/temml.min.js"
# Temml's settings: errors are thrown (we report them at the formula's line), nothing is trusted
# (no \href, \class, …), and the macro expansion is bounded (a looping \def stops with a message).
CONVERT_ALL = """
function coursegenConvertAll(items) {
  return JSON.stringify(items.map(([latex, display]) => {
    try {
      return [true, temml.renderToString(latex, {displayMode: display, throwOnError: true, trust: false,
                                                 maxExpand: 1000, strict: false})];
    } catch (err) {
      return [false, String(err && err.message || err)];
    }
  }));
}
"""


# Per process by nature (see the module's docstring): never emptied, never read by another process.
_CONVERTERS: dict[int, _Temml] = {}


class _Temml:
    """One V8 context with Temml loaded, usable by the process that made it."""

    def __init__(self):
        import asyncio

        from py_mini_racer import mini_racer

        self.lock = threading.Lock()  # serve's rebuild thread and another must not share the isolate at once
        self.loop = asyncio.new_event_loop()
        source = resources.files(__package__).joinpath(SOURCE).read_text(encoding="utf-8")

        async def start():
            # Entered inside our loop: mini-racer takes it as its own and starts no thread.
            self.keeper = mini_racer(self.loop)  # kept: closing it would free the context
            racer = self.keeper.__enter__()
            racer.eval(source)
            racer.eval(CONVERT_ALL)
            return racer

        self.racer = self._run(start())
        # Never freed, not even by the interpreter's teardown: mini-racer's free, run from a process
        # being dismantled, crashed it (exit status 139 after every test passed). The OS takes the
        # isolate back with the process, as it does for a command-line build (cli.py ends with os._exit).
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(self.keeper))

    def convert(self, items: list[tuple[str, bool]]) -> list[tuple[bool, str]]:
        async def run():
            return self.racer.eval("coursegenConvertAll(" + json.dumps(items) + ")")

        with self.lock:
            return [(ok, text) for ok, text in json.loads(self._run(run()))]

    def _run(self, coroutine):
        """Run `coroutine` on our loop: here, or, where this thread already runs an event loop (a
        notebook, Playwright's sync API), on a thread of its own that ends with the call."""
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:  # the usual case: no loop runs here
            return self.loop.run_until_complete(coroutine)
        found: list = []

        def call() -> None:
            try:
                found.append((True, self.loop.run_until_complete(coroutine)))
            except BaseException as err:  # noqa: BLE001 - raised again in the calling thread
                found.append((False, err))

        helper = threading.Thread(target=call)
        helper.start()
        helper.join()
        ok, value = found[0]
        if not ok:
            raise value
        return value


def convert_all(items: list[tuple[str, bool]]) -> list[tuple[bool, str]]:
    """Return (True, MathML) or (False, Temml's message) for each (latex, display) item, with this
    process's converter (made on its first formula)."""
    if not items:
        return []
    pid = os.getpid()
    if pid not in _CONVERTERS:
        _CONVERTERS[pid] = _Temml()
    return _CONVERTERS[pid].convert(items)


UNDERLINE = re.compile("\u0332")


def short_message(message: str) -> str:
    """Return Temml's message on one line: without its 'ParseError:', the position and the underlined
    excerpt (the formula is quoted in full beside it, and the position would count our placeholders)."""
    first = message.strip().split("\n")[0].strip()
    first = re.sub(r"^(?:Temml )?(?:ParseError|TypeError|Error):\s*", "", first)
    first = UNDERLINE.sub("", first)
    first = re.sub(r"\s+at (?:position \d+|end of input)\s*:.*$", "", first).rstrip(": ")
    return first or "Temml cannot read it"
