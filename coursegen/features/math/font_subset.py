"""The math font cut down to the glyphs the course's formulas use, at build time (fontTools).

Noto Sans Math holds some 4,000 glyphs (264 KB as WOFF2); a course's formulas use a few dozen
characters. Each page's analysis collects the characters inside its `<math>` elements
(`characters`); the math extension's add_files subsets the font to what every page needs
together (`needed`) and serves that file under the font's asset name, so every page shares one
font file, and a formula with a new character makes a new file (and a new content-hashed URL).

What the browser draws besides the characters written: a one-letter `<mi>` in italic, through its
Mathematical Alphanumeric Symbol (MathML Core's `math-auto` transform: "x" is drawn as U+1D465),
and the radical sign of `<msqrt>`/`<mroot>`. Stretched brackets, big operators and script-size
forms are other glyphs of the same characters, reached through the MATH table and the layout
features (`ssty`, …), both kept: the subsetter adds every glyph they lead to.

The output is the same bytes for the same font and characters: no timestamp is recomputed on save.
So the cut's file name can come from what it is cut from (`cut_key`: the font's digest, the
characters, fontTools' version) instead of its bytes, and the cut can run in a forked process
(`Cutting`) while the build links, renders and writes: the pages name it before it exists. Importing
fontTools and cutting take some 0.4 s, most of a small course's cold build on one core otherwise.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import io
import os
import re
import weakref

from coursegen.memo import Memo, remembered

MATH = re.compile(r"<math\b.*?</math>", re.S)
TAG = re.compile(r"<[^>]*>")
ALWAYS = " \u00a0\u221a"  # spaces, and the radical sign <msqrt> and <mroot> draw
# MathML Core's italic mapping of the letters (math-auto): (first, last, first italic form)
ITALIC_RANGES = ((0x41, 0x5A, 0x1D434), (0x61, 0x7A, 0x1D44E), (0x391, 0x3A9, 0x1D6E2), (0x3B1, 0x3C9, 0x1D6FC))
ITALIC_SINGLES = {
    "h": "\u210e",
    "\u0131": "\U0001d6a4",
    "\u0237": "\U0001d6a5",
    "\u2207": "\U0001d6fb",
    "\u2202": "\U0001d715",
    "\u03f5": "\U0001d716",
    "\u03d1": "\U0001d717",
    "\u03f0": "\U0001d718",
    "\u03d5": "\U0001d719",
    "\u03f1": "\U0001d71a",
    "\u03d6": "\U0001d71b",
    "\u03f4": "\U0001d6f3",
}


def characters(page_html: str) -> str:
    """Return the distinct characters written inside the page's `<math>` elements, sorted."""
    found: set[str] = set()
    for formula in MATH.findall(page_html):
        found.update(html.unescape(TAG.sub(" ", formula)))
    return "".join(sorted(found))


def needed(written: str) -> str:
    """Return the characters whose glyphs the pages need: those written, their italic forms, and
    what the browser draws by itself (ALWAYS), sorted."""
    found = set(written) | set(ALWAYS)
    for char in written:
        found.add(italic(char))
    return "".join(sorted(found))


def italic(char: str) -> str:
    """Return the Mathematical Italic form a one-letter `<mi>` is drawn with, or `char` itself."""
    if char in ITALIC_SINGLES:
        return ITALIC_SINGLES[char]
    code = ord(char)
    for first, last, start in ITALIC_RANGES:
        if first <= code <= last:
            return chr(start + code - first)
    return char


class NotAFont(ValueError):
    """The math font file is not a font fontTools can read and cut."""


def subset(font: bytes, text: str, memo: Memo | None = None) -> bytes:
    """Return `font` (WOFF2) cut to the glyphs of `text` and every glyph they lead to, as WOFF2.
    Kept in `memo` by the font's digest and the characters; NotAFont for a file that is no font."""
    import struct

    from fontTools.ttLib import TTLibError

    digest = hashlib.sha256(font).hexdigest()
    try:
        return remembered(
            memo, "math font subset", (digest, text), lambda: _subset(_readable(font, digest, memo), text)
        )
    except (TTLibError, struct.error, LookupError, AssertionError, ValueError, EOFError) as error:
        raise NotAFont(str(error) or type(error).__name__) from error


