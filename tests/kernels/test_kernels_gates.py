"""Tests for kernels.gates: the Kimi Linear softplus gate and the bounded sigmoid gate."""

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernels import gates

finite = st.floats(-1e6, 1e6, allow_nan=False)


def test_kimi_linear_gate_formula():
    z = np.linspace(-8, 8, 33)
    a_log, bias = 0.3, -0.4
    want = -math.exp(a_log) * np.log1p(np.exp(z + bias))
    assert np.allclose(gates.kimi_linear_gate(z, a_log, bias), want, rtol=1e-14, atol=0)


def test_kimi_linear_gate_is_unbounded_below():
    g = gates.kimi_linear_gate(np.array([10.0, 100.0, 1e4]))
    assert np.all(np.diff(g) < 0)
    assert g[-1] == pytest.approx(-1e4)
    assert gates.kimi_linear_gate(np.array([-800.0]))[0] <= 0.0  # softplus underflows, stays <= 0


def test_bounded_gate_formula_and_defaults():
    z = np.linspace(-6, 6, 25)
    want = -5.0 / (1.0 + np.exp(-(z + 0.5) * math.exp(0.2)))
    assert np.allclose(gates.bounded_gate(z, 0.2, 0.5), want, rtol=1e-14, atol=0)
    assert gates.DEFAULT_G_MIN == -5.0
    assert gates.bounded_gate(np.zeros(3))[0] == pytest.approx(-2.5)  # A = 0, bias = 0: half of g_min
    assert gates.bounded_gate(np.zeros(1), g_min=-2.0)[0] == pytest.approx(-1.0)


@settings(max_examples=200, deadline=None)
@given(z=finite, a_log=st.floats(-3, 3), bias=st.floats(-10, 10), g_min=st.floats(-20, -0.01))
def test_bounded_gate_stays_in_range(z, a_log, bias, g_min):
    g = float(gates.bounded_gate(np.array([z]), a_log, bias, g_min)[0])
    assert g_min <= g <= 0.0


@settings(max_examples=200, deadline=None)
@given(z=finite, a_log=st.floats(-3, 3))
def test_kimi_linear_gate_never_positive(z, a_log):
    assert float(gates.kimi_linear_gate(np.array([z]), a_log)[0]) <= 0.0


def test_per_head_a_log_broadcasts():
    a_log = gates.init_a_log(3)
    assert np.array_equal(a_log, np.zeros(3))
    a_log = np.array([0.0, 1.0, -1.0])
    z = np.ones((4, 3, 2))  # (T, H, d_k)
    g = gates.bounded_gate(z, a_log[:, None])
    assert g.shape == (4, 3, 2)
    assert g[0, 1, 0] < g[0, 0, 0] < g[0, 2, 0]  # a larger A pushes harder toward g_min


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.float64])
def test_dtypes_are_kept(dtype):
    z = np.linspace(-3, 3, 7).astype(dtype)
    assert gates.kimi_linear_gate(z).dtype == np.dtype(dtype)
    assert gates.bounded_gate(z).dtype == np.dtype(dtype)
    assert gates.kimi_linear_gate([1, 2]).dtype == np.float64  # integers promote


def test_stable_helpers():
    assert gates.softplus(np.array(1000.0)) == pytest.approx(1000.0)
    assert gates.sigmoid(np.array(-1000.0)) == 0.0
    assert gates.sigmoid(np.array(0.0)) == 0.5


@pytest.mark.parametrize("g_min", [0.0, 1.0, float("nan"), float("-inf")])
def test_bad_g_min(g_min):
    with pytest.raises(ValueError, match="g_min must be a finite negative number"):
        gates.bounded_gate(np.zeros(2), g_min=g_min)


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_heads must be a positive integer"):
        gates.init_a_log(0)
    with pytest.raises(ValueError, match="z must be a real array"):
        gates.kimi_linear_gate(np.array(["a"]))
