"""The math font cut to the course's characters: every character a formula uses is in it, the
stretchy forms and layout features come along, the bytes are the same every run, and a new character
in one page's math makes a new font."""

from __future__ import annotations

import io
import re

from fontTools.ttLib import TTFont
from helpers import REPO, without_time_limit

from coursegen.author_code import MAX_SECONDS
from coursegen.features.math import font_subset
from coursegen.pipeline import BuildOptions, build_site
from coursegen.session import Session
from coursegen.theme.math_font import FONT

WHOLE = (REPO / "templates" / "assets" / FONT).read_bytes()


def served_font(outputs: dict[str, bytes]) -> bytes:
    """Return the one math font the site serves (checking math.css names it)."""
    [(name, data)] = [
        (n, d) for n, d in outputs.items() if re.fullmatch(r"assets/vendor/noto-sans-math\.\w+\.woff2", n)
    ]
    sheet = next(d.decode() for n, d in outputs.items() if re.fullmatch(r"assets/math\.\w+\.css", n))
    assert f'url("{name.removeprefix("assets/")}")' in sheet
    return data


def cmap(font: bytes) -> set[str]:
    return {chr(code) for code in TTFont(io.BytesIO(font)).getBestCmap()}


def test_every_character_of_the_sample_courses_formulas_is_in_the_served_font(sample_course):
    config = sample_course / "course.yaml"  # its code cells may run as slowly as the machine makes them
    config.write_text(config.read_text() + f"limits: {{seconds: {MAX_SECONDS}}}\n")
    outputs = build_site(sample_course, BuildOptions(jobs=1)).outputs
    written = "".join(font_subset.characters(data.decode()) for name, data in outputs.items() if name.endswith(".html"))
    whole, served = cmap(WHOLE), served_font(outputs)
    held = cmap(served)
    assert {c for c in written if c in whole} <= held  # every character the font has at all
    assert {font_subset.italic(c) for c in written} & whole <= held  # a one-letter <mi> is drawn in italic
    assert "\u221a" in held and "𝑥" in held and "ℎ" in held  # the radical, italic x and h (sample's formulas)
    assert len(served) < len(WHOLE) / 5, f"{len(served)} bytes of {len(WHOLE)}"


def test_the_math_table_and_its_stretchy_and_script_forms_are_kept():
    cut = TTFont(io.BytesIO(font_subset.subset(WHOLE, font_subset.needed("(∑x"))))
    assert "MATH" in cut and "GSUB" in cut
    variants = cut["MATH"].table.MathVariants
    covered = set(variants.VertGlyphCoverage.glyphs)
    paren = cut.getBestCmap()[ord("(")]
    assert paren in covered  # "(" grows with what it encloses: its larger forms are in the font
    index = variants.VertGlyphCoverage.glyphs.index(paren)
    larger = [v.VariantGlyph for v in variants.VertGlyphConstruction[index].MathGlyphVariantRecord]
    assert len(larger) > 1 and set(larger) <= set(cut.getGlyphOrder())
    features = {record.FeatureTag for record in cut["GSUB"].table.FeatureList.FeatureRecord}
    assert "rtlm" in features  # the font's layout features stay (this one mirrors brackets in right-to-left math)


def test_the_cut_font_is_the_same_bytes_every_time():
    first = font_subset.subset(WHOLE, font_subset.needed("x+1=y"))
    assert font_subset.subset(WHOLE, font_subset.needed("x+1=y")) == first
    assert TTFont(io.BytesIO(first))["head"].modified == TTFont(io.BytesIO(WHOLE))["head"].modified


def put(course, text: str) -> None:
    lesson = course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", text))


def test_a_new_character_in_one_pages_math_rebuilds_the_font(mini_course):
    without_time_limit(mini_course)
    session = Session()
    put(mini_course, "A formula: $a+b$.")
    before = served_font(build_site(mini_course, BuildOptions(jobs=1), session=session).outputs)
    assert "∮" not in cmap(before)
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("$a+b$", "$\\oint a+b$"))
    after = served_font(build_site(mini_course, BuildOptions(jobs=1), session=session).outputs)
    assert "∮" in cmap(after) and cmap(before) < cmap(after)
    assert after == served_font(build_site(mini_course, BuildOptions(jobs=1)).outputs)  # as a cold build makes it


