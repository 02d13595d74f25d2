"""The message catalogue (#29): every shipped language complete, every key used, a course's language and overrides."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from coursegen.theme import messages
from coursegen.yamlio import load_yaml
from tests.helpers import run_cli

THEME = Path(__file__).resolve().parents[1] / "templates"
CATALOGUES = sorted((THEME / "messages").glob("*.yaml"))
ENGLISH = load_yaml((THEME / "messages" / "en.yaml").read_text(encoding="utf-8"))
# Where UI text comes from: the templates and partials, the theme's scripts, coursegen's own Python.
USERS = [
    *THEME.glob("*.html"),
    *(THEME / "partials").glob("*"),
    *(THEME / "assets").glob("*.js"),
    *(THEME / "assets" / "review").glob("*.js"),
    *(Path(messages.__file__).parents[1]).rglob("*.py"),
]
CALL = re.compile(r"""\bt\(\s*["']([^"']+)["']""")  # t("key" …) in a template, a script or Python
QUOTED = re.compile(r"""["']([a-z0-9_]+(?:\.[a-z0-9_]+)+)["']""")  # any quoted dotted name, e.g. in a conditional


def used_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in USERS)


def test_the_theme_ships_english_and_at_least_two_more_languages():
    assert {"en", "fr", "de"} <= {path.stem for path in CATALOGUES}


@pytest.mark.parametrize("path", CATALOGUES, ids=[p.stem for p in CATALOGUES])
def test_every_catalogue_has_the_english_keys_with_their_placeholders(path):
    catalogue = load_yaml(path.read_text(encoding="utf-8"))
    assert sorted(catalogue) == sorted(ENGLISH)
    for key, text in catalogue.items():
        assert isinstance(text, str) and text.strip(), key
        assert messages.placeholders(text) == messages.placeholders(ENGLISH[key]), key


def test_every_key_used_exists_and_every_english_key_is_used():
    text = used_text()
    called = set(CALL.findall(text))
    assert called, "no t(...) call found: the scan is broken"
    assert called - set(ENGLISH) == set()
    quoted = set(QUOTED.findall(text))
    assert [key for key in ENGLISH if key not in quoted] == []


@pytest.mark.parametrize(
    ("language", "chosen"), [("fr", "fr"), ("fr-CA", "fr"), ("de-AT", "de"), ("en-GB", "en"), ("xx", None)]
)
def test_a_regional_language_falls_back_to_its_primary_catalogue(language, chosen):
    assert messages.chosen_language(THEME.parent, language) == chosen


QUESTION_PAGE = """---
title: Vérifiez
---

## Rappel

:::: recall {lessons: [1]}
Que montre le tableau ?

::: answer
Des nombres.
:::
::::
"""


def set_config(course: Path, extra: str) -> None:
    config = course / "course.yaml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("title: Mini course\n", f"title: Mini course\n{extra}")
    )


def test_a_french_course_gets_french_ui_text_and_its_own_overrides(mini_course, capsys):
    set_config(mini_course, 'language: fr-CA\nmessages:\n  tally.title: "Mon bilan à moi"\n')
    (mini_course / "reviews" / "03-check.md").write_text(QUESTION_PAGE, encoding="utf-8")
    status, _out, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 0, err
    review = (mini_course / "site" / "check.html").read_text(encoding="utf-8")
    missing = (mini_course / "site" / "404.html").read_text(encoding="utf-8")
    assert 'lang="fr-CA"' in review
    assert "Mon bilan à moi" in review and "Your tally" not in review
    assert "Réinitialiser cette page" in review and "Reset this page" not in review
    assert "Page introuvable" in missing and "Page not found" not in missing


def test_a_course_catalogue_replaces_the_themes_file_key_by_key(mini_course, capsys):
    set_config(mini_course, "language: de\n")
    own = mini_course / "templates" / "messages" / "de.yaml"
    own.parent.mkdir(parents=True, exist_ok=True)
    own.write_text('notfound.title: "Hier ist nichts"\n', encoding="utf-8")
    status, _out, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 0, err
    missing = (mini_course / "site" / "404.html").read_text(encoding="utf-8")
    assert "Hier ist nichts" in missing
    assert "Zur Kursübersicht" not in missing  # the course's file replaces the theme's whole file …
    assert "Go to the course map" in missing  # … and what it lacks stays English


