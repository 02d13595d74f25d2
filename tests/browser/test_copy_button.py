"""The Copy button course.js puts on each code block never covers code: measured on the sample course's lessons,
at a phone's width and a desktop's, as boxes of the button and of every line of the code's text."""

from __future__ import annotations

import pytest
from pages import open_page

LESSONS = ("k3-at-a-glance.html", "kda.html", "sequence-axis.html", "depth-axis.html")

# Every box of the code's text (a Range's client rects: one per line of each text node and highlighted token)
# that meets its block's button; closed <details> are opened first, so a widget's code is measured too.
OVERLAPS = """() => {
  for (const details of document.querySelectorAll(".unit-body details")) details.open = true;
  const found = {buttons: 0, overlaps: []};
  for (const button of document.querySelectorAll(".code-block > .code-copy")) {
    const b = button.getBoundingClientRect();
    if (!b.width) continue;  // in a hidden tab
    found.buttons += 1;
    const range = document.createRange();
    range.selectNodeContents(button.parentElement.querySelector("pre"));
    for (const r of range.getClientRects()) {
      if (r.width && r.height && r.left < b.right && r.right > b.left && r.top < b.bottom && r.bottom > b.top) {
        found.overlaps.push(button.parentElement.querySelector("pre").textContent.split("\\n")[0]);
        break;
      }
    }
  }
  return found;
}"""

# Each code block's padding, top and bottom (equal unless a strip is kept for a button), and whether it has one.
PADDINGS = """() => [...document.querySelectorAll(".unit-body pre")].map((pre) => {
  const style = getComputedStyle(pre);
  return [style.paddingTop, style.paddingBottom, pre.closest(".code-block") !== null];
})"""


@pytest.mark.parametrize("width", [390, 1280])
def test_no_line_of_code_lies_under_its_copy_button(sample_site, context_factory, width):
    context = context_factory(viewport={"width": width, "height": 900})
    measured = 0
    for name in LESSONS:
        found = open_page(context, sample_site, name).evaluate(OVERLAPS)
        assert found["overlaps"] == [], f"{name} at {width} px: the Copy button covers code"
        measured += found["buttons"]
    assert measured >= 8  # the lessons' fences, code cells and widgets' code were all measured


@pytest.mark.parametrize("width", [390, 1280])
def test_the_strip_for_the_button_is_there_only_with_the_button(sample_site, context_factory, width):
    for javascript in (False, True):
        context = context_factory(viewport={"width": width, "height": 900}, java_script_enabled=javascript)
        paddings = open_page(context, sample_site, "sequence-axis.html").evaluate(PADDINGS)
        assert any(button for _, _, button in paddings) == javascript
        for top, bottom, button in paddings:
            assert (top == bottom) != button, (top, bottom, button)  # no empty strip without JavaScript


@pytest.mark.parametrize("width", [390, 1280])
def test_paper_has_no_strip_for_the_button_it_does_not_print(sample_site, context_factory, width):
    page = open_page(context_factory(viewport={"width": width, "height": 900}), sample_site, "sequence-axis.html")
    page.emulate_media(media="print")
    paddings = page.evaluate(PADDINGS)
    assert any(button for _, _, button in paddings)
    assert all(top == bottom for top, bottom, _ in paddings), paddings


@pytest.mark.parametrize("width", [390, 1280])
def test_the_strip_is_there_before_course_js_adds_the_buttons(sample_site, context_factory, width):
    """Nothing moves when the buttons come: each block course.js gives one already had its strip (kept by CSS
    from the first paint, by the `js` class theme-init.js sets), measured with course.js held back."""
    first = context_factory(viewport={"width": width, "height": 900})
    first.route("**/assets/course.*.js", lambda route: route.abort())
    before = open_page(first, sample_site, "sequence-axis.html").evaluate(PADDINGS)
    after = open_page(context_factory(viewport={"width": width, "height": 900}), sample_site, "sequence-axis.html")
    after = after.evaluate(PADDINGS)
    assert not any(button for _, _, button in before) and any(button for _, _, button in after)
    assert [top for top, _, _ in before] == [top for top, _, _ in after]
