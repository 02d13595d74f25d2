"""Tests for kernels.overflow: the BF16 ceiling, the tile bound and the per-position values."""

import json
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernels import gates, overflow

BF16 = ml_dtypes.bfloat16


def test_bf16_constants():
    assert overflow.BF16_MAX == (2 - 2**-7) * 2**127
    assert float(ml_dtypes.finfo(BF16).max) == overflow.BF16_MAX
    assert pytest.approx(3.39e38, rel=1e-3) == overflow.BF16_MAX
    assert math.log(overflow.BF16_MAX) == overflow.BF16_MAX_LOG
    assert pytest.approx(88.72, abs=5e-3) == overflow.BF16_MAX_LOG


def test_minus_five_with_sixteen_fits():
    r = overflow.analyse(-5, 16)
    assert r["worst_log_decay"] == 80.0
    assert r["fits"] is True
    assert r["margin_nats"] == pytest.approx(8.7189, abs=1e-4)
    assert r["margin_bits"] == pytest.approx(8.7189 / math.log(2), abs=1e-3)
    assert r["reciprocal_bound"] == pytest.approx(math.exp(80))
    assert r["reciprocal_bound_log10"] == pytest.approx(80 / math.log(10))
    assert r["verdict"].startswith("fits")
    assert [p["position"] for p in r["positions"]] == list(range(1, 17))
    assert all(p["bf16_finite"] for p in r["positions"])
    assert r["positions"][-1]["log10_reciprocal"] == pytest.approx(34.74, abs=0.01)


@pytest.mark.parametrize("g_min,tile,first_bad", [(-6, 16, 15), (-5, 24, 18)])
def test_overflowing_tiles(g_min, tile, first_bad):
    r = overflow.analyse(g_min, tile)
    assert r["fits"] is False and r["margin_nats"] < 0 and r["margin_bits"] < 0
    assert r["verdict"].startswith("overflows")
    finite = [p["bf16_finite"] for p in r["positions"]]
    assert finite == [i < first_bad for i in range(1, tile + 1)]


def test_largest_safe_tile():
    assert overflow.largest_safe_tile(-5) == 17
    assert overflow.largest_safe_tile(-6) == 14
    assert overflow.largest_safe_tile(-100) == 0
    assert overflow.analyse(-5, 17)["fits"] and not overflow.analyse(-5, 18)["fits"]


@settings(max_examples=100, deadline=None)
@given(g_min=st.floats(-50, -0.01))
def test_largest_safe_tile_is_the_boundary(g_min):
    tile = overflow.largest_safe_tile(g_min)
    assert overflow.fits(g_min, tile + 1) is False
    assert tile == 0 or overflow.fits(g_min, tile)


def test_analyse_is_strict_json():
    r = overflow.analyse(-5.0, 16)
    assert json.loads(json.dumps(r, allow_nan=False)) == r
    for key in (
        "g_min",
        "tile",
        "worst_log_decay",
        "reciprocal_bound",
        "reciprocal_bound_log10",
        "bf16_max",
        "bf16_max_log",
        "margin_nats",
        "margin_bits",
        "fits",
        "verdict",
        "positions",
    ):
        assert key in r
    huge = overflow.analyse(-100.0, 16)  # e^1600 is past float64
    assert huge["reciprocal_bound"] == float("inf")
    clean = overflow.jsonable(huge)
    assert clean["reciprocal_bound"] == "inf"
    json.dumps(clean, allow_nan=False)


def test_profile_matches_ml_dtypes():
    prof = overflow.reciprocal_profile_bf16(-5.0, 20)
    with np.errstate(over="ignore"):
        expected = np.exp(-np.cumsum(np.full(20, -5.0, dtype=BF16))).astype(np.float32)
    assert np.array_equal(prof, expected)
    assert np.isfinite(prof[16]) and np.isinf(prof[17])  # e^85 fits, e^90 does not
    assert prof[15] == np.float32(np.float32(math.exp(80)).astype(BF16))