def _readable(font: bytes, digest: str, memo: Memo | None) -> bytes:
    """Return the font as the subsetter reads it fastest: a WOFF2 whose glyphs were transformed (a
    course's own font) as plain OpenType, kept in `memo` for serve, since undoing the transform
    rebuilds every glyph (a second); any other font as it is, read lazily. The theme's font is vendored
    untransformed (scripts/vendor_math_font.py)."""
    from fontTools.ttLib import TTFont
    from fontTools.ttLib.woff2 import WOFF2Reader

    if font[:4] != b"wOF2" or not any(entry.transformed for entry in WOFF2Reader(io.BytesIO(font)).tables.values()):
        return font

    def decode() -> bytes:
        loaded = TTFont(io.BytesIO(font), recalcTimestamp=False)
        loaded.flavor = None
        out = io.BytesIO()
        loaded.save(out)
        return out.getvalue()

    return remembered(memo, "math font", digest, decode)


def _subset(font: bytes, text: str) -> bytes:
    from fontTools import subset as subsetter
    from fontTools.ttLib import TTFont

    options = subsetter.Options()
    options.layout_features = ["*"]  # every feature the font has (rtlm, frac, …), as the browser asks for them
    options.name_IDs = ["*"]  # the licence and the names stay
    options.notdef_outline = True
    options.flavor = "woff2"
    # No modification date: the same bytes every run. Lazy: only the layout subtables the cut needs are read.
    loaded = TTFont(io.BytesIO(font), recalcTimestamp=False, lazy=True)
    loaded.flavorData = None  # the output's own WOFF2 settings (glyf transformed), not the input's
    cutter = subsetter.Subsetter(options)
    cutter.populate(text=text)
    cutter.subset(loaded)
    loaded.flavor = "woff2"
    out = io.BytesIO()
    loaded.save(out)
    return out.getvalue()


KEY_VERSION = b"coursegen math font cut 1"  # change it when the cut's options change


def cut_key(font: bytes, text: str) -> bytes:
    """Return what names the cut of `font` to `text`: the same bytes for the same cut (see the module's docstring)."""
    import fontTools

    return b"\0".join((KEY_VERSION, hashlib.sha256(font).digest(), text.encode(), fontTools.version.encode()))


def looks_like_a_font(font: bytes) -> bool:
    """Return True for bytes that start as an OpenType, TrueType, WOFF or WOFF2 file does."""
    return font[:4] in (b"wOF2", b"wOFF", b"OTTO", b"true", b"\x00\x01\x00\x00")


