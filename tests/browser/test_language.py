"""A `language: fr` course in headless Chromium (#29): after a learner searches, answers, reveals,
scores, runs a widget live, checks an exercise wrong then right and opens its hints, the theme's texts
on the page are French, none of them English. A German build of the same course is looked at once.

The course is the live fixture's pure-Python widget (the npm Pyodide runtime runs it whole, as in
test_live_python.py), with its own text in French, so that any English left on a page is the theme's.
"""

from __future__ import annotations

import re
import shutil

import pytest
from helpers import FIXTURES, WAIT_GUARD_MS, copy_course, serving
from playwright.sync_api import expect

from coursegen.cli import main as cli_main
from coursegen.yamlio import load_yaml

pytestmark = pytest.mark.browser
THEME = FIXTURES.parents[1] / "templates"
CATALOGUE = {
    language: load_yaml((THEME / "messages" / f"{language}.yaml").read_text(encoding="utf-8"))
    for language in ("en", "fr", "de")
}
ENGLISH, FRENCH = CATALOGUE["en"], CATALOGUE["fr"]
COURSE = """title: Pain maison
language: {language}
pyodide:
  source: local
python:
  package: carres
units:
  - slug: levure
    part: Pâte
  - slug: bilan
"""
LESSON = """---
title: Levure
---

## Température

La levure meurt vers cinquante degrés.

::: note
Une pâte froide lève lentement.
:::

::: caveat Four trop chaud
Au-delà de deux cent cinquante degrés, la croûte brûle.
:::

```widget carre x=3
```
"""
REVIEW = """---
title: Bilan
---

## Rappel

:::: recall {lessons: [1], revisit: levure#température}
Vers quelle température la levure meurt-elle ?

::: answer
Vers cinquante degrés.
:::
::::

:::: exercise {id: doubler, lessons: [1]}
Écrivez `doubler(x)`, qui renvoie le double de `x`.

```python starter
def doubler(x):
    return x
```

::: hint
Multipliez par deux.
:::

::: hint
Renvoyez `2 * x`.
:::

```python solution
def doubler(x):
    return 2 * x
```

```yaml checks
function: doubler
cases:
  - {name: deux, args: [2]}
  - {name: trois, args: [3]}
```
::::
"""
SPEC = """title: "Carré d’un nombre"
summary: "Un nombre entier et son carré."
precompute: grid
params:
  x:
    type: float
    min: 0
    max: 9
    step: 1
    default: 3
    label: "Nombre x"
outputs:
  carre: "x fois x"
  text: "la phrase"
packages: []
"""
PACKAGE = '''"""Le paquet du cours : du Python pur."""


def carre(x):
    if x != int(x):
        raise ValueError(f"{x} n’est pas un nombre entier")
    return {"carre": int(x) * int(x), "text": f"{int(x)} au carré fait {int(x) * int(x)}"}
'''
WIDGET = """from carres import carre


def run(x):
    return carre(x)
"""
COMMON_ENGLISH = (
    r"the|and|your|you|this|with|answer|score|next|review|search|results?|lesson|model|topic|section(?=:)"
    r"|recall|hint|check|passed|failed|loading|run|show|stopped|unit|units"
)
# Words English shares with no French UI text; German writes "Live-Python" as English does.
ENGLISH_WORDS = {
    "fr": re.compile(rf"\b({COMMON_ENGLISH}|live)\b", re.I),
    "de": re.compile(rf"\b({COMMON_ENGLISH})\b", re.I),
}


def make_course(root, language: str):
    """Write the French course, built in `language`'s catalogue, and return its folder."""
    root = copy_course(FIXTURES / "live", root)
    for old in [*root.glob("lessons/*.md"), *root.glob("reviews/*.md")]:
        old.unlink()
    shutil.rmtree(root / "widgets")
    widget = root / "widgets" / "carre"
    shutil.copytree(FIXTURES / "live" / "widgets" / "square", widget)
    (widget / "spec.yaml").write_text(SPEC, encoding="utf-8")
    (widget / "widget.py").write_text(WIDGET, encoding="utf-8")
    (root / "carres").mkdir()
    (root / "carres" / "__init__.py").write_text(PACKAGE, encoding="utf-8")
    (root / "course.yaml").write_text(COURSE.format(language=language), encoding="utf-8")
    (root / "lessons" / "01-levure.md").write_text(LESSON, encoding="utf-8")
    (root / "reviews" / "02-bilan.md").write_text(REVIEW, encoding="utf-8")
    assert cli_main(["--root", str(root), "build", "--strict"]) == 0
    return root / "site"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with serving(make_course(tmp_path_factory.mktemp("fr") / "course", "fr")) as base:
        yield base


