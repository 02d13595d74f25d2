"""Tests for kernels.kda: the recurrence, the chunked form, dtypes, batching, bad input."""

import json
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernels import kda


def plain_kda(q, k, v, g, beta, scale=None, initial_state=None):
    """A deliberately plain second implementation: explicit loops and outer products."""
    T, d_k = q.shape
    d_v = v.shape[1]
    scale = d_k**-0.5 if scale is None else scale
    S = np.zeros((d_k, d_v)) if initial_state is None else np.array(initial_state, dtype=float)
    out = np.zeros((T, d_v))
    for t in range(T):
        for a in range(d_k):  # fade each key channel
            S[a, :] = S[a, :] * math.exp(g[t, a])
        predicted = np.zeros(d_v)  # what the faded state recalls for k_t
        for a in range(d_k):
            predicted += k[t, a] * S[a, :]
        S = S + beta[t] * np.outer(k[t], v[t] - predicted)
        for a in range(d_k):
            out[t] += scale * q[t, a] * S[a, :]
    return out, S


def make_inputs(rng, T, d_k, d_v, g_lo=-5.0, g_hi=-0.005, lead=()):
    unit = lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True)
    q = rng.standard_normal(lead + (T, d_k))
    k = unit(rng.standard_normal(lead + (T, d_k)))
    v = rng.standard_normal(lead + (T, d_v))
    g = rng.uniform(g_lo, g_hi, lead + (T, d_k))
    beta = rng.uniform(0.0, 1.0, lead + (T,))
    return q, k, v, g, beta


def rel_err(got, want):
    return float(np.abs(np.asarray(got, float) - want).max() / max(np.abs(want).max(), 1e-300))


def test_one_token_by_hand():
    # fade 1 -> 0.5; erase and write: 0.5 + 0.5 * 1 * (3 - 0.5) = 1.75; read 1.75
    args = [np.array([[x]]) for x in (1.0, 1.0, 3.0, math.log(0.5))] + [np.array([0.5])]
    for fn in (kda.recurrent, kda.chunkwise):
        o, s = fn(*args, scale=1.0, initial_state=np.array([[1.0]]))
        assert o[0, 0] == pytest.approx(1.75, rel=1e-15)
        assert s[0, 0] == pytest.approx(1.75, rel=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_recurrent_matches_plain_loops(seed):
    rng = np.random.default_rng(seed)
    T, d_k, d_v = 23, 5, 3
    q, k, v, g, beta = make_inputs(rng, T, d_k, d_v)
    s0 = rng.standard_normal((d_k, d_v)) if seed % 2 else None
    scale = None if seed < 2 else 0.7
    o_ref, s_ref = plain_kda(q, k, v, g, beta, scale, s0)
    o, s = kda.recurrent(q, k, v, g, beta, scale=scale, initial_state=s0)
    assert rel_err(o, o_ref) < 1e-13
    assert rel_err(s, s_ref) < 1e-13


@settings(max_examples=60, deadline=None)
@given(
    T=st.integers(1, 150),
    chunk=st.integers(1, 80),
    d_k=st.integers(1, 12),
    d_v=st.integers(1, 12),
    g_lo=st.floats(-5.0, -0.005),
    width=st.floats(0.0, 1.0),
    with_state=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_chunkwise_equals_recurrent(T, chunk, d_k, d_v, g_lo, width, with_state, seed):
    rng = np.random.default_rng(seed)
    g_hi = g_lo + width * (-0.005 - g_lo)  # decays anywhere from -5 to -0.005
    q, k, v, g, beta = make_inputs(rng, T, d_k, d_v, g_lo, g_hi)
    s0 = rng.standard_normal((d_k, d_v)) if with_state else None
    o_r, s_r = kda.recurrent(q, k, v, g, beta, initial_state=s0)
    o_c, s_c = kda.chunkwise(q, k, v, g, beta, initial_state=s0, chunk_size=chunk)
    assert o_c.shape == (T, d_v) and s_c.shape == (d_k, d_v)
    assert rel_err(o_c, o_r) < 1e-12
    assert rel_err(s_c, s_r) < 1e-12


@pytest.mark.parametrize("chunk", [1, 7, 16, 40, 64, 100])
@pytest.mark.parametrize("g_lo", [-0.01, -5.0, -30.0, -60.0])
def test_chunkwise_fixed_grid(chunk, g_lo):
    # float64: -30 per step needs one reference per tile, -60 the halving path with log-space tiles
    rng = np.random.default_rng(chunk)
    q, k, v, g, beta = make_inputs(rng, 130, 6, 4, g_lo, g_lo / 10)
    s0 = rng.standard_normal((6, 4))
    o_r, s_r = kda.recurrent(q, k, v, g, beta, initial_state=s0)
    o_c, s_c = kda.chunkwise(q, k, v, g, beta, initial_state=s0, chunk_size=chunk)
    assert rel_err(o_c, o_r) < 1e-12 and rel_err(s_c, s_r) < 1e-12


def test_extreme_decay_and_long_chunks():
    rng = np.random.default_rng(9)
    q, k, v, g, beta = make_inputs(rng, 40, 3, 2)
    g[5, 0], g[20] = -1e300, -1e5  # wipes channel 0 at token 5 and everything at token 20
    o_r, s_r = kda.recurrent(q, k, v, g, beta)
    for chunk in (8, 64, 10_000):
        o_c, s_c = kda.chunkwise(q, k, v, g, beta, chunk_size=chunk)
        assert np.all(np.isfinite(o_c))
        assert rel_err(o_c, o_r) < 1e-12 and rel_err(s_c, s_r) < 1e-12


def test_leading_axes_broadcast():
    rng = np.random.default_rng(7)
    T, d_k, d_v = 37, 4, 3
    q, k, v, g, _ = make_inputs(rng, T, d_k, d_v, lead=(2, 3))
    beta = rng.uniform(0, 1, T)  # shared by every batch and head
    s0 = rng.standard_normal((3, d_k, d_v))  # one per head
    for fn in (kda.recurrent, lambda *a, **kw: kda.chunkwise(*a, chunk_size=16, **kw)):
        o, s = fn(q, k, v, g, beta, initial_state=s0)
        assert o.shape == (2, 3, T, d_v) and s.shape == (2, 3, d_k, d_v)
        for b in range(2):
            for h in range(3):
                o1, s1 = plain_kda(q[b, h], k[b, h], v[b, h], g[b, h], beta, None, s0[h])
                assert rel_err(o[b, h], o1) < 1e-12 and rel_err(s[b, h], s1) < 1e-12


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-4), (ml_dtypes.bfloat16, 6e-2)])
@pytest.mark.parametrize("g_lo", [-5.0, -10.0, -40.0])  # per-tile references, float64 products, halving
def test_low_precision_inputs(dtype, tol, g_lo):
    rng = np.random.default_rng(3)
    inputs64 = make_inputs(rng, 90, 8, 8, g_lo, -0.005)
    _o64, _s64 = kda.recurrent(*inputs64)
    inputs = [x.astype(dtype) for x in inputs64]
    ref, _ = kda.recurrent(*[x.astype(np.float64) for x in inputs])  # same rounded inputs
    for fn in (kda.recurrent, lambda *a: kda.chunkwise(*a, chunk_size=32)):
        o, s = fn(*inputs)
        assert o.dtype == np.dtype(dtype) and s.dtype == np.dtype(dtype)
        assert np.all(np.isfinite(o.astype(np.float32)))
        assert rel_err(o.astype(np.float64), ref) < tol


