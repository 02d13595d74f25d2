"""Kimi Delta Attention (KDA): the delta rule with a per-channel forgetting gate.

Shapes (any leading batch/head axes ``...`` broadcast across all arguments):
    q, k  (..., T, d_k)   queries and keys
    v     (..., T, d_v)   values
    g     (..., T, d_k)   natural-log decay per key channel, g <= 0
    beta  (..., T)        write strength in [0, 1]
    S     (..., d_k, d_v) the state;   o (..., T, d_v) the outputs

Per token t, in this order:
    fade             S <- Diag(exp(g_t)) S
    erase and write  S <- S + beta_t k_t (v_t - S^T k_t)^T     (S^T k_t read from the faded S)
    read             o_t = S^T (scale * q_t)                    scale defaults to d_k ** -0.5

float64 inputs are computed in float64; float32, float16 and bfloat16 inputs
in float32 (chunkwise forms its decay-weighted products in float64 when a
chunk's decay is too steep for float32's exponent range). Results come back in
the inputs' dtype (float64 when they differ). chunkwise keeps a few megabytes
of scratch buffers per thread between calls.
"""
import threading
import time

import ml_dtypes
import numpy as np

from . import gates, overflow

TILE = 16  # sub-chunk length used inside a chunk, as in the fast kernels
_GROUP_TOKENS = 1024  # tokens whose chunks are prepared together (bounds the scratch memory)
_G_FLOOR = 1000.0  # steeper steps are clamped here inside chunkwise
_UNBOUNDED_MEAN = 5.0  # mean logit of the unbounded demo gate: ~5 nats per step
_FLOATS = (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.float16),
           np.dtype(ml_dtypes.bfloat16))


def _dtypes(arrays):
    """Return (output dtype, compute dtype) for the named input arrays."""
    kinds = set()
    for name, a in arrays.items():
        if a.dtype in _FLOATS:
            kinds.add(a.dtype)
        elif a.dtype.kind in "biu":
            kinds.add(np.dtype(np.float64))
        else:
            raise ValueError(f"{name} must be a real float array; got dtype {a.dtype}")
    out = kinds.pop() if len(kinds) == 1 else (
        np.dtype(np.float64) if np.dtype(np.float64) in kinds else np.dtype(np.float32))
    return out, (np.float64 if out == np.float64 else np.float32)


def _check_shapes(arrs):
    """Return (T, d_k, d_v, leading shape) after checking every named array's shape."""
    for name, a in arrs.items():
        if a.ndim < (1 if name == "beta" else 2):
            want = "shape (..., T)" if name == "beta" else "at least 2 axes (..., rows, cols)"
            raise ValueError(f"{name} must have {want}; got shape {a.shape}")
    T, d_k = arrs["q"].shape[-2:]
    d_v = arrs["v"].shape[-1]
    if T < 1 or d_k < 1 or d_v < 1:
        raise ValueError(f"need T, d_k, d_v >= 1; got T={T}, d_k={d_k}, d_v={d_v}")
    want = {"k": (T, d_k), "g": (T, d_k), "v": (T, None), "beta": (T,), "initial_state": (d_k, d_v)}
    for name, tail in want.items():
        got = arrs[name].shape[-len(tail):] if name in arrs else tail
        if any(w is not None and w != x for w, x in zip(tail, got)):
            shown = ", ".join("d_v" if w is None else str(w) for w in tail)
            raise ValueError(f"{name} must have shape (..., {shown}) to match q of shape "
                             f"(..., {T}, {d_k}); got {arrs[name].shape}")
    try:
        lead = np.broadcast_shapes(*(a.shape[:-1 if n == "beta" else -2] for n, a in arrs.items()))
    except ValueError:
        shapes = {n: a.shape for n, a in arrs.items()}
        raise ValueError(f"leading batch/head axes must broadcast; got shapes {shapes}") from None
    return T, d_k, d_v, lead


def _check_values(arrs, scale):
    """Raise ValueError on non-finite input, positive g, beta outside [0, 1] or a bad scale."""
    for name, a in arrs.items():
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite; found NaN or inf")
    if np.any(arrs["g"] > 0):
        top = arrs["g"].max()
        raise ValueError(f"g must be <= 0 (a natural-log decay); its largest value is {top:g}")
    b = arrs["beta"]
    if np.any((b < 0) | (b > 1)):
        raise ValueError(f"beta must lie in [0, 1]; got values from {b.min():g} to {b.max():g}")
    if not (np.isscalar(scale) and np.isreal(scale) and np.isfinite(scale)):
        raise ValueError(f"scale must be a finite real number; got {scale!r}")


