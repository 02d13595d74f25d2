"""course.yaml's theme settings: accent in both colour schemes, the course's own CSS and JS, logo, favicon."""

from __future__ import annotations

import html
import re
import shutil

import pytest
from helpers import FIXTURES, run_cli

from coursegen.pipeline import build_site


@pytest.fixture
def course(tmp_path):
    shutil.copytree(FIXTURES / "mini", tmp_path / "mini")
    return tmp_path / "mini"


def with_theme(course, settings: str):
    config = course / "course.yaml"
    config.write_text(config.read_text() + "theme:\n" + settings)


def linked(page: str, tag: str, attribute: str) -> list[str]:
    return re.findall(rf'<{tag} [^>]*{attribute}="([^"]+)"', page)


def test_without_settings_nothing_is_added(course):
    page = build_site(course).outputs["first.html"].decode()
    assert not [href for href in linked(page, "link", "href") if "theme." in href or "course/" in href]


def test_the_accent_is_set_for_the_light_and_the_dark_scheme(course):
    with_theme(course, '  accent: "#0a7d5a"\n  accent_dark: "#7fe0bd"\n')
    outputs = build_site(course).outputs
    page = outputs["first.html"].decode()
    sheet = next(href for href in linked(page, "link", "href") if href.startswith("assets/theme."))
    css = outputs[sheet].decode()
    assert ":root { --accent: #0a7d5a; }" in css
    assert ":root[data-theme=dark] { --accent: #7fe0bd; }" in css
    assert "@media (prefers-color-scheme: dark) {\n  :root:not([data-theme=light]) { --accent: #7fe0bd; }" in css
    style = linked(page, "link", "href").index(next(h for h in linked(page, "link", "href") if "/style." in h))
    assert linked(page, "link", "href").index(sheet) > style  # after the theme's stylesheet: it wins


def test_one_accent_gives_a_lighter_dark_accent(course):
    with_theme(course, '  accent: "#0a7d5a"\n')
    outputs = build_site(course).outputs
    css = next(data for path, data in outputs.items() if path.startswith("assets/theme.")).decode()
    assert ":root[data-theme=dark] { --accent: color-mix(in srgb, #0a7d5a 55%, white); }" in css


def test_extra_css_and_js_logo_and_favicon_come_from_the_course(course):
    (course / "style").mkdir()
    (course / "style" / "extra.css").write_text(".callout { border-width: 3px; }\n")
    (course / "style" / "extra.js").write_text("document.documentElement.dataset.extra = 'yes';\n")
    (course / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\nlogo")
    (course / "icon.png").write_bytes(b"\x89PNG\r\n\x1a\nicon")
    with_theme(
        course, "  extra_css: [style/extra.css]\n  extra_js: [style/extra.js]\n  logo: logo.png\n  favicon: icon.png\n"
    )
    outputs = build_site(course).outputs
    page = outputs["first.html"].decode()
    css = next(h for h in linked(page, "link", "href") if h.startswith("assets/course/style/extra."))
    js = next(s for s in linked(page, "script", "src") if s.startswith("assets/course/style/extra."))
    assert outputs[css] == b".callout { border-width: 3px; }\n" and b"dataset.extra" in outputs[js]
    logo = re.search(r'<img class="site-logo" src="([^"]+)" alt="" width="32" height="32">', page).group(1)
    assert outputs[logo].endswith(b"logo")
    icon = re.search(r'<link rel="icon" href="([^"]+)" type="image/png">', page).group(1)
    assert outputs[icon].endswith(b"icon")


@pytest.mark.parametrize(
    "settings, message",
    [
        ('  accent: "blue; } body { display: none"\n', "course.yaml:{line}: theme accent must be a colour such as"),
        (
            "  extra_css: [missing.css]\n",
            "course.yaml:{line}: theme extra_css names 'missing.css', which is not a file",
        ),
        ("  logo: ../outside.png\n", "course.yaml:{line}: theme logo names '../outside.png', which is not a file"),
        ("  accnet: '#fff'\n", "course.yaml:{line}: unknown key 'accnet' in theme"),
        ('  accent_dark: "red}"\n', "course.yaml:{line}: theme accent_dark must be a colour"),
    ],
)
def test_bad_theme_settings_are_errors_at_their_line(course, capsys, settings, message):
    (course.parent / "outside.png").write_bytes(b"x")
    with_theme(course, settings)
    line = len((course / "course.yaml").read_text().splitlines())
    status, _, err = run_cli(capsys, "--root", course, "build")
    assert status == 1 and err.startswith(message.format(line=line)), err


def test_the_policy_still_allows_only_the_site_for_styles_and_scripts(course):
    with_theme(course, '  accent: "#0a7d5a"\n')
    page = build_site(course).outputs["first.html"].decode()
    policy = html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1))
    assert "style-src 'self';" in policy and "unsafe-inline" not in policy