@settings(max_examples=300, deadline=None)
@given(bits=st.integers(0, 2**32 - 1))
def test_round_bf16_agrees_with_ml_dtypes(bits):
    x = np.array([bits], dtype=np.uint32).view(np.float32)
    ours = overflow.round_bf16(x)
    theirs = x.astype(BF16).astype(np.float32)
    if np.isnan(x[0]):
        assert np.isnan(ours[0]) and np.isnan(theirs[0])
    else:
        assert ours.view(np.uint32)[0] == theirs.view(np.uint32)[0]


def test_round_bf16_edges():
    top = np.float32(overflow.BF16_MAX)
    nxt = np.nextafter(top, np.float32(np.inf))
    halfway = np.float32((2 - 2**-8) * 2.0**127)  # exactly between BF16_MAX and 2**128: ties to even -> inf
    for x in (top, nxt, halfway, np.float32(np.inf), np.float32(1 + 2**-8), np.float32(1e-40)):
        ours = overflow.round_bf16(np.array([x]))[0]
        assert ours == np.float32(np.array([x]).astype(BF16)[0])
    assert np.isinf(overflow.round_bf16(np.array([halfway]))[0])
    assert overflow.round_bf16(np.array([1 + 2**-8]))[0] == 1.0  # tie goes to the even neighbour


def _tile(g, seed=0, d_k=8):
    rng = np.random.default_rng(seed)
    unit = lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True)
    L = len(g)
    return unit(rng.standard_normal((L, d_k))), unit(rng.standard_normal((L, d_k)))


def _exact(q, k, g):
    gam = np.cumsum(g, axis=0)
    L = len(g)
    m = np.zeros((L, L))
    for i in range(L):
        for j in range(i + 1):
            m[i, j] = np.sum(q[i] * k[j] * np.exp(gam[i] - gam[j]))
    return m


def test_dense_tile_bounded_gate_stays_finite():
    rng = np.random.default_rng(1)
    g = gates.bounded_gate(rng.normal(3.0, 1.0, (16, 8)))  # near the floor of -5
    q, k = _tile(g)
    dense, safe = overflow.dense_tile_bf16(q, k, g), overflow.safe_tile(q, k, g)
    assert np.all(np.isfinite(dense)) and np.all(np.isfinite(safe))
    exact = _exact(q, k, g)
    assert np.allclose(safe, exact, rtol=1e-12, atol=1e-15)
    assert np.abs(dense - exact).max() < 0.05 * np.abs(exact).max()  # bf16-sized error
    assert np.all(np.triu(dense, 1) == 0)


def test_dense_tile_unbounded_gate_overflows_but_log_space_does_not():
    rng = np.random.default_rng(2)
    g = gates.kimi_linear_gate(rng.normal(7.0, 1.0, (16, 8)))  # ~7 nats per step
    q, k = _tile(g)
    dense, safe = overflow.dense_tile_bf16(q, k, g), overflow.safe_tile(q, k, g)
    assert not np.all(np.isfinite(dense))
    assert np.all(np.isfinite(safe))
    assert np.allclose(safe, _exact(q, k, g), rtol=1e-12, atol=1e-300)
    assert overflow.tile_log10_reciprocal(g) > math.log10(overflow.BF16_MAX)


def test_span_report():
    g = np.full((40, 4), -6.0)
    q, k = _tile(g, d_k=4)
    rep = overflow.span_report(q, k, g, 16)
    assert rep["bf16_dense_finite"] is False
    assert rep["max_log10_reciprocal"] == pytest.approx(96 / math.log(10))
    rep = overflow.span_report(q[:10], k[:10], g[:10], 16)
    assert rep["bf16_dense_finite"] is True


@pytest.mark.parametrize("g_min", [0, 2.0, float("nan"), float("-inf"), True, "x"])
def test_bad_g_min(g_min):
    with pytest.raises(ValueError, match="g_min must be a finite negative number"):
        overflow.analyse(g_min, 16)


@pytest.mark.parametrize("tile", [0, -1, 2.5, None])
def test_bad_tile(tile):
    with pytest.raises(ValueError, match="tile must be a positive integer"):
        overflow.analyse(-5.0, tile)
