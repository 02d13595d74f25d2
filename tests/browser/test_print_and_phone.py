"""The sample course on paper and on a phone: printed lessons and reviews, sideways scrolling with a cue,
a header menu, charts with axes and colour-free legends, a review's progress and its import button."""

from __future__ import annotations

import re

import pytest
from pages import open_page
from playwright.sync_api import expect
from printed_pdf import PAPERS, PrintedText, flat, ink_depths, mostly_blank, print_pdf

pytestmark = pytest.mark.browser
PHONE = {"viewport": {"width": 390, "height": 844}}
DESKTOP = {"viewport": {"width": 1280, "height": 900}}
LESSON = "sequence-axis.html"  # Lesson 3: the overflow slider, the KDA timeline, text diagrams, code listings
MEMORY = "k3-at-a-glance.html"  # Lesson 1: the memory widget
REVIEW = "review-a.html"
SLIDER = "#widget-overflow-slider"


@pytest.fixture(scope="module")
def site(sample_site):
    """The sample course's site, built once for the session and served (conftest.sample_site)."""
    return sample_site


def printed(context_factory, base: str, name: str, **options):
    """Open a page as Chromium prints it (print media emulated); return the page."""
    page = open_page(context_factory(service_workers="block", **options), base, name)
    page.wait_for_selector("html[data-review=ready]")
    page.emulate_media(media="print")
    return page


def style(locator, prop: str, pseudo: str | None = None) -> str:
    """Return the computed value of a CSS property of the first element matched."""
    return locator.first.evaluate("(e, [p, s]) => getComputedStyle(e, s).getPropertyValue(p)", [prop, pseudo])


# 1. Printing


def test_printed_widget_labels_print_with_their_values(site, context_factory):
    page = printed(context_factory, site, LESSON)
    control = page.locator(f"{SLIDER} .widget-control").first
    expect(control.locator("label")).to_be_visible()
    number = control.locator("input[type=number]")
    expect(number).to_be_visible()
    assert number.input_value() == "-5"
    expect(control.locator("input[type=range]")).to_be_hidden()
    # The same without JavaScript: the controls' form is hidden on screen, on paper it shows the baked values.
    bare = open_page(context_factory(java_script_enabled=False), site, LESSON)
    bare.emulate_media(media="print")
    expect(bare.locator(f"{SLIDER} .widget-control input[type=number]").first).to_be_visible()


def test_printed_code_listings_wrap_and_show_every_line(site, context_factory):
    page = printed(context_factory, site, LESSON)
    listing = page.locator(f"{SLIDER} .widget-code pre")
    expect(listing).to_be_visible()
    assert style(listing, "white-space") == "pre-wrap"
    sizes = listing.evaluate("e => [e.scrollWidth, e.clientWidth, e.scrollHeight, e.clientHeight]")
    assert sizes[0] <= sizes[1] + 1, f"cut at the right: {sizes}"
    assert sizes[2] <= sizes[3] + 1, f"cut at the bottom: {sizes}"


def test_printed_chart_bars_keep_the_colours_and_marks_their_legend_names(site, context_factory):
    page = printed(context_factory, site, LESSON)
    chart = page.locator(f"{SLIDER} .overflow-slider-plot")
    assert style(chart, "print-color-adjust") == "exact"
    finite = style(page.locator(f"{SLIDER} rect.is-finite"), "fill")
    assert finite not in ("rgb(0, 0, 0)", "none"), finite
    legend = page.locator(f"{SLIDER} .overflow-slider-legend").text_content()
    assert "red" not in legend  # the legend names marks, not colours


def test_printed_lesson_lets_big_blocks_break_and_keeps_small_ones_whole(site, context_factory):
    page = printed(context_factory, site, LESSON)
    assert style(page.locator("figure.widget"), "break-inside") == "auto"
    assert style(page.locator("details.widget-code"), "break-inside") == "auto"
    assert style(page.locator(".math.block"), "break-inside") == "avoid"
    assert style(page.locator("h2"), "break-after") == "avoid"


def test_printed_links_show_only_addresses_a_reader_can_use(site, context_factory):
    page = printed(context_factory, site, LESSON)
    relative = page.locator(".unit-body a[href$='.html']").first
    assert style(relative, "content", "::after") in ("none", "normal")
    external = page.locator(".unit-body a[href^='https://']")
    if external.count():
        assert external.first.get_attribute("href") in style(external, "content", "::after")