@pytest.fixture
def page_of(context_factory, page_and_watch):
    """Open a page with service workers blocked (live Python fetches the runtime itself): (page, watch)."""
    watch_class = type(page_and_watch[1])

    def open_(url):
        page = context_factory(service_workers="block").new_page()
        watch = watch_class(page)
        page.goto(url)
        return page, watch

    return open_


def shown_texts(page) -> list[str]:
    """Return the page's visible text, line by line, and every aria-label, title and placeholder."""
    attributes = page.evaluate(
        """() => [...document.querySelectorAll("[aria-label], [title], [placeholder]")]
             .flatMap((el) => ["aria-label", "title", "placeholder"].map((a) => el.getAttribute(a)))
             .filter(Boolean)"""
    )
    return [line for line in page.locator("body").inner_text().splitlines() if line.strip()] + attributes


def english_fragments() -> re.Pattern:
    """Return a pattern of every English catalogue text's words between its placeholders, as whole words
    ("Expected {expected}, got {actual}" gives "Expected" and ", got"); pieces of three characters or
    fewer are left out. Made from en.yaml alone, so a text put back in English in fr.yaml is found too."""
    pieces = {p.strip() for text in ENGLISH.values() for p in re.split(r"\{\w+\}", text) if len(p.strip()) > 3}
    return re.compile("|".join(_whole_words(p) for p in sorted(pieces, key=len, reverse=True)))


def _whole_words(piece: str) -> str:
    """Return a pattern of `piece` that does not match inside a longer word ("Error:" not in "ValueError:")."""
    start, end = (r"\b" if re.match(r"\w", piece[at]) else "" for at in (0, -1))
    return start + re.escape(piece) + end


ENGLISH_TEXT = english_fragments()


def english_left(texts: list[str], language: str = "fr") -> list[str]:
    """Return the texts that hold a piece of an English catalogue text or a common English word."""
    return [t for t in texts if ENGLISH_TEXT.search(t) or ENGLISH_WORDS[language].search(t)]


def test_a_french_lesson_s_callouts_and_live_widget_show_no_english(site, page_of):
    page, watch = page_of(site + "levure.html")
    figure = page.locator("#widget-carre")
    expect(figure).to_have_attribute("data-widget-ready", "true")
    assert page.locator("html").get_attribute("lang") == "fr"
    titles = page.locator(".callout-title").all_inner_texts()
    assert titles == ["Remarque", "Four trop chaud"]  # the default title from the catalogue; the author's as written
    before = shown_texts(page)
    status = figure.locator("[data-live-status]")
    box = figure.locator("input[type=number][name=x]")
    box.fill("2.5")  # off the baked grid: live Python answers, and the course's package raises
    box.press("Enter")
    expect(status).to_have_text(re.compile(r"^Chargement de l’environnement Python \(étape 1 sur 2\)…$"))
    expect(status).to_have_text(
        "Python en direct est indisponible : Python a levé ValueError: 2.5 n’est pas un nombre entier ; "
        "les résultats affichés restent ceux calculés à la construction de la page.",
        timeout=WAIT_GUARD_MS,
    )
    figure.locator("[data-live-detail] summary").click()
    expect(figure.locator("[data-live-detail] summary")).to_have_text("Raison technique")
    reason = figure.locator("[data-live-reason]").inner_text()  # the protocol's stage name and Python's error
    assert reason == "run: ValueError: 2.5 n’est pas un nombre entier"
    failed = [t for t in shown_texts(page) if t != reason]
    figure.locator("[data-live-retry]").click()
    expect(status).to_have_text(FRENCH["live.ready"], timeout=WAIT_GUARD_MS)
    expect(figure.locator("[data-out=text]")).to_have_text("3 au carré fait 9")
    expect(figure.locator("[data-widget-source]")).to_have_text(FRENCH["live.showing_live"])
    figure.locator(".widget-code summary").click()
    live = [t for t in shown_texts(page) if "def run" not in t and "import" not in t]  # the widget's own code
    assert "Exécuter en direct dans Python" in live
    left = english_left(before + failed + live)
    assert left == [], "\n".join(left)
    watch.assert_clean()