def _prepare(q, k, v, g, beta, scale, initial_state):
    """Validate; return ((q, k, v, g, beta, scale) as (B, ...) arrays, state, lead shape, out dtype)."""
    arrs = {"q": q, "k": k, "v": v, "g": g, "beta": beta, "initial_state": initial_state}
    arrs = {name: np.asarray(a) for name, a in arrs.items() if a is not None}
    T, d_k, d_v, lead = _check_shapes(arrs)
    out_dtype, dtype = _dtypes(arrs)
    arrs = {n: a.astype(dtype, copy=False) for n, a in arrs.items()}
    scale = d_k ** -0.5 if scale is None else scale
    _check_values(arrs, scale)
    n = int(np.prod(lead, dtype=np.int64))
    flat = lambda name, tail: np.broadcast_to(arrs[name], lead + tail).reshape((n,) + tail)
    q_, k_, v_, g_ = (flat(x, (T, d)) for x, d in (("q", d_k), ("k", d_k), ("v", d_v), ("g", d_k)))
    s0 = (flat("initial_state", (d_k, d_v)).copy() if "initial_state" in arrs
          else np.zeros((n, d_k, d_v), dtype))
    return (q_, k_, v_, g_, flat("beta", (T,)), dtype(scale)), s0, lead, out_dtype


def _finish(o, s, lead, out_dtype):
    """Restore the leading axes and the output dtype."""
    return (o.reshape(lead + o.shape[1:]).astype(out_dtype, copy=False),
            s.reshape(lead + s.shape[1:]).astype(out_dtype, copy=False))


def _positive_int(name, x):
    """Return x as an int if it is an integer >= 1, else raise ValueError naming it."""
    if not isinstance(x, (int, np.integer)) or isinstance(x, (bool, np.bool_)) or x < 1:
        raise ValueError(f"{name} must be an integer >= 1; got {x!r}")
    return int(x)


def _recurrent_core(q, k, v, g, beta, scale, s):
    """Step through the tokens. Arrays are (B, T, ...), s is (B, d_k, d_v) and is updated in place."""
    o = np.empty(v.shape, s.dtype)
    decay, q = np.exp(g)[..., None], q * scale
    for t in range(q.shape[1]):
        s *= decay[:, t]
        err = v[:, t] - (k[:, t, None, :] @ s)[:, 0]
        s += (beta[:, t, None] * k[:, t])[:, :, None] * err[:, None, :]
        o[:, t] = (q[:, t, None, :] @ s)[:, 0]
    return o, s


def recurrent(q, k, v, g, beta, *, scale=None, initial_state=None):
    """Return (o, final_state) by applying fade, erase-and-write and read one token at a time."""
    inputs, s0, lead, out_dtype = _prepare(q, k, v, g, beta, scale, initial_state)
    return _finish(*_recurrent_core(*inputs, s0), lead, out_dtype)


class _Scratch:
    """Named buffers reused from one group of chunks to the next (first-touching memory is slow).

    Calling it with (name, shape[, dtype]) returns an array of that shape.
    """

    def __init__(self, dtype):
        self.dtype, self.bufs = np.dtype(dtype), {}

    def __call__(self, name, shape, dtype=None):
        key, size = (name, np.dtype(dtype or self.dtype)), int(np.prod(shape))
        if key not in self.bufs or self.bufs[key].size < size:
            self.bufs[key] = np.empty(size, key[1])
        return self.bufs[key][:size].reshape(shape)


_WORKSPACES = threading.local()


def _workspace(dtype):
    """Return this thread's _Scratch for dtype, kept between calls so its pages are touched only once."""
    spaces = _WORKSPACES.__dict__.setdefault("by_dtype", {})
    return spaces.setdefault(np.dtype(dtype), _Scratch(dtype))


def release_workspace():
    """Return None after dropping this thread's chunkwise scratch buffers."""
    _WORKSPACES.__dict__.pop("by_dtype", None)


def _blocks(x, n, c, cp):
    """(B, T, d) -> (n * B, cp, d), chunk-major: row i * B + b is chunk i of batch b, zero-padded."""
    b, t, d = x.shape
    if b == 1 and t == n * c and c == cp:
        return x.reshape(n, c, d)
    out = np.zeros((n, b, cp, d), x.dtype)
    full, rest = divmod(t, c)
    out[:full, :, :c] = x[:, :full * c].reshape(b, full, c, d).swapaxes(0, 1)
    if rest:
        out[full, :, :rest] = x[:, full * c:]
    return out.reshape(n * b, cp, d)


