"""The memory-per-sequence widget: every baked state is exact kernels.sizes arithmetic on K3's layer counts."""

from __future__ import annotations

import importlib.util

import pytest
from helpers import REPO
from widget_pages import figure_states

from coursegen.pipeline import build_site
from kernels import sizes

LESSON = """---
title: Memory
---

## Memory

```widget memory-per-sequence context=1M head_dim=128 latent_dim=512 bytes_per_value=2
```
"""
K = 1024


def load_entry():
    spec = importlib.util.spec_from_file_location(
        "memory_widget", REPO / "widgets" / "memory-per-sequence" / "widget.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def states(widget_course):
    (widget_course / "lessons" / "03-memory.md").write_text(LESSON)
    config = widget_course / "course.yaml"
    # the CDN source: the states do not depend on where Pyodide comes from, and it needs no npm packages
    config.write_text(config.read_text().replace("source: local", "source: cdn") + "  - slug: memory\n")
    return figure_states(build_site(widget_course).outputs["memory.html"].decode(), "memory-per-sequence")


def test_k3s_layer_counts_are_the_block_arithmetic():
    assert (sizes.K3_KDA_LAYERS, sizes.K3_MLA_LAYERS, sizes.K3_LAYERS) == (69, 24, 93)
    assert sizes.K3_LAYERS == 23 * 4 + 1


def test_every_baked_state_equals_the_size_formulas_in_whole_bytes(states):
    assert len(states) == 8 * 3 * 3 * 3
    for params, result in states:
        n = result["tokens"]
        h, d, c, b = sizes.K3_HEADS, params["head_dim"], params["latent_dim"], params["bytes_per_value"]
        assert n == int(params["context"][:-1]) * (K if params["context"].endswith("K") else K * K)
        assert (
            result["attention_bytes"]
            == 2 * h * d * 93 * b * n
            == sizes.attention_cache(n, h, d, layers=93, bytes_per_value=b)
        )
        assert result["mla_bytes"] == c * 24 * b * n == sizes.mla_cache(n, c, layers=24, bytes_per_value=b)
        assert result["kda_bytes"] == h * d * d * 69 * b == sizes.kda_state(h, d, d, layers=69, bytes_per_value=b)
        assert result["hybrid_bytes"] == result["mla_bytes"] + result["kda_bytes"]
        assert not [key for key, value in result.items() if isinstance(value, float)], "a float was baked"


def test_the_page_state_reads_as_the_lesson_says(states):
    params, result = states[0]
    assert params == {"context": "1M", "head_dim": 128, "latent_dim": 512, "bytes_per_value": 2}
    assert (result["mla_token_text"], result["kda_text"]) == ("24 KiB", "207 MiB")
    assert result["verdict"] == (
        "At 1M tokens, K3's mix holds 24.2 GiB: 184 times less than standard attention in all 93 layers (4.36 TiB)."
    )
    # 217,055,232 bytes: log10 = 8.34, so 10 × (14 − 8.3) = 57 at every length, a flat line
    assert result["marker_x"] == 70 and result["kda_points"] == " ".join(f"{10 * i},57" for i in range(8))


def test_lines_climb_one_step_per_doubling_and_stay_on_the_chart(states):
    for _, result in states:
        for key in ("attention_points", "mla_points"):
            ys = [int(p.split(",")[1]) for p in result[key].split()]
            assert all(2 <= a - b <= 4 for a, b in zip(ys, ys[1:])), (key, ys)  # 10·log10(2) ≈ 3 per step
            assert min(ys) >= 0 and max(ys) <= 80


@pytest.mark.parametrize(
    "count, text",
    [
        (0, "0 bytes"),
        (1023, "1,023 bytes"),
        (1024, "1 KiB"),
        (1536, "1.5 KiB"),
        (1000 * K, "1000 KiB"),
        (3 * K**3 + K**3 // 10, "3.1 GiB"),
        (217055232, "207 MiB"),
        (5 * K**5, "5120 TiB"),
    ],
)
def test_byte_counts_are_written_in_binary_units(count, text):
    assert load_entry().binary(count) == text