def test_a_french_review_shows_no_english_ui_text_after_use(site, page_of):
    page, watch = page_of(site + "bilan.html")
    page.wait_for_selector("html[data-review=ready]")
    page.locator("[data-search-open]").click()
    page.locator("#search-input").fill("levure")
    page.wait_for_selector("[data-search-results] li")
    expect(page.locator("[data-search-results]")).to_contain_text("Leçon 1")  # a unit's label in the index
    searched = shown_texts(page)
    page.locator("#search-input").fill("zzzz")
    expect(page.locator("[data-search-status]")).to_contain_text("zzzz")
    searched += shown_texts(page)
    page.keyboard.press("Escape")
    recall = page.locator("section[data-kind=recall]")
    assert recall.locator(".question-kind").text_content() == "Rappel libre · leçon 1"
    recall.locator("textarea").fill("cinquante")
    recall.locator(".question-reveal").click()
    recall.locator("[data-score=partly]").click()
    expect(recall.locator(".question-next")).not_to_be_empty()
    exercise = page.locator("#q-doubler")
    exercise.locator(".exercise-code").fill("def doubler(x):\n    return x + 1\n")
    exercise.locator(".exercise-check").click()
    status = exercise.locator(".exercise-status")
    expect(status).to_have_text(
        "0 vérifications réussies sur 2 ; note : non. La solution de référence est déverrouillée.",
        timeout=WAIT_GUARD_MS,
    )
    failure = exercise.locator(".exercise-fail").first
    expect(failure).to_contain_text("Échoué : deux")
    expect(failure).to_contain_text("Entrée : [2]")
    expect(failure).to_contain_text("Attendu 4, obtenu 3")
    hints = exercise.locator("details[data-hint]")
    expect(hints.first.locator("summary")).to_have_text("Indice 1 sur 2")
    hints.first.locator("summary").click()
    expect(hints.nth(1)).to_be_visible()
    hints.nth(1).locator("summary").click()
    failed = shown_texts(page)
    code = exercise.locator(".exercise-code")
    if code.is_visible():  # the editor had not taken the text box's place yet
        code.fill("def doubler(x):\n    return 2 * x\n")
    else:
        exercise.locator(".exercise-code-editor .cm-content").focus()
        page.keyboard.press("Control+a")
        page.keyboard.insert_text("def doubler(x):\n    return 2 * x\n")
    exercise.locator(".exercise-check").click()
    expect(status).to_have_text(re.compile(r"^2 vérifications réussies sur 2 ; note : oui\."), timeout=WAIT_GUARD_MS)
    expect(exercise.locator(".exercise-pass")).to_have_count(2)
    used = shown_texts(page)
    assert "Aucun résultat pour « zzzz »." in searched
    assert any(t.startswith("2 sur 2 traitées") for t in used), used
    assert "Réussi : deux" in used
    left = english_left(searched + failed + used)
    assert left == [], "\n".join(left)
    watch.assert_clean()


def test_a_german_build_of_the_same_course_shows_german_labels(tmp_path, page_of):
    with serving(make_course(tmp_path / "course", "de")) as base:
        page, watch = page_of(base + "bilan.html")
        page.wait_for_selector("html[data-review=ready]")
        assert page.locator("section[data-kind=recall] .question-kind").text_content() == "Freies Erinnern · Lektion 1"
        expect(page.locator("#q-doubler .exercise-check")).to_have_text("Prüfen")
        left = english_left(shown_texts(page), "de")
        page.goto(base + "levure.html")
        expect(page.locator("#widget-carre")).to_have_attribute("data-widget-ready", "true")
        assert page.locator(".callout-title").first.inner_text() == "Hinweis"
        left += english_left(shown_texts(page), "de")
        assert left == [], "\n".join(left)
        watch.assert_clean()