def test_printed_review_keeps_each_question_with_its_answer_revealed(site, context_factory):
    page = printed(context_factory, site, REVIEW)
    question = page.locator("section[data-question]").first
    assert style(question, "break-inside") == "avoid"
    answer_body = question.locator(".question-answer-body")
    expect(answer_body).to_be_visible()
    expect(page.locator("[data-review-progress]")).to_be_hidden()  # a screen aid


# 1b. The printed PDFs themselves (tests/browser/printed_pdf.py measures them with pypdfium2)

UNITS = ("k3-at-a-glance.html", "kda.html", LESSON, "depth-axis.html", REVIEW)
LEAST_INK = 0.25  # no page but the last more than three quarters blank: main's lowest is 0.28, the 0.05
FORCED = {  # two ways to leave page 1 nearly blank, for the checker's own test
    "a forced break": ".unit-header { break-after: page }",
    "a tall block kept whole": ".unit-header::after { content: ''; display: block; height: 26cm; "
    "border: 1px solid; break-inside: avoid }",
}


@pytest.mark.parametrize("paper", PAPERS)
def test_no_printed_page_but_the_last_is_mostly_blank(site, context_factory, paper):
    blank = {}
    for name in UNITS:
        pdf = print_pdf(printed(context_factory, site, name), paper)
        depths = ink_depths(pdf)
        assert 2 <= len(depths) <= 30, (name, len(depths))
        if mostly_blank(depths, LEAST_INK):
            blank[name] = (mostly_blank(depths, LEAST_INK), depths)
    assert not blank, f"blank, or inked above {LEAST_INK:.0%} only (page numbers, then every page's depth): {blank}"


@pytest.mark.parametrize("forced", FORCED)
def test_the_blank_page_check_reports_a_page_left_nearly_empty(site, context_factory, forced):
    page = printed(context_factory, site, LESSON, bypass_csp=True)  # the pages' policy refuses inline styles
    page.add_style_tag(content=f"@media print {{ {FORCED[forced]} }}")
    depths = ink_depths(print_pdf(page, "A4"))
    assert mostly_blank(depths, LEAST_INK)[:1] == [1], depths


def printed_questions(page) -> list[tuple[str, str, str]]:
    """Return each question's id, the start of its prompt's text and the end of its answer's text: the longest
    runs of plain text there (math, form fields and superscripts set apart, since paper writes them otherwise)."""
    return page.locator("section[data-question]").evaluate_all(
        """sections => sections.map(section => {
            const runs = e => { const copy = e.cloneNode(true);
              copy.querySelectorAll('math, .math, input, select, textarea, sup, summary').forEach(m => m.replaceWith('\\0'));
              return copy.textContent.split('\\0').map(s => s.trim()).filter(s => s.replace(/\\s/g, '').length >= 12); };
            const answers = section.querySelectorAll('[data-answer]');
            const prompt = runs(section.querySelector('.question-prompt'));
            const answer = answers.length ? runs(answers[answers.length - 1]) : [];
            return [section.id, prompt[0] || '', answer[answer.length - 1] || '']; })"""
    )


def pages_of_questions(page, pdf: bytes) -> dict[str, tuple[int, int]]:
    """Return, per question in page order, the printed page where its prompt starts and where its answer ends."""
    text, where, found = PrintedText(pdf), 0, {}
    for ident, prompt, answer in printed_questions(page):
        start = text.find(flat(prompt)[:40], where)
        assert prompt and start >= 0, f"{ident}: its text is not printed: {prompt[:60]!r}"
        tail = flat(answer)[-40:]
        end = text.find(tail, start)
        assert answer and end >= 0, f"{ident}: its answer is not printed: {answer[-60:]!r}"
        where = end + len(tail)
        found[ident] = (text.page_at(start), text.page_at(where - 1))
    return found


@pytest.mark.parametrize("paper", PAPERS)
def test_a_printed_review_keeps_each_question_on_the_page_of_its_answer(site, context_factory, paper):
    page = printed(context_factory, site, REVIEW)
    found = pages_of_questions(page, print_pdf(page, paper))
    assert len(found) == page.locator("section[data-question]").count() > 10
    split = {ident: pages for ident, pages in found.items() if pages[0] != pages[1]}
    assert not split, f"questions on one page, their answers on the next: {split}"


def test_the_split_check_reports_an_answer_pushed_to_the_next_page(site, context_factory):
    page = printed(context_factory, site, REVIEW, bypass_csp=True)
    first = page.locator("section[data-question]").first.get_attribute("id")
    page.add_style_tag(content=f"@media print {{ #{first} [data-answer] {{ break-before: page }} }}")
    found = pages_of_questions(page, print_pdf(page, "A4"))
    assert found[first][1] == found[first][0] + 1, found[first]
    assert [ident for ident, pages in found.items() if pages[0] != pages[1]] == [first]


