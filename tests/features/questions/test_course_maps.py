"""The course map and the progress maps: units in order, runs of untitled upcoming units as one line."""

from __future__ import annotations

import re

from helpers import REPO

from coursegen.model import Course, Unit, UnitRun
from coursegen.pipeline import build_site
from coursegen.theme import messages
from coursegen.theme.messages import run_text, unit_label
from coursegen.yamlio import load_yaml

UNTITLED = """  - slug: starter
    part: Baking
    upcoming: true
  - slug: later-1
    upcoming: true
  - slug: later-2
    upcoming: true
  - slug: later-3
    kind: review
    upcoming: true
"""


def upcoming(number, slug, kind="lesson", title="", part=""):
    return Unit(number=number, slug=slug, kind=kind, title=title, part=part)


def test_consecutive_untitled_upcoming_units_of_one_part_become_one_run():
    units = (
        upcoming(1, "a", title="Titled"),
        upcoming(2, "b"),
        upcoming(3, "c"),
        upcoming(4, "d", part="Later"),
        upcoming(5, "e", kind="review", part="Later"),
        upcoming(6, "f", part="Later"),
    )
    outline = Course(config=None, units=units).outline
    assert [type(e).__name__ for e in outline] == ["Unit", "UnitRun", "UnitRun"]
    english = messages.reference(REPO)
    assert run_text(english, outline[1]) == "Lessons 2–3 are still being written"
    assert run_text(english, outline[2]) == "Units 4–6 are still being written" and outline[2].part == "Later"
    assert run_text(english, UnitRun((upcoming(9, "z", kind="review"),))) == "Review 9 is still being written"
    french = {**english, **load_yaml((REPO / "templates/messages/fr.yaml").read_text(encoding="utf-8"))}
    assert run_text(french, outline[1]) == "Leçons 2 à 3 sont encore en cours d’écriture"
    assert unit_label(french, units[0]) == "Leçon 1"


def page_map(html: str) -> str:
    return html.split("data-progress-map", 1)[1].split("</nav>", 1)[0]


def test_the_index_and_every_progress_map_fold_the_untitled_units_into_one_line(review_course):
    config = review_course / "course.yaml"
    config.write_text(
        config.read_text().replace(
            "  - slug: check-dough\n",
            "  - slug: interlude\n    title: Interlude\n    upcoming: true\n  - slug: check-dough\n",
        )
        + UNTITLED
    )
    outputs = {k: v.decode() for k, v in build_site(review_course).outputs.items() if k.endswith(".html")}
    index = outputs["index.html"]
    assert 'data-units="starter later-1 later-2 later-3"' not in index  # runs stop at a change of part
    assert re.search(
        r'data-units="starter">\s*<span class="course-map-title">Lesson 6 is still being written</span>'
        r'\s*<span class="course-map-part">Baking</span>',
        index,
    )
    assert re.search(
        r'data-units="later-1 later-2 later-3">\s*<span class="course-map-title">'
        r"Units 7–9 are still being written</span>",
        index,
    )
    assert 'data-unit="later-2"' not in index and index.count("course-map-unit") == 7
    review_map = page_map(outputs["check-dough.html"])
    assert "<span>Units 7–9 are still being written</span>" in review_map
    # an unwritten unit before this page is upcoming, never covered
    interlude = re.search(r'data-unit="interlude">(.*?)</li>', review_map, re.S).group(1)
    assert "(upcoming)" in interlude and "(covered)" not in interlude
    assert "(covered)" in re.search(r'data-unit="yeast">(.*?)</li>', review_map, re.S).group(1)