def test_scale_multiplies_queries():
    rng = np.random.default_rng(11)
    q, k, v, g, beta = make_inputs(rng, 20, 9, 2)
    o_default, _ = kda.chunkwise(q, k, v, g, beta, chunk_size=8)
    o_explicit, _ = kda.chunkwise(q, k, v, g, beta, scale=1 / 3, chunk_size=8)
    o_two, _ = kda.chunkwise(q, k, v, g, beta, scale=2.0, chunk_size=8)
    assert rel_err(o_default, o_explicit) < 1e-14
    assert rel_err(o_two, 6 * o_default) < 1e-13


def test_inputs_are_not_modified():
    rng = np.random.default_rng(5)
    inputs = make_inputs(rng, 33, 3, 3)
    s0 = rng.standard_normal((3, 3))
    copies = [x.copy() for x in inputs] + [s0.copy()]
    kda.recurrent(*inputs, initial_state=s0)
    kda.chunkwise(*inputs, initial_state=s0, chunk_size=8)
    for before, after in zip(copies, list(inputs) + [s0]):
        assert np.array_equal(before, after)


@pytest.mark.parametrize("gate", ["bounded", "unbounded"])
def test_demo_report(gate):
    report = kda.demo(T=200, chunk_size=64, gate=gate, g_min=-5.0, seed=1)
    text = json.dumps(report, allow_nan=False)  # strict JSON
    assert json.loads(text)["chunks"][0]["index"] == 0
    assert report["max_abs_diff"] < 1e-12
    assert report["recurrent_ms"] > 0 and report["chunkwise_ms"] > 0
    assert report["bf16_max_log10"] == pytest.approx(38.53, abs=0.01)
    chunks = report["chunks"]
    assert [(c["start"], c["end"]) for c in chunks] == [(0, 64), (64, 128), (128, 192), (192, 200)]
    assert all(c["state_norm"] > 0 for c in chunks)
    finite = [c["bf16_dense_finite"] for c in chunks]
    if gate == "bounded":
        assert all(finite)
        assert all(c["max_log10_reciprocal"] < 80 / math.log(10) + 1e-9 for c in chunks)
    else:
        assert not all(finite)
        assert max(c["max_log10_reciprocal"] for c in chunks) > report["bf16_max_log10"]


@pytest.mark.parametrize("gate, g_min", [("bounded", -1.0), ("bounded", -10.0), ("unbounded", -5.0)])
def test_demo_forms_stay_far_inside_the_widgets_agreement_bound(gate, g_min):
    # The kda-chunkwise widget says both forms agree to within 10⁻¹²; over its longest inputs and
    # every chunk size they differ by about 5e-15, a hundredfold inside, on any BLAS's round-off.
    worst = max(kda.demo(1024, c, gate, g_min, seed)["max_abs_diff"] for c in (16, 32, 64, 128) for seed in (0, 9999))
    assert worst < 1e-14