def test_printed_lesson_text_holds_widget_values_and_outside_addresses_only(site, context_factory):
    page = printed(context_factory, site, LESSON)
    # The sample course links nowhere outside; one such link, added to the text, must print its address.
    page.locator(".unit-body > p").first.evaluate(
        "p => p.insertAdjacentHTML('beforeend', ' <a href=\"https://example.org/k3-report\">the report</a>')"
    )
    text = PrintedText(print_pdf(page, "A4")).text
    assert flat("the report <https://example.org/k3-report>") in text
    assert ".html" not in text and "127.0.0.1" not in text  # relative links print as their words alone
    for label, value in page.locator(f"{SLIDER} .widget-control").evaluate_all(
        "cs => cs.map(c => { const field = c.querySelector('select, input[type=number]');"
        " return [c.querySelector('label').textContent, field.selectedOptions ? field.selectedOptions[0].text : field.value]; })"
    ):
        assert flat(f"{label}: {value}") in text, (label, value)


# 2. Phone: what is wider than the screen scrolls sideways, with a cue; one scroll box at a time


def test_a_wide_table_on_a_phone_scrolls_with_a_cue_and_by_keyboard(site, context_factory):
    page = open_page(context_factory(**PHONE), site, MEMORY)
    table = page.locator(".memory-per-sequence-table")
    width, box = table.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert width > box  # it is wider than the screen...
    assert "gradient" in style(table, "background-image")  # ...and its edge says so
    assert "local" in style(table, "background-attachment")
    assert table.get_attribute("tabindex") == "0"
    table.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('.memory-per-sequence-table').scrollLeft > 0")


def test_text_diagrams_on_a_phone_show_the_same_cue(site, context_factory):
    page = open_page(context_factory(**PHONE), site, LESSON)
    diagram = page.locator("pre.diagram").first
    assert diagram.evaluate("e => e.scrollWidth > e.clientWidth")
    assert "gradient" in style(diagram, "background-image")
    assert diagram.get_attribute("tabindex") == "0" and diagram.get_attribute("aria-label")


def test_the_kda_chunk_list_on_a_phone_is_no_scroll_box_inside_the_page(site, context_factory):
    page = open_page(context_factory(**PHONE), site, LESSON)
    timeline = page.locator(".kda-chunkwise-timeline")
    assert style(timeline, "overflow-y") == "visible"
    assert timeline.evaluate("e => e.scrollHeight <= e.clientHeight + 1")
    last = timeline.locator("li").last
    assert last.evaluate("e => e.getBoundingClientRect().bottom <= e.parentElement.getBoundingClientRect().bottom + 1")


# 3. Phone navigation


@pytest.mark.parametrize("javascript", [True, False])
def test_a_phone_has_a_header_menu_with_the_sections_and_the_course(site, context_factory, javascript):
    page = open_page(context_factory(java_script_enabled=javascript, **PHONE), site, LESSON)
    menu = page.locator(".site-header .site-menu")
    summary = menu.locator("summary")
    expect(summary).to_be_visible()
    assert summary.bounding_box()["y"] < 60
    summary.click()
    panel = page.locator(
        ".site-menu-panel"
    )  # what the menu opens, after the unit list (tests/browser/test_phone_menu.py)
    expect(panel).to_be_visible()
    expect(panel.get_by_role("link", name=re.compile("Chunkwise computation"))).to_be_visible()
    expect(panel.locator("a[href='depth-axis.html']")).to_be_visible()  # the next unit
    expect(panel.locator("a[href='index.html']")).to_be_visible()


def test_the_phone_menu_closes_when_a_section_is_chosen_and_on_escape(site, context_factory):
    page = open_page(context_factory(**PHONE), site, LESSON)
    menu = page.locator(".site-menu")
    menu.locator("summary").click()
    page.locator(".site-menu-panel").get_by_role("link", name="Gated MLA").click()
    expect(menu).not_to_have_attribute("open", "")
    expect(page.locator("#gated-mla")).to_be_in_viewport()
    menu.locator("summary").click()
    expect(menu).to_have_attribute("open", "")
    page.keyboard.press("Escape")
    expect(menu).not_to_have_attribute("open", "")
    expect(menu.locator("summary")).to_be_focused()


