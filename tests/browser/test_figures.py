"""Numbered figures and tables in Chromium: named by their captions, sized to a phone, reached from {numref}."""

from __future__ import annotations

import pytest
from helpers import FIXTURES, copy_course, serving
from pages import open_page

from coursegen.cli import main as cli_main

pytestmark = pytest.mark.browser
WIDE = '<svg xmlns="http://www.w3.org/2000/svg" width="900" height="300"><rect width="900" height="300"/></svg>\n'
LESSON = """See {numref}`fig-wide` and {numref}`tab-small`.

```{figure} ../media/wide.svg
:name: fig-wide
:alt: A wide black box.
:width: 80%

A figure wider than a phone.
```

```{table} A small table
:name: tab-small

| a | b |
|---|---|
| 1 | 2 |
```
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = copy_course(FIXTURES / "mini", tmp_path_factory.mktemp("figures") / "course")
    (root / "media").mkdir(exist_ok=True)
    (root / "media" / "wide.svg").write_text(WIDE)
    lesson = root / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", LESSON))
    assert cli_main(["--root", str(root), "build"]) == 0
    with serving(root / "site") as base:
        yield base


@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
def test_a_figure_is_named_by_its_caption_fits_the_screen_and_numref_reaches_it(width, site, context_factory):
    context = context_factory(viewport={"width": width, "height": 800}, java_script_enabled=False)
    page = open_page(context, site, "second.html")
    figure = page.get_by_role("figure", name="Figure 2.1 A figure wider than a phone.")
    assert figure.count() == 1
    box, image = figure.bounding_box(), figure.locator("img").bounding_box()
    assert image["width"] <= box["width"] * 0.8 + 1  # :width: 80%
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    assert page.get_by_role("table", name="Table 2.1 A small table").count() == 1
    page.get_by_role("link", name="Figure 2.1").click()
    page.wait_for_function("() => location.hash === '#fig-wide'")
    assert figure.evaluate("e => e.getBoundingClientRect().top < window.innerHeight")