def test_demo_is_deterministic():
    a = kda.demo(50, 16, "bounded", -3.0, seed=42, d_k=4, d_v=2)
    b = kda.demo(50, 16, "bounded", -3.0, seed=42, d_k=4, d_v=2)
    assert a["chunks"] == b["chunks"] and a["max_abs_diff"] == b["max_abs_diff"]


def _good(T=10, d_k=3, d_v=2):
    return make_inputs(np.random.default_rng(0), T, d_k, d_v)


@pytest.mark.parametrize(
    "change,match",
    [
        (lambda a: a.update(k=a["k"][:, :2]), r"k must have shape \(\.\.\., 10, 3\)"),
        (lambda a: a.update(v=a["v"][:7]), r"v must have shape \(\.\.\., 10, d_v\)"),
        (lambda a: a.update(g=a["g"][:9]), r"g must have shape"),
        (lambda a: a.update(beta=a["beta"][:4]), r"beta must have shape \(\.\.\., 10\)"),
        (lambda a: a.update(q=a["q"][0]), r"q must have at least 2 axes"),
        (lambda a: a.update(beta=np.float64(0.5)), r"beta must have shape"),
        (
            lambda a: a.update(q=a["q"][:0], k=a["k"][:0], v=a["v"][:0], g=a["g"][:0], beta=a["beta"][:0]),
            r"need T, d_k, d_v >= 1",
        ),
        (lambda a: a.update(q=np.ones((2, 10, 3)), k=np.ones((3, 10, 3))), r"leading batch/head axes must broadcast"),
        (lambda a: a.update(initial_state=np.zeros((2, 3))), r"initial_state must have shape \(\.\.\., 3, 2\)"),
        (lambda a: a["g"].__setitem__((4, 1), 0.25), r"g must be <= 0"),
        (lambda a: a["beta"].__setitem__(3, 1.5), r"beta must lie in \[0, 1\]"),
        (lambda a: a["beta"].__setitem__(3, -0.1), r"beta must lie in \[0, 1\]"),
        (lambda a: a["q"].__setitem__((0, 0), np.nan), r"q must be finite"),
        (lambda a: a["v"].__setitem__((1, 1), np.inf), r"v must be finite"),
        (lambda a: a["g"].__setitem__((2, 2), -np.inf), r"g must be finite"),
        (lambda a: a.update(initial_state=np.full((3, 2), np.nan)), r"initial_state must be finite"),
        (lambda a: a.update(scale=float("nan")), r"scale must be a finite real number"),
        (lambda a: a.update(q=a["q"].astype(complex)), r"q must be a real float array"),
    ],
)
def test_bad_input(change, match):
    args = dict(zip(["q", "k", "v", "g", "beta"], _good()))
    change(args)
    for fn in (kda.recurrent, kda.chunkwise):
        with pytest.raises(ValueError, match=match):
            fn(**args)


@pytest.mark.parametrize("chunk", [0, -3, 2.5, True, None])
def test_bad_chunk_size(chunk):
    with pytest.raises(ValueError, match="chunk_size must be an integer >= 1"):
        kda.chunkwise(*_good(), chunk_size=chunk)


def test_bad_demo_arguments():
    with pytest.raises(ValueError, match="gate must be"):
        kda.demo(10, 4, "sideways", -5.0, 0)
    with pytest.raises(ValueError, match="T must be an integer >= 1"):
        kda.demo(0, 4, "bounded", -5.0, 0)
    with pytest.raises(ValueError, match="g_min must be a finite negative number"):
        kda.demo(10, 4, "bounded", 1.0, 0)


def test_integer_and_mixed_inputs_promote():
    rng = np.random.default_rng(12)
    q, k, v, g, beta = make_inputs(rng, 12, 2, 2)
    q_int, beta_int = np.round(3 * q).astype(int), (beta > 0.5).astype(int)
    o, _s = kda.chunkwise(q_int, k, v, g, beta_int, chunk_size=4)
    o_ref, _s_ref = plain_kda(q_int.astype(float), k, v, g, beta_int.astype(float))
    assert o.dtype == np.float64 and rel_err(o, o_ref) < 1e-13
    o32, _ = kda.recurrent(q.astype(np.float32), k, v, g, beta)  # mixed: float64 wins
    assert o32.dtype == np.float64


def test_workspace_reuse_and_release():
    rng = np.random.default_rng(13)
    small, big = make_inputs(rng, 20, 3, 2), make_inputs(rng, 300, 5, 4)
    first = kda.chunkwise(*big, chunk_size=16)[0]
    kda.chunkwise(*small, chunk_size=4)  # reuses (and must not disturb) the buffers
    assert np.array_equal(kda.chunkwise(*big, chunk_size=16)[0], first)
    kda.release_workspace()
    assert np.array_equal(kda.chunkwise(*big, chunk_size=16)[0], first)
