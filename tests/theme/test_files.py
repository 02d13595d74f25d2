"""The packaged theme and a course's file-by-file overrides of it (templates, partials, assets)."""

from __future__ import annotations

import shutil

import pytest
from helpers import FIXTURES, REPO, run_cli

from coursegen.errors import ContentError
from coursegen.pipeline import build_site
from coursegen.session import Session
from coursegen.theme import files as theme


@pytest.fixture
def bare_course(tmp_path):
    """The mini course with no templates/ of its own: everything comes from the packaged theme."""
    shutil.copytree(FIXTURES / "mini", tmp_path / "bare")
    return tmp_path / "bare"


def asset_bytes(outputs, name: str) -> bytes:
    stem, ext = name.rsplit(".", 1)
    return next(
        data
        for path, data in outputs.items()
        if path.startswith(f"assets/{stem}.") and path.endswith("." + ext) and path.count(".") == 2
    )


def test_in_a_source_checkout_the_theme_is_the_repository_templates_folder():
    assert theme.packaged_theme().resolve() == (REPO / "templates").resolve()


def test_a_course_without_templates_builds_and_checks(bare_course, capsys):
    assert not (bare_course / "templates").exists()
    status, _, err = run_cli(capsys, "--root", bare_course, "check", "--strict")
    assert status == 0, err
    status, _out, err = run_cli(capsys, "--root", bare_course, "build")
    assert status == 0, err
    site = bare_course / "site"
    assert (site / "sw.js").is_file() and (site / "first.html").is_file()
    assert '<footer class="site-footer">' in (site / "first.html").read_text()


def test_one_partial_and_one_asset_override_the_theme_and_the_rest_comes_from_it(bare_course):
    plain = build_site(bare_course).outputs
    (bare_course / "templates" / "partials").mkdir(parents=True)
    (bare_course / "templates" / "partials" / "footer.html").write_text(
        '<footer class="site-footer"><p>Our own footer for {{ config.title }}</p></footer>\n'
    )
    (bare_course / "templates" / "assets").mkdir()
    own_css = (theme.packaged_theme() / "assets" / "style.css").read_bytes() + b"\n.own-rule { color: teal; }\n"
    (bare_course / "templates" / "assets" / "style.css").write_bytes(own_css)
    outputs = build_site(bare_course).outputs
    page = outputs["first.html"].decode()
    assert "Our own footer for Mini course" in page
    assert asset_bytes(outputs, "style.css") == own_css
    assert asset_bytes(outputs, "review.css") == asset_bytes(plain, "review.css")  # not overridden: the theme's
    assert outputs["first.html"] != plain["first.html"]
    assert "data-search-open" in page  # the header still comes from the theme


def test_serve_picks_up_a_templates_folder_added_between_builds(bare_course):
    cache = Session()
    before = build_site(bare_course, session=cache).outputs
    (bare_course / "templates" / "partials").mkdir(parents=True)
    (bare_course / "templates" / "partials" / "header.html").write_text("<header>Own header</header>\n")
    after = build_site(bare_course, session=cache).outputs
    assert "Own header" not in before["first.html"].decode()
    assert "Own header" in after["first.html"].decode() and "Own header" in after["index.html"].decode()


def test_a_front_matter_template_that_exists_nowhere_is_a_problem_at_its_line(bare_course):
    lesson = bare_course / "lessons" / "01-first.md"
    text = lesson.read_text()
    lesson.write_text(text.replace("---\n", "---\ntemplate: wide.html\n", 1))
    with pytest.raises(ContentError) as caught:
        build_site(bare_course)
    assert [p.format().splitlines()[0] for p in caught.value.problems] == [
        "lessons/01-first.md:2: template 'wide.html' is in neither templates/ nor the theme"
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("{% block nope %}\n{% endblok %}\n", "templates/partials/footer.html:2: template error:"),
        (
            "<p>\n{{ asset('missing.css') }}</p>\n",
            "templates/partials/footer.html:2: template error: asset('missing.css'): no such file",
        ),
        ("<p>\n\n{{ 1 // 0 }}</p>\n", "templates/partials/footer.html:3: template error: ZeroDivisionError"),
    ],
)
def test_an_override_that_breaks_is_a_located_problem(bare_course, capsys, text, expected):
    (bare_course / "templates" / "partials").mkdir(parents=True)
    (bare_course / "templates" / "partials" / "footer.html").write_text(text)
    status, _out, err = run_cli(capsys, "--root", bare_course, "build")
    assert status == 1 and err.startswith(expected), err
    assert "Traceback" not in err and not (bare_course / "site").exists()


def test_compiled_templates_kept_on_disk_never_stand_in_for_an_override(bare_course, capsys):
    assert run_cli(capsys, "--root", bare_course, "build")[0] == 0  # compiles the theme into .coursegen-cache/
    (bare_course / "templates" / "partials").mkdir(parents=True)
    (bare_course / "templates" / "partials" / "footer.html").write_text("<footer>Second run's own footer</footer>\n")
    assert run_cli(capsys, "--root", bare_course, "build")[0] == 0
    assert "Second run's own footer" in (bare_course / "site" / "first.html").read_text()
    (bare_course / "templates" / "partials" / "footer.html").unlink()
    assert run_cli(capsys, "--root", bare_course, "build")[0] == 0
    assert '<footer class="site-footer">' in (bare_course / "site" / "first.html").read_text()
