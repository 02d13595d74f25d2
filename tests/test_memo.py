"""The build's memo: bounded per kind, every kind declared, the only cache that outlives a build, cold in a
fresh Session; and no module of the build process keeps state of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from coursegen.memo import SIZES, Memo, UndeclaredKind, remembered
from coursegen.pipeline import BuildOptions, build_site
from coursegen.session import Session

ENGINE = Path(__file__).resolve().parents[1] / "coursegen"


def test_each_kind_keeps_its_most_recently_used_entries_up_to_its_size():
    memo = Memo(sizes={"small": 2})  # a kind declared for this memo alone
    for key in ("a", "b"):
        memo.put("small", key, key.upper())
    assert memo.get("small", "a", lambda: "never") == "A"  # a hit: "a" is now the most recent
    memo.put("small", "c", "C")
    assert list(memo.table("small")) == ["a", "c"]  # "b", the least recently used, went
    assert memo.get("small", "b", lambda: "again") == "again"
    assert len(memo.table("small")) == 2
    for number in range(1000):  # a long serve session: a kind never holds more than its size
        memo.get("lexer", f"language {number}", lambda: None)
    assert len(memo.table("lexer")) == memo.sizes["lexer"]


def test_every_kind_has_a_declared_size_and_an_undeclared_one_fails_at_once():
    memo = Memo()
    for use in (
        lambda: memo.get("no such kind", "key", lambda: 1),
        lambda: memo.put("no such kind", "key", 1),
        lambda: memo.peek("no such kind", "key"),
        lambda: memo.clear("no such kind"),
    ):
        with pytest.raises(UndeclaredKind, match="'no such kind' has no size"):
            use()
    assert memo.tables == {}


def test_every_kind_the_engine_names_is_declared():
    """Each kind named in a memo call in coursegen's source is in SIZES (a misspelt one would fail only
    on the path that uses it)."""
    call = re.compile(
        r'(?:(?:remembered|per_unit)\(\s*[\w.]+,|memo\.(?:get|put|peek|pop|table|clear|keep_only)\()\s*"([^"]+)"'
    )
    named = {kind for file in ENGINE.rglob("*.py") for kind in call.findall(file.read_text())}
    assert {"page", "rendered", "theme assets", "offline digests"} <= named  # the pattern finds them
    assert sorted(named - set(SIZES)) == []


def test_helpers_compute_without_a_memo_and_keep_their_answer_in_one():
    calls = []

    def compute():
        calls.append(1)
        return len(calls)

    assert remembered(None, "lexer", "key", compute) == 1 and remembered(None, "lexer", "key", compute) == 2
    memo = Memo()
    assert remembered(memo, "lexer", "key", compute) == 3 and remembered(memo, "lexer", "key", compute) == 3


def test_the_build_process_keeps_no_mutable_module_global():
    """What lives across builds is the session's: no module of the build process holds a mutable
    global (a dict, list or set assigned at module level and changed later) or a context variable.
    The worker process's own tables (calc, widgets/baking) and parallel's fork-inherited work say why
    they are per-process where they are defined."""
    allowed = {
        "course_code.py": {"_NAMES", "_LOADED"},
        "features/widgets/baking.py": {"_MODULES", "_NAMESPACES"},
        "features/cells/execute.py": {"_PAGES"},  # the worker's page namespaces
        "features/cells/figures.py": {"ACTIVE", "SET_UP"},
        "features/cells/boundary.py": {
            "_ACTIVE",
            "_HOOKED",
        },  # the worker's audit hook and its folders  # the worker's running cell, for plt.show()
        "features/math/temml.py": {"_CONVERTERS"},  # a V8 isolate per process, never freed by a fork
    }
    found = []
    for file in sorted(ENGINE.rglob("*.py")):
        text, shown = file.read_text(), file.relative_to(ENGINE).as_posix()
        if "contextvars" in text or (re.search(r"^\s*global\s", text, re.M) and shown != "parallel.py"):
            found.append(shown)
        for name in re.findall(r"^(_?[A-Z][A-Z0-9_]*)(?:: [^=]+)? = (?:\{\}|\[|set\(\)|dict\(\))", text, re.M):
            if name not in allowed.get(shown, ()):
                found.append(f"{shown}: {name}")
    assert found == []


def test_a_fresh_build_cache_is_cold_and_a_kept_one_is_warm(mini_course, monkeypatch):
    import coursegen.features.math.temml as temml
    import coursegen.stages.assets as assets

    made, real_assets, converted = [], assets._theme_assets, []
    monkeypatch.setattr(assets, "_theme_assets", lambda stamps, memo: made.append(1) or real_assets(stamps, memo))
    lesson = mini_course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text() + "\n```python\nx = 1\n```\n\nMath $x^2$.\n")
    cache, one = Session(), BuildOptions(jobs=1)  # one process: the memo counts are this one's
    first = build_site(mini_course, one, cache).outputs
    assert made == [1]  # the theme's assets were read once, though three steps asked for them
    assert cache.memo.peek("lexer", "python") is not None and cache.memo.peek("mathml", ("x^2", False))
    assert build_site(mini_course, one, cache).outputs == first and made == [1]  # warm: nothing read again
    assert build_site(mini_course, one, Session()).outputs == first and made == [1, 1]  # cold
    assert build_site(mini_course, one).outputs == first and made == [1, 1, 1]  # no cache: a fresh one
    monkeypatch.setattr(
        temml,
        "convert_all",
        lambda items: [converted.append(latex) or (True, "<math/>") for latex, _ in items],
    )
    build_site(mini_course, one, Session())
    assert "x^2" in converted  # nothing of the earlier caches reached this build


def test_no_module_of_the_build_keeps_a_cache_of_its_own():
    """Every build-process cache is in the memo: functools caches outlive a Session, so none is left."""
    found = [
        f"{file.relative_to(ENGINE)}:{number}"
        for file in sorted(ENGINE.rglob("*.py"))
        if "skeletons" not in file.parts
        for number, line in enumerate(file.read_text().splitlines(), 1)
        if re.search(r"\b(lru_cache|functools\.cache|@cache)\b", line)
    ]
    assert found == []


def test_a_kept_build_cache_reads_a_widget_spec_again_only_when_its_files_change(sample_course, monkeypatch):
    import coursegen.features.widgets.spec as spec

    read, real = [], spec._read_widget
    monkeypatch.setattr(
        spec, "_read_widget", lambda root, folder, shown: read.append(folder.name) or real(root, folder, shown)
    )
    cache, one = Session(), BuildOptions(jobs=1)
    first = build_site(sample_course, one, cache).outputs
    widgets = sorted(read)
    assert widgets  # the sample course has widgets, each read once
    read.clear()
    assert build_site(sample_course, one, cache).outputs == first and read == []  # nothing changed: none read
    spec_file = sample_course / "widgets" / widgets[0] / "spec.yaml"
    spec_file.write_text(spec_file.read_text() + "\n# a comment\n")
    assert build_site(sample_course, one, cache).outputs == first and read == [widgets[0]]  # the edited one alone
