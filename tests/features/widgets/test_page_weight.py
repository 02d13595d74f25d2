"""A page made large by its baked widget states is warned about: the page, its size, each widget's share."""

from __future__ import annotations

import pytest
from helpers import run_cli

from coursegen.features.widgets.page_weight import PAGE_LIMIT


@pytest.fixture
def course(tmp_path, capsys):
    folder = tmp_path / "tides"
    assert run_cli(capsys, "init", folder)[0] == 0
    return folder


def fatten(course, digits: int) -> None:
    """Make each of the widget's 1,000 baked states carry an amount written with `digits` decimals."""
    widget = course / "widgets" / "growth-steps" / "widget.py"
    widget.write_text(widget.read_text().replace(":.2f}", f":.{digits}f}}"))


def test_a_page_over_the_limit_mostly_of_baked_states_is_warned_about_at_the_widgets_fence(course, capsys):
    fatten(course, 600)
    lesson = (course / "lessons" / "01-welcome.md").read_text().splitlines()
    line = lesson.index("```widget growth-steps rate=5 steps=10") + 1
    status, _, err = run_cli(capsys, "--root", course, "check")
    assert status == 0, err
    first, hint = err.splitlines()[:2]
    assert first.startswith(f"lessons/01-welcome.md:{line}: warning: page 'welcome' is ")
    size = int(first.split(" is ")[1].split(" KB")[0].replace(",", ""))
    assert size * 1000 > PAGE_LIMIT
    assert first.endswith("% of it baked widget states: 'growth-steps' " + first.split("'growth-steps' ")[1])
    share = int(first.rsplit("(", 1)[1].rstrip("%)"))
    assert 90 <= share < 100
    assert hint == (
        "    hint: bake fewer states: list fewer parameters under precompute in widgets/growth-steps/spec.yaml, or "
        "give its sliders a larger step; a state that is not baked is computed by live Python when it is chosen"
    )
    status, _, err = run_cli(capsys, "--root", course, "check", "--strict")
    assert status == 1 and "page 'welcome' is " in err


def test_states_under_the_limit_give_no_warning(course, capsys):
    fatten(course, 300)  # about 300 KB of states: a large page, but under the limit
    status, _, err = run_cli(capsys, "--root", course, "check", "--strict")
    assert status == 0 and err == "", err


def test_a_watched_rebuild_warns_as_a_full_build_does_when_a_widget_fattens_and_thins(course):
    """Each page's warning is kept per unit (model.per_unit): the re-parsed page's is found again."""
    from coursegen.pipeline import build_site
    from coursegen.session import Session

    session, changed = Session(), ["widgets/growth-steps/widget.py"]
    build_site(course, session=session)
    session.trust_watcher()
    build_site(course, session=session)
    widget = course / changed[0]
    thin = widget.read_text()
    for fat, warned in ((True, True), (False, False)):
        fatten(course, 600) if fat else widget.write_text(thin)
        session.note_changes(course, changed)
        warm = [w.format() for w in build_site(course, session=session).warnings]
        assert warm == [w.format() for w in build_site(course).warnings]
        assert any("baked widget states" in w for w in warm) == warned
