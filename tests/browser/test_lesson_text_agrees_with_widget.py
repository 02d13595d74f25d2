"""Lesson 3 tells the learner how far to move the overflow slider's controls to break the bound: moving them
that many notches in Chromium must overflow, and the notches the text counts must be the sliders' own."""

from __future__ import annotations

import re

import pytest
from pages import open_page
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}


@pytest.fixture(scope="module")
def site(sample_site):
    """The sample course's site, built once for the session and served (conftest.sample_site)."""
    return sample_site


def test_the_moves_lesson_3_names_are_the_notches_that_overflow_its_slider(site, context_factory):
    page = open_page(context_factory(), site, "sequence-axis.html")
    figure = page.locator("figure[data-widget=overflow-slider]")
    expect(figure).to_have_attribute("data-widget-ready", "true")
    text = figure.evaluate("f => f.previousElementSibling.textContent").replace("\n", " ")
    floor, tile = figure.locator("input[type=range][name=g_min]"), figure.locator("input[type=range][name=tile]")
    moves = {  # the value the text names for each control, and how many notches it says that is
        "floor": (floor, re.search(r"floor to (−?[\d.]+)", text), "ArrowLeft"),
        "tile": (tile, re.search(r"tile to (\d+)", text), "ArrowRight"),
    }
    said = [WORDS[word.lower()] for word in re.findall(r"\b(one|two|three|four) notch", text, re.IGNORECASE)]
    assert said, f"the text names no number of notches: {text!r}"
    verdict = figure.locator("[data-out=verdict]")
    for name, (slider, named, key) in moves.items():
        assert named, f"the text names no {name} value"
        value = float(named.group(1).replace("−", "-"))
        start, step = float(slider.input_value()), float(slider.get_attribute("step"))
        notches = round(abs(value - start) / step)
        assert all(count == notches for count in said), (
            f"{name}: the text says {said} notches, the slider needs {notches}"
        )
        for _ in range(notches):
            slider.press(key)
        assert float(slider.input_value()) == value
        expect(verdict).to_have_attribute("data-fits", "no")
        expect(verdict).to_contain_text("overflow")
        slider.fill(str(start))  # back to K3's constants: it fits again
        slider.dispatch_event("input")
        expect(verdict).to_have_attribute("data-fits", "yes")