def _forward_substitution(a, rhs, tile, scratch):
    """Solve (I + a) x = rhs reading only the strict lower triangle of a (m, C, C); rhs (m, C, n).

    Blocked: the unit-triangular diagonal tiles are inverted together, row by
    row, then the tiles are eliminated in order.
    """
    m, c, _ = a.shape
    idx = np.arange(c // tile)
    diag = a.reshape(m, c // tile, tile, c // tile, tile)[:, idx, :, idx, :]  # (p, m, L, L)
    inv = np.broadcast_to(np.eye(tile, dtype=a.dtype), diag.shape).copy()
    for i in range(1, tile):
        inv[:, :, i] -= (diag[:, :, i, None, :i] @ inv[:, :, :i])[:, :, 0]
    x = scratch("x", rhs.shape)
    for p, lo in enumerate(range(0, c, tile)):
        hi = lo + tile
        np.matmul(inv[p], rhs[:, lo:hi] - a[:, lo:hi, :lo] @ x[:, :lo], out=x[:, lo:hi])
    return x


def _chunk_parts(q, k, v, g, beta, scale, tile, scratch):
    """Chunk-local work for m chunks (m, C, .) at once: returns (w, u, q0, attn, k_end, fade).

    With S the state entering a chunk, its true writes are U = u - w S, its
    outputs O = q0 S + attn U, and the state leaving it Diag(fade) S + k_end U.
    """
    m, c, d_k = q.shape
    gam = np.cumsum(g, axis=1, out=scratch("gam", g.shape))  # Gamma: log-decay from the chunk start
    (akk, attn), from_start, to_end = overflow.decay_gram((k, q), k, gam, tile, scratch)
    with np.errstate(over="ignore", invalid="ignore"):  # the upper triangles may hold inf or NaN
        np.copyto(attn, 0.0, where=~np.tril(np.ones((c, c), dtype=bool)))
        attn *= scale
        akk *= beta  # beta_i k_i.k_j Gamma_i/Gamma_j for j < i
    rhs = scratch("rhs", (m, c, d_k + v.shape[-1]))
    np.multiply(k, from_start, out=rhs[..., :d_k])
    rhs[..., d_k:] = v
    x = _forward_substitution(akk, np.multiply(rhs, beta, out=rhs), tile, scratch)
    fade = from_start[:, -1, :, None].copy()
    q0 = np.multiply(q, from_start, out=from_start)
    q0 *= scale
    k_end = np.multiply(k, to_end, out=to_end).swapaxes(-1, -2)
    return x[..., :d_k], x[..., d_k:], q0, attn, k_end, fade


def _chunkwise_core(q, k, v, g, beta, scale, s, c, keep_states=False):
    """Chunk-parallel KDA on (B, T, ...) arrays: returns (o, final state, states entering the chunks).

    The last is (B, n_chunks, d_k, d_v) when keep_states is set, else None.
    """
    nb, t, d_k = q.shape
    c = min(c, t)  # a chunk longer than the sequence is the whole sequence
    if g.min() < -_G_FLOOR:  # e^-1000 is already 0 in float64: clamping keeps Gamma finite, changes nothing
        g = np.maximum(g, -_G_FLOOR)
    n, tile = -(-t // c), min(TILE, c)
    cp = tile * 2 ** int(np.ceil(np.log2(-(-c // tile))))  # whole tiles, a power of two of them
    blocks = [_blocks(x, n, c, cp) for x in (q, k, v, g, beta[..., None])]
    o = np.empty((n * nb, cp, v.shape[-1]), s.dtype)
    states = np.empty((n, nb) + s.shape[1:], s.dtype) if keep_states else None
    scratch, step = _workspace(s.dtype), max(1, _GROUP_TOKENS // (cp * nb))
    for lo in range(0, n, step):
        rows = slice(lo * nb, min(lo + step, n) * nb)
        w, u, q0, attn, k_end, fade = _chunk_parts(*(x[rows] for x in blocks), scale, tile, scratch)
        size = w.shape[0] // nb
        st = states[lo:lo + size] if keep_states else scratch("states", (size, nb) + s.shape[1:])
        writes = scratch("writes", u.shape)
        for i in range(size):  # sequential state passing between chunks
            r = slice(i * nb, i * nb + nb)
            st[i] = s
            np.subtract(u[r], np.matmul(w[r], s, out=writes[r]), out=writes[r])
            s = fade[r] * s + k_end[r] @ writes[r]
        out = o[rows]
        np.matmul(q0, st.reshape((-1,) + s.shape[1:]), out=out)
        for a in range(0, cp, tile):  # attn is lower triangular: skip the blocks above the diagonal
            out[:, a:a + tile] += attn[:, a:a + tile, :a + tile] @ writes[:, :a + tile]
    o = o.reshape(n, nb, cp, -1)[:, :, :c].swapaxes(0, 1).reshape(nb, n * c, -1)[:, :t]
    return o, s, (states.swapaxes(0, 1) if keep_states else None)


def chunkwise(q, k, v, g, beta, *, scale=None, initial_state=None, chunk_size=64):
    """Return (o, final_state), identical to ``recurrent`` but computed chunk by chunk.

    Within a chunk of C tokens, with G = cumsum(g) from the chunk start,
    K~ = K * e^G and A[i, j] = beta_i sum_c k_ic k_jc e^{G_ic - G_jc} (j < i):
        [W | U] = (I + A)^{-1} Diag(beta) [K~ | V]     (triangular solve, the WY form)
        U_true  = U - W S                               (S: state entering the chunk)
        O       = (scale Q * e^G) S + P U_true,  P[i, j] = scale q_i.k_j e^{G_i - G_j}, j <= i
        S_next  = Diag(e^{G_C}) S + (K * e^{G_C - G})^T U_true
    T need not be a multiple of chunk_size: the tail is padded with tokens that
    neither fade nor write.
    """
    c = _positive_int("chunk_size", chunk_size)
    inputs, s0, lead, out_dtype = _prepare(q, k, v, g, beta, scale, initial_state)
    o, s, _ = _chunkwise_core(*inputs, s0, c)
    return _finish(o, s, lead, out_dtype)


def _demo_inputs(T, gate, g_min, seed, d_k, d_v):
    """Seeded inputs: unit-norm q and k, normal v, sigmoid beta, g from the chosen gate."""
    rng = np.random.default_rng(seed)
    unit = lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True)
    q, k = unit(rng.standard_normal((T, d_k))), unit(rng.standard_normal((T, d_k)))
    v, beta = rng.standard_normal((T, d_v)), gates.sigmoid(rng.standard_normal(T))
    if gate == "bounded":
        g = gates.bounded_gate(rng.normal(0.0, 2.0, (T, d_k)), g_min=g_min)
    elif gate == "unbounded":  # strong decay: most 16-token tiles overflow BF16
        g = gates.kimi_linear_gate(rng.normal(_UNBOUNDED_MEAN, 2.0, (T, d_k)))
    else:
        raise ValueError(f'gate must be "bounded" or "unbounded"; got {gate!r}')
    return q, k, v, g, beta


def demo(T, chunk_size, gate, g_min, seed, d_k=16, d_v=16):
    """Return a JSON-able dict comparing both forms on seeded random inputs, chunk by chunk.

    gate is "bounded" (g_min * sigmoid, floor g_min) or "unbounded" (the Kimi
    Linear softplus gate on strong-decay logits; g_min is then unused). Keys:
    max_abs_diff, recurrent_ms, chunkwise_ms, bf16_max_log10 and chunks, a list
    of {index, start, end, state_norm, max_log10_reciprocal, bf16_dense_finite}
    judged over the 16-token tiles of each chunk (state_norm: Frobenius norm of
    the state handed to the next chunk). No I/O; the two timings come from
    time.perf_counter and so vary from run to run.
    """
    T, c = _positive_int("T", T), _positive_int("chunk_size", chunk_size)
    q, k, v, g, beta = _demo_inputs(T, gate, g_min, seed, d_k, d_v)
    start = time.perf_counter()
    o_rec, _ = recurrent(q, k, v, g, beta)
    middle = time.perf_counter()
    inputs, s0, _, _ = _prepare(q, k, v, g, beta, None, None)
    o_chunk, final, states = _chunkwise_core(*inputs, s0, c, keep_states=True)
    end = time.perf_counter()
    scale = inputs[-1]
    handed = np.concatenate([states[0, 1:], final], axis=0)
    chunks = []
    for i, lo in enumerate(range(0, T, c)):
        hi = min(lo + c, T)
        report = overflow.span_report(scale * q[lo:hi], k[lo:hi], g[lo:hi], TILE)
        chunks.append({"index": i, "start": lo, "end": hi,
                       "state_norm": float(np.linalg.norm(handed[i])), **report})
    return {"max_abs_diff": float(np.abs(o_rec - o_chunk[0]).max()),
            "recurrent_ms": 1000.0 * (middle - start), "chunkwise_ms": 1000.0 * (end - middle),
            "bf16_max_log10": float(np.log10(overflow.BF16_MAX)), "chunks": chunks}
