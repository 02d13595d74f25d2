"""Tests for kernels.sizes: cache and state sizes, mixture-of-experts parameter counts."""

import pytest

from kernels import sizes


def test_attention_cache():
    # 8 KV heads of 128 dims: a K and a V vector each, 2 bytes per value
    assert sizes.attention_cache_per_token(8, 128) == 2 * 8 * 128 * 2 == 4096
    assert sizes.attention_cache(1000, 8, 128, layers=2) == 1000 * 4096 * 2
    assert sizes.attention_cache_per_token(8, 128, bytes_per_value=1) == 2048  # values, not bytes


def test_mla_cache():
    assert sizes.mla_cache_per_token(512, 64) == (512 + 64) * 2
    assert sizes.mla_cache(10, 512) == 10 * 512 * 2


def test_kda_state_ignores_length():
    state = sizes.kda_state(32, 128, 128, layers=3)
    assert state == 32 * 128 * 128 * 3 * 2
    assert sizes.kda_state_per_token(1000, 32, 128, 128, layers=3) == state / 1000
    rows = sizes.cache_comparison([1, 1024, 2**20], attention=(8, 128), mla=(512, 64), kda=(32, 128, 128))
    assert len({r["kda"] for r in rows}) == 1
    assert rows[2]["attention"] == 2**20 * rows[0]["attention"]
    assert rows[2]["mla"] < rows[2]["attention"]


def test_moe_params():
    r = sizes.moe_params(7168, 2048, 384, 8, shared_experts=1)
    per = 3 * 7168 * 2048
    assert r["per_expert"] == per
    assert r["router"] == 7168 * 384
    assert r["total"] == 385 * per + 7168 * 384
    assert r["active"] == 9 * per + 7168 * 384
    assert r["active_fraction"] == pytest.approx(r["active"] / r["total"])
    plain = sizes.moe_params(10, 20, 4, 1, gated=False, router=False)
    assert plain == {"per_expert": 400, "router": 0, "total": 1600, "active": 400, "active_fraction": 0.25}


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: sizes.attention_cache_per_token(-1, 128), "num_kv_heads must be a non-negative integer"),
        (lambda: sizes.attention_cache(2.5, 8, 128), "seq_len must be a non-negative integer"),
        (lambda: sizes.mla_cache_per_token(512, bytes_per_value=0), "bytes_per_value must be a positive number"),
        (lambda: sizes.kda_state_per_token(0, 1, 2, 3), "seq_len must be >= 1"),
        (lambda: sizes.moe_params(8, 8, 4, 5), r"top_k must be <= num_experts \(4\)"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