def test_a_language_without_a_catalogue_warns_at_its_line_and_keeps_english(mini_course, capsys):
    set_config(mini_course, "language: pt-BR\n")
    status, _out, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 0
    assert "course.yaml:2: warning: no message catalogue for language 'pt-BR'" in err
    assert "catalogues shipped: de, en, fr" in err
    assert "Page not found" in (mini_course / "site" / "404.html").read_text(encoding="utf-8")


def test_the_same_sources_in_french_build_byte_identical_pages(mini_course, tmp_path, capsys):
    set_config(mini_course, "language: fr\n")
    builds = []
    for out in ("one", "two"):
        assert run_cli(capsys, "--root", mini_course, "build", "--out", tmp_path / out)[0] == 0
        builds.append(
            {p.relative_to(tmp_path / out): p.read_bytes() for p in (tmp_path / out).rglob("*") if p.is_file()}
        )
    assert builds[0] == builds[1]


def test_the_authoring_guide_lists_every_group_of_keys_and_no_other():
    guide = (THEME.parent / "docs" / "authoring.md").read_text(encoding="utf-8")
    section = guide.split("## The theme's texts in the course's language", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`([a-z_]+)\.\*`", section))
    assert listed == {key.split(".", 1)[0] for key in ENGLISH}


def test_what_parsing_writes_follows_the_catalogue_and_a_kept_build_cache_sees_the_course_s_file_change(mini_course):
    from coursegen.pipeline import BuildOptions, build_site
    from coursegen.session import Session

    set_config(mini_course, 'language: fr\nmessages:\n  question.model_answer: "Corrigé {{type}}"\n')
    lesson = mini_course / "lessons" / "01-first.md"
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\n::: note\nÀ retenir.\n:::\n", encoding="utf-8")
    (mini_course / "reviews" / "03-check.md").write_text(QUESTION_PAGE, encoding="utf-8")
    cache, one = Session(), BuildOptions(jobs=1)
    site = build_site(mini_course, one, cache).outputs
    first, review = site["first.html"].decode(), site["check.html"].decode()
    assert '<p class="callout-title">Remarque</p>' in first
    assert '<p class="question-kind">Rappel libre · leçon 1</p>' in review
    assert "<summary>Corrigé {type}</summary>" in review  # course.yaml's override, its braces written once
    assert "Leçon 1 · " in first and "Lesson 1" not in first
    own = mini_course / "templates" / "messages" / "fr.yaml"
    own.parent.mkdir(parents=True, exist_ok=True)  # the course's copy of the theme, or a folder of its own
    own.write_text('callout.note: "Bon à savoir"\n', encoding="utf-8")  # not course.yaml: only the catalogue moved
    again = build_site(mini_course, one, cache).outputs["first.html"].decode()
    assert '<p class="callout-title">Bon à savoir</p>' in again


def test_no_sentence_is_glued_from_catalogue_fragments():
    """A placeholder takes a value (a number, a name, a list), never another catalogue text: "acceder a
    {subject}" with "el intérprete" reads wrongly, so each (cause, what failed) pair has its own sentence."""
    for key in ENGLISH:
        assert "subject" not in messages.placeholders(ENGLISH[key]), key
    pairs = [key for key in ENGLISH if key.startswith(("live.missing.", "live.too_long."))]
    assert sorted(pairs) == sorted(
        f"live.{cause}.{what}" for cause in ("missing", "too_long") for what in ("runtime", "package", "course")
    )


def test_a_course_words_each_failure_sentence_whole_in_its_language(mini_course, capsys):
    set_config(mini_course, 'messages:\n  live.missing.runtime: "falta el intérprete de Python en este sitio"\n')
    status, _out, err = run_cli(capsys, "--root", mini_course, "build")
    assert status == 0, err
    module = next((mini_course / "site" / "assets").glob("messages.*.js")).read_text(encoding="utf-8")
    assert "falta el intérprete de Python en este sitio" in module