def test_a_course_without_formulas_serves_the_font_whole(mini_course):
    outputs = build_site(mini_course, BuildOptions(jobs=1)).outputs
    if not any("<math" in data.decode() for name, data in outputs.items() if name.endswith(".html")):
        assert served_font(outputs) == WHOLE


def build_with_own_font(course, font: bytes):
    """Build `course` with a formula and `font` as its own math font; return the result and the math font's warning."""
    put(course, "A formula: $a+b$.")
    own = course / "templates" / "assets" / "vendor" / "noto-sans-math.woff2"
    own.parent.mkdir(parents=True, exist_ok=True)
    own.write_bytes(font)
    result = build_site(course, BuildOptions(jobs=1))
    [warning] = [p.format() for p in result.warnings if "math font" in p.message]
    return result, warning


def test_a_course_font_that_is_no_font_is_served_whole_with_a_warning(mini_course):
    result, warning = build_with_own_font(mini_course, b"not a font")
    assert served_font(result.outputs) == b"not a font"
    assert warning.startswith(
        "templates/assets/vendor/noto-sans-math.woff2: warning: the math font could not be cut to the formulas' characters,"
        " so it is served whole: "
    )


def test_the_vendored_font_is_the_npm_packages_untransformed():
    """The theme's font is what scripts/vendor_math_font.py makes of the pinned npm package: its glyphs,
    with no WOFF2 table transformed, so cutting it reads tables instead of rebuilding 4,000 glyphs."""
    import importlib.util

    from fontTools.ttLib.woff2 import WOFF2Reader

    spec = importlib.util.spec_from_file_location("vendor_math_font", REPO / "scripts" / "vendor_math_font.py")
    assert spec and spec.loader
    vendor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vendor)
    package = (vendor.PACKAGE / "files" / "noto-sans-math-latin-400-normal.woff2").read_bytes()
    assert vendor.untransformed(package) == WHOLE
    reader = WOFF2Reader(io.BytesIO(WHOLE))
    assert not any(entry.transformed for entry in reader.tables.values())
    original, vendored = TTFont(io.BytesIO(package)), TTFont(io.BytesIO(WHOLE))
    assert sorted(original.keys()) == sorted(vendored.keys())
    glyphs = original.getGlyphOrder()
    assert glyphs == vendored.getGlyphOrder()
    for name in glyphs[::50]:  # a sample of the outlines: the same points
        assert original["glyf"][name].getCoordinates(original["glyf"]) == vendored["glyf"][name].getCoordinates(
            vendored["glyf"]
        )


def test_a_transformed_woff2_is_cut_to_the_same_font_as_the_untransformed_one():
    """A course's own font may be a WOFF2 with its glyphs transformed (as font tools usually write
    them): it is decoded first (kept in the memo for serve) and cut to the same bytes."""
    from coursegen.memo import Memo

    package = (
        REPO / "node_modules" / "@fontsource" / "noto-sans-math" / "files" / "noto-sans-math-latin-400-normal.woff2"
    )
    text = font_subset.needed("f′(x)=∑αβ")
    memo = Memo()
    assert font_subset.subset(package.read_bytes(), text, memo) == font_subset.subset(WHOLE, text)
    assert memo.tables.get("math font")  # the decoded font is kept for the next cut


def assert_gone(pid: int) -> None:
    """Check that process `pid` was ended and waited for (no child of this process has that id)."""
    import os

    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return
    raise AssertionError(f"process {pid} was not ended and waited for")