class Cutting:
    """The cut of a font, under way: in a forked process where one can be forked, started before the
    characters are known (it imports fontTools meanwhile) and handed them by `cut`, while this process goes
    on; else done here when `result` is asked for. `result` returns the cut (kept in `memo`) or raises
    NotAFont; `cancel` ends the process of a build that failed or needs no cut."""

    def __init__(self, font: bytes):
        from coursegen.parallel import can_fork

        self.font = font
        self.memo: Memo | None = None  # cut()'s: a cutting left by a failed build must not keep a session alive
        self.digest = hashlib.sha256(font).hexdigest()
        self.text: str | None = None
        self.kept: bytes | None = None
        self.pid: int | None = None
        self.reader: int | None = None  # the cut, from the process
        self.writer: int | None = None  # the characters, to the process
        self.open_fds: list[int] = []  # those two while open, for the finalizer
        self.ending: weakref.finalize | None = None
        if can_fork():
            self._fork()

    def _fork(self) -> None:
        text_in, text_out = os.pipe()
        cut_in, cut_out = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # no process to spare: cut here when asked
            for fd in (text_in, text_out, cut_in, cut_out):
                os.close(fd)
            return
        if pid == 0:  # the child: ready fontTools, wait for the characters, cut, hand the bytes over, and leave
            status = 1
            try:  # without running the parent's exit code
                # Keep only its own two pipes: another's end held here would keep that one from closing.
                low, high = sorted((text_in, cut_out))
                os.closerange(3, low)
                os.closerange(low + 1, high)
                os.closerange(high + 1, _max_fd())
                import fontTools.subset
                import fontTools.ttLib.woff2  # noqa: F401

                text = _read_text(text_in)
                if text:
                    with os.fdopen(cut_out, "wb") as out:
                        out.write(subset(self.font, text))
                status = 0
            finally:
                os._exit(status)
        os.close(text_in)
        os.close(cut_out)
        self.pid, self.reader, self.writer = pid, cut_in, text_out
        self.open_fds.extend((cut_in, text_out))
        # A cutting dropped unfinished (its session dropped after a failed build) ends its process: by this
        # process only, not by a worker forked since, which holds a copy of this object.
        self.ending = weakref.finalize(self, _end_if_mine, os.getpid(), pid, self.open_fds)

    def cut(self, text: str, memo: Memo | None = None) -> None:
        """Cut the font to `text` (once): `memo`'s cut when it has one, else the process's (then kept in `memo`)."""
        self.text, self.memo = text, memo
        self.kept = self.memo.peek("math font subset", (self.digest, text)) if self.memo else None
        if self.kept is not None:
            self.cancel()
        elif self.writer is not None:
            # Sent with its length: a process forked since (a parse or author-code worker) holds this pipe's
            # end too, so the cutting process would never see it close.
            data = text.encode()
            with os.fdopen(self.writer, "wb") as out:
                self.open_fds.remove(self.writer)
                self.writer = None
                out.write(len(data).to_bytes(8, "big") + data)

    def result(self) -> bytes:
        assert self.text is not None, "cut() names the characters first"
        if self.kept is not None:
            return self.kept
        if self.pid is not None and self.reader is not None:
            with os.fdopen(self.reader, "rb") as pipe:
                self.open_fds.remove(self.reader)
                self.reader = None
                data = pipe.read()
            _, status = os.waitpid(self.pid, 0)
            self.pid = None
            self._ended()
            if status == 0 and data:
                self.kept = data
                if self.memo is not None:
                    self.memo.put("math font subset", (self.digest, self.text), data)
                return data
        self.kept = subset(self.font, self.text, self.memo)  # here, where its error surfaces (NotAFont)
        return self.kept

    def cancel(self) -> None:
        if self.ending is not None:
            self.ending()  # now, once: closes the open pipes, ends the process and waits for it
        self.ending, self.pid, self.reader, self.writer = None, None, None, None
        self.open_fds.clear()

    def _ended(self) -> None:
        if self.ending is not None:
            self.ending.detach()  # the process is waited for: nothing left for the finalizer
            self.ending = None


def _end_if_mine(owner: int, pid: int, fds: list[int]) -> None:
    """End a cutting process that is still running, from the process that started it (not asked to end:
    another process may hold its pipe's end open)."""
    import signal

    if os.getpid() != owner:
        return
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def _max_fd() -> int:
    try:
        return max(int(os.sysconf("SC_OPEN_MAX")), 1024)
    except (ValueError, OSError):
        return 65536


def _read_text(fd: int) -> str:
    """Return the characters sent to a cutting process: their length in 8 bytes, then their UTF-8."""
    with os.fdopen(fd, "rb") as given:
        size = int.from_bytes(given.read(8) or b"\0", "big")
        return given.read(size).decode() if size else ""


def start_early(font: bytes, session) -> None:
    """Start a cutting of `font` now, kept by `session` for `take` once the characters are known; one left
    by a build that stopped before is ended first."""
    cancel_started(session)
    cutting = Cutting(font)
    if cutting.pid is not None:
        session.font_cutting = cutting


def cancel_started(session) -> None:
    """End the cutting start_early began for `session`'s build, if any (a build whose pages have no formula)."""
    if session is not None and session.font_cutting is not None:
        session.font_cutting.cancel()
        session.font_cutting = None


def take(font: bytes, session) -> Cutting:
    """Return the cutting start_early began for `font` in `session`, or a new one."""
    found = session.font_cutting if session is not None else None
    if found is not None:
        session.font_cutting = None
        if found.digest == hashlib.sha256(font).hexdigest():
            return found
        found.cancel()
    return Cutting(font)
