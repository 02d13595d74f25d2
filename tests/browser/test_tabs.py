"""MyST's tabs and admonitions in Chromium: the WAI-ARIA tabs pattern with arrow keys, every tab readable
without JavaScript and on paper; screenshots for a person to look at when COURSEGEN_SHOTS names a folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import FIXTURES, copy_course, serving
from pages import open_page
from playwright.sync_api import expect

from coursegen.cli import main as cli_main

pytestmark = pytest.mark.browser
SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
LESSON = """
```{note}
The tabs below show one computation three ways; pick yours.
```

:::{tip} Keyboard
Focus a tab, then use the arrow keys, Home and End.
:::

`````{tab-set}
````{tab-item} Python
```python
x = sum(range(10))
```
````
````{tab-item} R
```r
x <- sum(0:9)
```
````
````{tab-item} By hand
Add the numbers from 0 to 9: **45**.
````
`````

After the tabs.
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The mini course with admonitions and a set of three tabs in lesson 2."""
    root = copy_course(FIXTURES / "mini", tmp_path_factory.mktemp("tabs") / "course")
    lesson = root / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", LESSON))
    assert cli_main(["--root", str(root), "build"]) == 0
    with serving(root / "site") as base:
        yield base


def test_tabs_follow_the_wai_aria_pattern_and_the_arrow_keys(site, context_factory):
    page = open_page(context_factory(), site, "second.html")
    tabs = page.get_by_role("tab")
    expect(tabs).to_have_count(3)
    expect(page.get_by_role("tablist")).to_have_count(1)
    expect(tabs.nth(0)).to_have_attribute("aria-selected", "true")
    expect(page.get_by_role("tabpanel")).to_have_count(1)  # the hidden panels are out of the tree
    expect(page.get_by_role("tabpanel")).to_contain_text("sum(range(10))")
    assert [tabs.nth(i).get_attribute("tabindex") for i in range(3)] == ["0", "-1", "-1"]
    tabs.nth(0).focus()
    page.keyboard.press("ArrowRight")
    expect(tabs.nth(1)).to_be_focused()
    expect(tabs.nth(1)).to_have_attribute("aria-selected", "true")
    expect(page.get_by_role("tabpanel")).to_contain_text("sum(0:9)")
    page.keyboard.press("End")
    expect(tabs.nth(2)).to_be_focused()
    page.keyboard.press("ArrowRight")  # wraps to the first
    expect(tabs.nth(0)).to_be_focused()
    page.keyboard.press("ArrowLeft")  # and back to the last
    expect(tabs.nth(2)).to_be_focused()
    expect(page.get_by_role("tabpanel")).to_contain_text("45")
    page.keyboard.press("Home")
    expect(tabs.nth(0)).to_have_attribute("aria-selected", "true")
    tabs.nth(2).click()
    expect(page.get_by_role("tabpanel")).to_contain_text("45")
    panel = page.get_by_role("tabpanel")
    assert panel.get_attribute("aria-labelledby") == tabs.nth(2).get_attribute("id")
    assert tabs.nth(2).get_attribute("aria-controls") == panel.get_attribute("id")
    expect(page.locator("[data-tab-label]").first).to_be_hidden()


def test_without_javascript_every_tab_shows_under_its_label(site, context_factory):
    page = open_page(context_factory(java_script_enabled=False), site, "second.html")
    expect(page.get_by_role("tab")).to_have_count(0)
    for label, text in (("Python", "sum(range(10))"), ("R", "sum(0:9)"), ("By hand", "45")):
        expect(page.locator("[data-tab-label]", has_text=label)).to_be_visible()
        expect(page.locator("[data-tab-panel]", has_text=text)).to_be_visible()


def test_printing_shows_every_tab(site, context_factory):
    page = open_page(context_factory(), site, "second.html")
    expect(page.get_by_role("tab")).to_have_count(3)
    page.emulate_media(media="print")
    for text in ("sum(range(10))", "sum(0:9)", "45"):
        expect(page.locator("[data-tab-panel]", has_text=text)).to_be_visible()
    expect(page.locator("[data-tab-label]", has_text="By hand")).to_be_visible()
    expect(page.get_by_role("tablist")).to_be_hidden()


@pytest.mark.skipif(
    not os.environ.get("COURSEGEN_SHOTS"), reason="screenshots only when COURSEGEN_SHOTS names a folder"
)
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", sorted(SIZES))
def test_screenshots_of_admonitions_and_tabs(site, context_factory, size, scheme):
    folder = Path(os.environ["COURSEGEN_SHOTS"])
    folder.mkdir(parents=True, exist_ok=True)
    context = context_factory(viewport=SIZES[size], color_scheme=scheme)
    page = open_page(context, site, "second.html")
    expect(page.get_by_role("tab")).to_have_count(3)
    page.locator(".callout").first.scroll_into_view_if_needed()
    page.screenshot(path=str(folder / f"myst-{size}-{scheme}.png"), full_page=True)