def test_the_cut_made_in_a_forked_process_is_the_cut_made_here():
    """The build cuts the font in a forked process while it renders (font_subset.Cutting): the same bytes
    as cutting here, kept in the memo for the next build, and the process is gone once they are read."""

    from coursegen.memo import Memo

    text = font_subset.needed("f′(x)=∑αβ")
    memo = Memo()
    cutting = font_subset.Cutting(WHOLE)
    cutting.cut(text, memo)
    assert cutting.pid is not None  # forked (no other thread runs in this test)
    pid = cutting.pid
    assert cutting.result() == font_subset.subset(WHOLE, text)
    assert cutting.pid is None
    assert_gone(pid)
    again = font_subset.Cutting(WHOLE)
    again.cut(text, memo)
    assert again.pid is None and again.result() == cutting.result()  # the memo had it: its process was ended


def test_a_cut_that_fails_in_the_forked_process_is_a_warning_and_the_whole_font(mini_course):
    result, warning = build_with_own_font(mini_course, b"wOF2 and nothing of a font after it")
    assert served_font(result.outputs) == b"wOF2 and nothing of a font after it"
    assert "could not be cut to the formulas' characters, so it is served whole" in warning


def test_a_cancelled_cut_leaves_no_process():

    cutting = font_subset.Cutting(WHOLE)
    pid = cutting.pid
    assert pid is not None
    cutting.cancel()
    assert_gone(pid)


def test_the_cut_is_named_by_what_it_is_cut_from():
    text = font_subset.needed("ab")
    assert font_subset.cut_key(WHOLE, text) == font_subset.cut_key(WHOLE, text)
    assert font_subset.cut_key(WHOLE, text) != font_subset.cut_key(WHOLE, font_subset.needed("abc"))
    assert font_subset.cut_key(WHOLE, text) != font_subset.cut_key(WHOLE + b"\0", text)


def test_a_cutting_started_early_is_handed_its_characters_though_another_process_holds_its_pipe():
    """prepare starts the cutting before the parse workers fork, and they inherit its pipe: the characters
    go with their length, so the cutting process never waits for a close that the worker would hold back."""
    import os
    import signal
    import threading

    from coursegen.memo import Memo

    cutting = font_subset.Cutting(WHOLE)
    holder = os.fork()
    if holder == 0:  # a worker forked meanwhile: holds every pipe end until it is killed
        signal.pause()
        os._exit(0)
    try:
        text = font_subset.needed("xyz")
        cutting.cut(text, Memo())
        found: list[bytes] = []
        waiter = threading.Thread(target=lambda: found.append(cutting.result()), daemon=True)
        waiter.start()
        waiter.join(600)  # a guard against a hang, not a measure of speed
        assert found == [font_subset.subset(WHOLE, text)]
    finally:
        os.kill(holder, signal.SIGKILL)
        os.waitpid(holder, 0)


def test_a_build_without_formulas_ends_the_cutting_it_started(mini_course):
    session = Session()
    build_site(mini_course, BuildOptions(jobs=1), session=session)
    assert session.font_cutting is None


def test_a_cutting_dropped_unfinished_ends_its_process():
    """A build that fails between the parse and the cut leaves its session a cutting: dropping the session
    (a test's, or serve's previous one) ends the cutting process, which would otherwise wait for ever."""
    import gc

    session = Session()
    font_subset.start_early(WHOLE, session)
    pid = session.font_cutting.pid
    assert pid is not None
    del session
    gc.collect()
    assert_gone(pid)


def test_the_cutting_starts_early_only_for_a_course_that_may_have_formulas(mini_course, monkeypatch):
    """No source with a `$` or a `{math}` fence: no cutting process takes CPU from the build's others."""
    started = []
    monkeypatch.setattr(font_subset, "start_early", lambda font, session: started.append(1))
    for lesson in (mini_course / "lessons").glob("*.md"):
        lesson.write_text(lesson.read_text().replace("$", "").replace("{math}", "{note}"))
    build_site(mini_course, BuildOptions(jobs=1), session=Session())
    assert started == []
    put(mini_course, "A formula: $a+b$.")
    build_site(mini_course, BuildOptions(jobs=1), session=Session())
    assert started == [1]
