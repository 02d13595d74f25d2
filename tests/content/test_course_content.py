"""The sample course itself: it builds cleanly, its numbers come from the kernels, its diagrams
are figures, its claims are cited, and every review question leads back to a real section."""

from __future__ import annotations

import html
import json
import re
from collections import Counter

import pytest
from helpers import REPO, copy_course

from coursegen.pipeline import BuildOptions, build_site

WRITTEN = ("k3-at-a-glance", "kda", "sequence-axis", "depth-axis", "review-a")
LESSONS = ("k3-at-a-glance", "kda", "sequence-axis", "depth-axis")
MEASUREMENTS = REPO / "measurements" / "gpu-kda-h200.json"
SHARED_MEASUREMENTS = REPO.parent / "shared" / "data" / "gpu-kda-h200.json"
# Values the kernels compute, as the pages display them: outside a {calc} span (or a widget's
# build-time result) they would have been typed by hand and could drift from the code.
KERNEL_FIGURES = (
    "88.72",
    "88.7",
    "5.5 × 10",
    "3.4 × 10",
    "0.0067",
    "8.72",
    "−7.28",
    "−31.28",
    "<mn>80</mn>",
    "<mn>88",
    "28.72",
    "207 MiB",
    "24 KiB",
)
QUESTION = re.compile(r'<section class="question [^"]*"[^>]*>.*?</section>', re.S)
ATTR = re.compile(r'\s(data-[a-z-]+)="([^"]*)"')


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> dict[str, str]:
    """The sample course built once, strictly: {site path: text} for every HTML page."""
    root = copy_course(REPO, tmp_path_factory.mktemp("content") / "course")
    result = build_site(root, BuildOptions(strict=True))
    assert result.warnings == []
    return {path: data.decode() for path, data in result.outputs.items() if path.endswith(".html")}


def questions(html: str) -> list[dict[str, str]]:
    """Return the data- attributes of every question block on a page, in page order."""
    return [dict(ATTR.findall(block.split(">", 1)[0])) for block in QUESTION.findall(html)]


def body_text(html: str) -> str:
    """Return a page's article with computed numbers, widgets, code cells' outputs and the footnote list removed."""
    article = html[html.index('<div class="unit-body">') :]
    article = re.sub(r'<span class="calc"[^>]*>[^<]*</span>', "", article)
    article = re.sub(r"<figure[^>]*data-widget.*?</figure>", "", article, flags=re.S)
    article = re.sub(r'<div class="code-cell-output">.*?</div>\n(?=</div>|<script)', "", article, flags=re.S)
    article = re.sub(r"<script type=\"application/json\" data-cells-runtime>.*?</script>", "", article, flags=re.S)
    return article


def test_the_course_builds_every_written_unit_with_zero_warnings(site):
    for slug in WRITTEN:
        assert f"{slug}.html" in site


def test_the_course_map_lists_the_titled_units_and_folds_units_8_to_14_into_one_line(site):
    index = site["index.html"]
    units = re.findall(r'<li class="course-map-unit (is-written|is-upcoming)" data-unit="([^"]+)"', index)
    assert [slug for state, slug in units if state == "is-written"] == list(WRITTEN)
    assert [slug for state, slug in units if state == "is-upcoming"] == ["width-axis", "width-axis-continued"]
    assert re.findall(r'data-units="([^"]+)">\s*<span class="course-map-title">([^<]+)', index) == [
        (" ".join(f"unit-{n}" for n in range(8, 15)), "Lessons 8–14 are still being written")
    ]
    for slug in ("unit-8", "width-axis"):
        assert f'href="{slug}.html"' not in index


def test_every_progress_map_folds_units_8_to_14_into_one_line(site):
    for slug in WRITTEN:
        progress_map = site[f"{slug}.html"].split("data-progress-map", 1)[1].split("</nav>", 1)[0]
        assert progress_map.count("Lessons 8–14 are still being written") == 1, slug
        assert 'data-unit="unit-' not in progress_map and "To be announced" not in progress_map


def test_numbers_the_kernels_compute_appear_only_through_calc(site):
    for slug in WRITTEN:
        text = body_text(site[f"{slug}.html"])
        typed = [figure for figure in KERNEL_FIGURES if figure in text]
        assert typed == [], f"{slug}.html types kernel figures by hand: {typed}"


