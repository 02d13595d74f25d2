"""The 404 page of a course without `base_url`, at a nested address: styled, its scripts running, and its link to
the course map landing on the map, whether the site is served at the host's root or under a project's folder."""

from __future__ import annotations

import re
import shutil

import pytest
from helpers import run_cli, serving
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


@pytest.fixture(params=["", "repo/"])
def host(request, mini_course, tmp_path, capsys):
    """The mini course without base_url, built into the host's root or its repo/ folder; return (host, folder)."""
    config = mini_course / "course.yaml"
    config.write_text(re.sub(r"(?m)^base_url:.*\n", "", config.read_text()))
    folder = request.param
    status, _, err = run_cli(capsys, "--root", mini_course, "build", "--out", tmp_path / "host" / folder)
    assert status == 0, err
    if folder:  # a project's site: the host answers a missing address with its 404.html, as GitHub Pages does
        shutil.copy(tmp_path / "host" / folder / "404.html", tmp_path / "host" / "404.html")
    return tmp_path / "host", folder


def test_a_missing_nested_address_shows_a_styled_404_whose_map_link_works(host, page_and_watch):
    page, watch = page_and_watch
    root, folder = host
    with serving(root) as base:  # it answers every missing address with the 404.html at its root
        response = page.goto(f"{base}{folder}a/b/c/missing")
        assert response.status == 404
        expect(page.locator("h1")).to_have_text("Page not found")
        expect(page.locator(".site-header")).to_have_css("display", "flex")  # the stylesheet arrived
        expect(page.locator("[data-theme-toggle]")).to_be_visible()  # and the modules, through the import map
        page.get_by_role("link", name="Go to the course map").click()
        expect(page).to_have_url(f"{base}{folder}index.html")
        expect(page.locator(".site-header")).to_have_css("display", "flex")
    # The console reports the 404 status of the missing page, and of the folders tried for the site's own.
    watch.errors = [e for e in watch.errors if "404" not in e]
    watch.assert_clean()