def test_a_phone_shows_the_lesson_s_first_paragraph_on_the_first_screen(site, context_factory):
    page = open_page(context_factory(**PHONE), site, LESSON)
    first = page.locator(".unit-body > p").first
    assert first.bounding_box()["y"] < 500, first.bounding_box()
    expect(first).to_be_in_viewport()


def test_a_wide_screen_keeps_its_columns_and_no_menu(site, context_factory):
    page = open_page(context_factory(**DESKTOP), site, LESSON)
    expect(page.locator(".site-menu")).to_be_hidden()
    expect(page.locator(".course-units")).to_be_visible()
    expect(page.locator(".unit > .toc")).to_be_visible()


# 4. Charts: axes, ticks and a legend that does not lean on colour


def test_the_overflow_chart_has_axes_ticks_and_marks_that_differ_without_colour(site, context_factory):
    page = open_page(context_factory(service_workers="block"), site, LESSON)
    figure = page.locator(SLIDER)
    assert figure.locator(".overflow-slider-x-ticks span").all_text_contents() == ["0", "16", "32", "48", "64"]
    assert figure.locator(".overflow-slider-y-ticks span").all_text_contents() == ["60", "40", "20", "0"]
    figure.locator("input[type=number][name=tile]").fill("24")  # baked state: bars past the ceiling
    figure.locator("input[type=number][name=tile]").press("Enter")
    overflow = figure.locator("svg rect.is-overflow")
    expect(overflow.first).to_be_attached()
    assert style(overflow, "stroke") != "none"  # outlined, where finite bars are solid
    assert style(figure.locator("svg rect.is-finite"), "stroke") == "none"
    assert figure.locator(".overflow-slider-swatch.is-overflow").count() == 1


def test_the_memory_chart_has_axes_and_a_line_pattern_per_series(site, context_factory):
    page = open_page(context_factory(service_workers="block"), site, MEMORY)
    figure = page.locator("#widget-memory-per-sequence")
    assert figure.locator(".memory-per-sequence-x-ticks span").all_text_contents()[::7] == ["8K", "1M"]
    assert figure.locator(".memory-per-sequence-y-ticks span").all_text_contents()[::4] == ["100 TB", "1 MB"]
    dashes = [
        style(figure.locator(f"polyline.{kind}"), "stroke-dasharray") for kind in ("is-attention", "is-mla", "is-kda")
    ]
    assert len(set(dashes)) == 3, dashes
    keys = figure.locator(".memory-per-sequence-key li")
    assert keys.count() == 3
    for i, kind in enumerate(("is-attention", "is-mla", "is-kda")):
        swatch = keys.nth(i).locator(f"line.{kind}")
        assert style(swatch, "stroke-dasharray") == dashes[i]


# 5. A review's progress and its import


def test_a_review_shows_its_progress_at_the_top_and_keeps_it_in_view(site, context_factory):
    page = open_page(context_factory(service_workers="block", **PHONE), site, REVIEW)
    page.wait_for_selector("html[data-review=ready]")
    progress = page.locator("[data-review-progress]")
    expect(progress).to_be_in_viewport()
    text = progress.locator("[data-review-progress-text]")
    expect(text).to_have_text(re.compile(r"^0 of \d+ answered$"))
    meter = progress.locator("progress")
    assert meter.get_attribute("aria-label")
    recall = page.locator("section[data-kind=recall]").first
    recall.locator("textarea").fill("an answer")
    recall.locator(".question-reveal").click()
    recall.locator("[data-score=partly]").click()
    expect(text).to_have_text(re.compile(r"^1 of \d+ answered$"))
    assert meter.evaluate("e => e.value") == 1
    page.locator("#tally").scroll_into_view_if_needed()
    expect(progress).to_be_in_viewport()


def test_a_review_imports_progress_through_a_labelled_button(site, context_factory, tmp_path):
    page = open_page(context_factory(service_workers="block"), site, REVIEW)
    page.wait_for_selector("html[data-review=ready]")
    button = page.get_by_role("button", name=re.compile("Import progress"))
    expect(button).to_be_visible()
    expect(page.locator("[data-tally-import]")).to_be_hidden()
    bogus = tmp_path / "notes.json"
    bogus.write_text('{"format": "something-else"}')
    with page.expect_file_chooser() as chooser:
        button.click()
    chooser.value.set_files(str(bogus))
    expect(page.locator("[data-tally-import-file]")).to_have_text("notes.json")
    expect(page.locator("[data-tally-status]")).to_contain_text("nothing changed")