def test_the_overflow_arithmetic_is_shown_with_kernel_values(site):
    page = site["sequence-axis.html"]
    for expression, shown in [
        ("overflow.worst_log_decay(-5, 16)", "80"),
        ("overflow.reciprocal_bound(-5, 16)", "5.5 × 10³⁴"),
        ("overflow.BF16_MAX", "3.4 × 10³⁸"),
        ("overflow.BF16_MAX_LOG", "88.72"),
        ("overflow.largest_safe_tile(-5)", "17"),
    ]:
        assert f'data-calc="{expression}">{shown}</span>' in page


def test_every_ascii_diagram_is_a_captioned_figure_with_a_text_alternative(site):
    for slug in LESSONS:
        page = site[f"{slug}.html"]
        diagrams = re.findall(r"<pre class=\"diagram\"[^>]*>", page)
        assert diagrams, f"{slug}.html has no diagram"
        for tag in diagrams:
            assert re.search(r'role="img" aria-label="[^"]{20,}"', tag), f"{slug}.html: {tag}"
        figures = re.findall(
            r'<figure class="diagram-figure">\n<pre class="diagram".*?<figcaption>[^<]+'
            r"</figcaption>\n</figure>",
            page,
            re.S,
        )
        assert len(figures) == len(diagrams)


def test_paragraphs_that_draw_on_the_report_or_commentary_carry_a_footnote(site):
    for slug in LESSONS:
        article = QUESTION.sub("", body_text(site[f"{slug}.html"]))
        article = article.split('<section class="footnotes"')[0]
        for paragraph in re.findall(r"<p>(.*?)</p>", article, re.S):
            if re.search(r"§|\bthe report\b|report's|Raschka|launch post", paragraph, re.I):
                assert 'class="footnote-ref"' in paragraph, f"{slug}.html: uncited: {paragraph[:120]}"


def test_each_lesson_ends_with_its_notes_then_the_works_they_cite(site):
    bib = (REPO / "references.bib").read_text()
    for slug in LESSONS:
        page = site[f"{slug}.html"]
        source = next((REPO / "lessons").glob(f"*-{slug}.md")).read_text()
        defined = len(re.findall(r"^\[\^[^\]]+\]:", source, re.M))
        listed = re.findall(r'<li id="fn\d+" class="footnote-item">', page)
        assert defined and len(listed) == defined
        assert page.index('id="notes"') < page.index('class="footnotes"') < page.index('class="references"')
        cited = set(re.findall(r"\{cite:t\}`([^`]+)`", source))
        works = re.findall(r'<li id="bib-([^"]+)">', page)
        assert cited and sorted(works) == sorted(cited) and all(f"{{{key}," in bib for key in works)


def test_the_bibliography_holds_no_year_or_venue_the_seeds_do_not_give(site):
    """The seeds name the report, the launch post, Raschka's commentary and fla-core 0.6.0, with no date."""
    bib = (REPO / "references.bib").read_text()
    assert not re.search(r"^\s*(year|date|journal|booktitle|publisher|institution|url)\s*=", bib, re.M | re.I)
    assert "(n.d.)" in site["sequence-axis.html"]


def test_every_question_revisits_a_heading_that_exists(site):
    checked = 0
    for slug in WRITTEN:
        for question in questions(site[f"{slug}.html"]):
            target, _, anchor = question["data-revisit"].partition("#")
            assert anchor, f"{slug}: {question['data-question']} names no section"
            assert re.search(rf'<h[2-4][^>]* id="{re.escape(anchor)}"', site[target]), (
                f"{slug}: {question['data-question']} → {target}#{anchor} is not a heading"
            )
            checked += 1
    assert checked >= 20


def test_review_a_has_the_shape_the_issue_asks_for(site):
    review = questions(site["review-a.html"])
    kinds = Counter(q["data-kind"] for q in review)
    assert kinds["recall"] >= 9 and kinds["explain"] == 1 and kinds["choice"] == 4 and kinds["excerpt"] == 1
    assert kinds["numeric"] == 3 and site["review-a.html"].count('data-multiple=""') == 1  # issue 44's new kinds
    assert all(q["data-lessons"] and q["data-revisit"] for q in review)
    assert {n for q in review for n in q["data-lessons"].split()} == {"1", "2", "3", "4"}
    page = site["review-a.html"]
    for generated in ("data-progress-map", "data-next-up", 'id="tally"'):
        assert generated in page


