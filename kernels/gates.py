"""Decay gates: how a layer turns a logit z into a per-channel log-decay g <= 0.

Both gates work elementwise on arrays of any shape. ``a_log`` (A) is a learned
log-scale, one per head, initialised to 0; it broadcasts against ``z``. With z
of shape (..., H, d_k) and one A per head, pass ``a_log[:, None]``.

    Kimi Linear gate:  g = -exp(A) * softplus(z + bias)              g in (-inf, 0)
    bounded gate:      g = g_min * sigmoid(exp(A) * (z + bias))      g in (g_min, 0)

The open intervals hold in exact arithmetic; in floating point, extreme logits
can land exactly on an endpoint.
"""
import numpy as np

DEFAULT_G_MIN = -5.0


def _as_float(x):
    """Return (array in a compute dtype, dtype to hand the result back in)."""
    x = np.asarray(x)
    if x.dtype in (np.float64, np.float32):
        return x, x.dtype
    if x.dtype.kind in "biu":
        return x.astype(np.float64), np.dtype(np.float64)
    try:
        return x.astype(np.float32), x.dtype  # bfloat16 / float16
    except (TypeError, ValueError):
        raise ValueError(f"z must be a real array; got dtype {x.dtype}") from None


def softplus(x):
    """Return log(1 + exp(x)), computed without overflow."""
    return np.logaddexp(0.0, x)


def sigmoid(x):
    """Return 1 / (1 + exp(-x)), computed without overflow."""
    return np.exp(-np.logaddexp(0.0, -x))


def init_a_log(num_heads):
    """Return the initial per-head log-scale A: zeros of shape (num_heads,)."""
    if isinstance(num_heads, bool) or not isinstance(num_heads, (int, np.integer)) or num_heads < 1:
        raise ValueError(f"num_heads must be a positive integer; got {num_heads!r}")
    return np.zeros(int(num_heads))


def kimi_linear_gate(z, a_log=0.0, bias=0.0):
    """Return g = -exp(a_log) * softplus(z + bias), unbounded below, same shape as z."""
    x, out = _as_float(z)
    g = -np.exp(np.asarray(a_log, x.dtype)) * softplus(x + np.asarray(bias, x.dtype))
    return g.astype(out)


def bounded_gate(z, a_log=0.0, bias=0.0, g_min=DEFAULT_G_MIN):
    """Return g = g_min * sigmoid(exp(a_log) * (z + bias)), inside (g_min, 0)."""
    if not (np.isscalar(g_min) and np.isfinite(g_min) and g_min < 0):
        raise ValueError(f"g_min must be a finite negative number; got {g_min!r}")
    x, out = _as_float(z)
    scale = np.exp(np.asarray(a_log, x.dtype))
    g = g_min * sigmoid(scale * (x + np.asarray(bias, x.dtype)))
    return g.astype(out)