def test_review_a_interleaves_lessons_between_neighbouring_recall_questions(site):
    recall = [q["data-lessons"] for q in questions(site["review-a.html"]) if q["data-kind"] == "recall"]
    repeats = [pair for pair in zip(recall, recall[1:]) if pair[0] == pair[1]]
    assert repeats == []


def test_the_excerpt_is_marked_as_a_paraphrase_rather_than_a_quotation(site):
    excerpt = next(block for block in QUESTION.findall(site["review-a.html"]) if 'data-kind="excerpt"' in block)
    assert "<em>Paraphrase.</em>" in excerpt and "paraphrased, not quoted" in excerpt


def test_lesson_three_embeds_both_widgets_with_k3s_constants(site):
    page = site["sequence-axis.html"]
    slider = re.search(r'<figure[^>]*data-widget="overflow-slider"[^>]*data-params="([^"]*)"', page)
    assert slider and "&#34;g_min&#34;:-5" in slider.group(1) and "&#34;tile&#34;:16" in slider.group(1)
    assert 'data-widget="kda-chunkwise"' in page


def test_the_python_sketch_in_lesson_two_matches_the_kernel():
    import numpy as np

    from kernels import kda

    source = (REPO / "lessons" / "02-kda.md").read_text()
    code = re.search(r"```python\n(.*?)```", source, re.S).group(1)
    names: dict = {}
    exec(compile(code, "lessons/02-kda.md", "exec"), names)
    rng = np.random.default_rng(7)
    T, d_k, d_v = 12, 4, 3
    q, k = rng.standard_normal((T, d_k)), rng.standard_normal((T, d_k)) / 2
    v, g, beta = rng.standard_normal((T, d_v)), -rng.random((T, d_k)), rng.random(T)
    S, reads = np.zeros((d_k, d_v)), []
    for t in range(T):
        S, o = names["kda_step"](S, q[t], k[t], v[t], np.exp(g[t]), beta[t])
        reads.append(o)
    expected, final = kda.recurrent(q, k, v, g, beta, scale=1.0)
    np.testing.assert_allclose(np.array(reads), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(S, final, rtol=1e-12, atol=1e-12)


def test_the_map_so_far_marks_earlier_units_covered_and_this_one_here(site):
    progress_map = site["review-a.html"].split("data-progress-map", 1)[1].split("</nav>", 1)[0]
    for slug in ("k3-at-a-glance", "kda"):
        assert "(covered)" in re.search(rf'data-unit="{slug}">(.*?)</li>', progress_map, re.S).group(1)
    assert "(you are here)" in re.search(r'data-unit="review-a">(.*?)</li>', progress_map, re.S).group(1)


def page_text(page: str) -> str:
    """Return a page's article as plain text: tags dropped, entities decoded, spaces collapsed."""
    article = page[page.index('<div class="unit-body">') :]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", article)).split())


def test_lesson_one_states_the_seeds_figures(site):
    text = page_text(site["k3-at-a-glance.html"])
    for fact in (
        "2.78T",
        "104.2B",
        "64 accelerators or more",
        "896, of which 16",
        "| 384 | 896 |",
        "7,168",
        "160K",
        "three KDA layers followed by one Gated MLA layer",
        "Stable LatentMoE",
        "blocks of 12",
        "MoonViT-V2 and then an MLP projector",
        "8K and then 64K",
        "256K and then 1M",
    ):
        assert fact.replace("| ", "").replace(" |", "") in text.replace("|", ""), fact


def test_lesson_one_computes_its_arithmetic_with_calc_and_agrees_with_the_widget_kernels(site):
    from kernels import sizes

    page = site["k3-at-a-glance.html"]
    for expression, shown in [
        ("23 * 4 + 1", sizes.K3_LAYERS),
        ("23 * 3", sizes.K3_KDA_LAYERS),
        ("23 + 1", sizes.K3_MLA_LAYERS),
        ("2780 / 104.2", 27),
        ("896 / 16", 56),
        ("math.ceil(93 / 12)", 8),
        ("93 - 7 * 12", 9),
    ]:
        assert f'data-calc="{expression}">{shown}</span>' in page, expression
    assert 'data-widget="memory-per-sequence"' in page
    assert "assumed" in page_text(page).lower()


def test_the_lesson_one_move_left_lesson_two_starting_at_kda(site):
    kda = site["kda.html"]
    assert 'id="the-model-we-are-taking-apart"' not in kda and "2.78T" not in kda
    assert 'href="k3-at-a-glance.html#the-block-pattern"' in kda
    review = questions(site["review-a.html"])
    sizes_questions = [q for q in review if q.get("data-topic") in ("Sizes", "Layout")]
    assert len(sizes_questions) == 4
    for question in sizes_questions:
        assert question["data-revisit"].startswith("k3-at-a-glance.html#") and "1" in question["data-lessons"].split()


def measured() -> dict:
    """The figures Lesson 3's aside prints, worked out from the measurement file as the page rounds them."""
    data = json.loads(MEASUREMENTS.read_text())
    timings = data["timings_ms_bf16_forward"].values()
    safe = [t["safe_speedup"] for t in timings]
    chunk = [t["chunk_safe_vs_recurrent"] for t in timings]
    lengths = [int(re.search(r"_T(\d+)_", key).group(1)) for key in data["timings_ms_bf16_forward"]]
    parity = data["parity"]["max_abs_difference_to_reference"]["fused_recurrent_kda, float32 inputs"]
    tiles = data["bf16_tile_simulation"]
    gates = [tiles[name] for name in ("bounded gate", "unbounded gate, strong decay")]
    worst = max(
        row["worst_16_token_cumulative_log_decay"] for row in data["unbounded_gate_on_safe_path"]["rows"].values()
    )
    mantissa, exponent = f"{parity:.0e}".split("e")
    return {
        "version": f"fla-core {data['software']['fla-core']}",
        "gpu": data["hardware"].split(" (")[0],
        "lengths": f"{min(lengths):,} to {max(lengths):,} tokens",
        "safe": f"{min(safe):.2f}–{max(safe):.2f}×",
        "chunk": f"{min(chunk):.1f}–{max(chunk):.1f}×",
        "parity": f"{mantissa} × 10" + str(int(exponent)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")),
        "tiles": f"{sum(g['bit_equal'] for g in gates)} of {sum(g['trials'] for g in gates)}",
        "rel": f"{100 * max(g['max_rel_diff_on_finite'] for g in gates):.2f} %",
        "worst": f"{worst:.1f} nats",
        "safe_call": "safe_gate=True, lower_bound=-5",
    }


def test_the_measurement_file_is_the_one_shared_with_the_project():
    if not SHARED_MEASUREMENTS.exists():
        pytest.skip("../shared is not next to this checkout")
    assert json.loads(MEASUREMENTS.read_text()) == json.loads(SHARED_MEASUREMENTS.read_text())


def test_lesson_three_prints_the_measured_figures_as_the_file_holds_them(site):
    page = site["sequence-axis.html"]
    aside = page[page.index('aria-label="The open-source kernel, measured"') :]
    aside = aside[: aside.index("</aside>")]
    aside = re.sub(r'<span class="calc"[^>]*>[^<]*</span>|<sup class="footnote-ref">.*?</sup>', "", aside)
    text = page_text('<div class="unit-body">' + aside)
    figures = measured()
    assert figures["parity"] == "2 × 10⁻⁸" and figures["tiles"] == "39 of 40"  # the file's own reading
    for name, figure in figures.items():
        assert figure in text, (name, figure)
    # every other number in the aside is the library's reference point (C = G0 − 15, factors e^15 and
    # e^60, 16-token sub-chunks, gates in [−5, 0]) or the bfloat16 / float32 / float64 type names
    reference = json.loads(MEASUREMENTS.read_text())["reference_point"]["fact"]
    for allowed in ("e^15", "e^60", "16-token", "[-5, 0]", "G_0 - 15"):
        assert allowed in reference
    rest = text
    for figure in figures.values():
        rest = rest.replace(figure, " ")
    rest = re.sub(r"\b(K3|bfloat16|float32|float64|BF16|H200|G ?0|e ?15|e ?60)\b", " ", rest)
    numbers = re.findall(r"\d+(?:[.,]\d+)*", rest)
    assert sorted(set(numbers)) == ["0", "15", "16", "5"], numbers
