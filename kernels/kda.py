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
in float32. Results come back in the inputs' dtype (float64 when they differ).
"""
import time

import ml_dtypes
import numpy as np

from . import gates, overflow

TILE = 16  # sub-chunk length used inside a chunk, as in the fast kernels
_GROUP_TOKENS = 512  # tokens whose chunks are prepared together
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


def _prepare(q, k, v, g, beta, scale, initial_state):
    """Validate inputs; return flat (B, ...) compute arrays, the state, lead shape and dtypes."""
    arrs = {"q": q, "k": k, "v": v, "g": g, "beta": beta}
    if initial_state is not None:
        arrs["initial_state"] = initial_state
    arrs = {name: np.asarray(a) for name, a in arrs.items()}
    for name in ("q", "k", "v", "g", "initial_state"):
        if name in arrs and arrs[name].ndim < 2:
            raise ValueError(f"{name} must have at least 2 axes (..., rows, cols); got shape {arrs[name].shape}")
    if arrs["beta"].ndim < 1:
        raise ValueError(f"beta must have shape (..., T); got a scalar")
    T, d_k = arrs["q"].shape[-2:]
    d_v = arrs["v"].shape[-1]
    if T < 1 or d_k < 1 or d_v < 1:
        raise ValueError(f"need T, d_k, d_v >= 1; got T={T}, d_k={d_k}, d_v={d_v}")
    want = {"k": (T, d_k), "g": (T, d_k), "v": (T, None), "beta": (T,), "initial_state": (d_k, d_v)}
    for name, tail in want.items():
        if name not in arrs:
            continue
        got = arrs[name].shape[-len(tail):]
        if any(w is not None and w != s for w, s in zip(tail, got)):
            shown = ", ".join("d_v" if w is None else str(w) for w in tail)
            raise ValueError(f"{name} must have shape (..., {shown}) to match q of shape (..., {T}, {d_k}); got {arrs[name].shape}")
    try:
        lead = np.broadcast_shapes(*(a.shape[:-1 if n == "beta" else -2] for n, a in arrs.items()))
    except ValueError:
        shapes = {n: a.shape for n, a in arrs.items()}
        raise ValueError(f"leading batch/head axes must broadcast; got shapes {shapes}") from None
    out_dtype, dtype = _dtypes(arrs)
    arrs = {n: a.astype(dtype, copy=False) for n, a in arrs.items()}
    for name, a in arrs.items():
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite; found NaN or inf")
    if np.any(arrs["g"] > 0):
        raise ValueError(f"g must be <= 0 (a natural-log decay); largest value is {arrs['g'].max():g}")
    b = arrs["beta"]
    if np.any((b < 0) | (b > 1)):
        raise ValueError(f"beta must lie in [0, 1]; got values from {b.min():g} to {b.max():g}")
    scale = d_k ** -0.5 if scale is None else scale
    if not (np.isscalar(scale) and np.isreal(scale) and np.isfinite(scale)):
        raise ValueError(f"scale must be a finite real number; got {scale!r}")
    n = int(np.prod(lead, dtype=np.int64))
    flat = lambda name, tail: np.broadcast_to(arrs[name], lead + tail).reshape((n,) + tail)
    q_, k_, v_, g_ = (flat(x, (T, d)) for x, d in (("q", d_k), ("k", d_k), ("v", d_v), ("g", d_k)))
    s0 = flat("initial_state", (d_k, d_v)).copy() if "initial_state" in arrs else np.zeros((n, d_k, d_v), dtype)
    return (q_, k_, v_, g_, flat("beta", (T,)), dtype(scale)), s0, lead, out_dtype


def _finish(o, s, lead, out_dtype):
    """Restore the leading axes and the output dtype."""
    return (o.reshape(lead + o.shape[1:]).astype(out_dtype, copy=False),
            s.reshape(lead + s.shape[1:]).astype(out_dtype, copy=False))


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _check_chunk(chunk_size):
    """Return chunk_size as an int, or raise ValueError."""
    if not _is_int(chunk_size) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1; got {chunk_size!r}")
    return int(chunk_size)


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
    """Named buffers reused from one group of chunks to the next (touching fresh memory is slow)."""

    def __init__(self, dtype):
        self.dtype, self.bufs = dtype, {}

    def __call__(self, name, shape):
        size = int(np.prod(shape))
        if name not in self.bufs or self.bufs[name].size < size:
            self.bufs[name] = np.empty(size, self.dtype)
        return self.bufs[name][:size].reshape(shape)


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


def _limit(dtype):
    """Largest |exponent| allowed on one side of a factorised product (both sides and their product stay finite)."""
    return 0.5 * np.log(np.finfo(dtype).max) - 2.0


def _intra_tile(a, b, gam):
    """Diagonal tiles: a_i . b_j e^{G_i - G_j}; a (s, m, p, L, d), b and gam (m, p, L, d) -> (s, m, p, L, L)."""
    mid = gam[:, :, gam.shape[2] // 2, None]  # reference: the middle of the tile
    if max((gam[:, :, 0] - mid[:, :, 0]).max(), (mid[:, :, 0] - gam[:, :, -1]).max()) <= _limit(gam.dtype):
        e = np.exp(gam - mid)
        return (a * e) @ (b / e).swapaxes(-1, -2)
    diff = gam[:, :, :, None, :] - gam[:, :, None, :, :]  # decay too strong to factorise: log space
    lower = np.tril(np.ones(diff.shape[2:4], dtype=bool))[..., None]
    return np.einsum("smpic,mpjc,mpijc->smpij", a, b, np.exp(np.where(lower, diff, -np.inf)))


def _tiled_gram(a, b, gam, tile):
    """decay_gram's M when the chunk's decay is too strong for a single reference point."""
    s, m, c, d = a.shape
    p = c // tile
    at, bt, gt = a.reshape(s, m, p, tile, d), b.reshape(m, p, tile, d), gam.reshape(m, p, tile, d)
    end = gt[:, :, -1]  # log-decay at the end of each tile
    start = np.concatenate([np.zeros_like(end[:, :1]), end[:, :-1]], axis=1)
    aq = at * np.exp(gt - start[:, :, None])  # query side, from the start of its tile
    bl = bt * np.exp(end[:, :, None] - gt)  # key side, up to the end of its tile
    bridge = np.exp(np.minimum(start[:, :, None] - end[:, None], 0.0))  # (m, query tile, key tile, d)
    bk = (bl[:, None] * bridge[:, :, :, None]).reshape(m, p, c, d)
    full = np.ascontiguousarray((aq @ bk.swapaxes(-1, -2)).reshape(s, m, c, c))
    idx = np.arange(p)
    full.reshape(s, m, p, tile, p, tile)[:, :, idx, :, idx, :] = _intra_tile(at, bt, gt).transpose(2, 0, 1, 3, 4)
    return full


def decay_gram(a, b, gam, tile=TILE, scratch=None):
    """Return (M, e^gam, e^(gam_last - gam)); M[h, :, i, j] = sum_c a[h][:, i, c] b[:, j, c] e^{gam_ic - gam_jc}, j <= i.

    a: a sequence of s arrays (m, C, d); b, gam: (m, C, d) with C a multiple of
    ``tile`` and gam the cumulative log-decay from the chunk start (never
    increasing along C). M has shape (s, m, C, C); only its lower triangle,
    diagonal included, is meaningful. This is the Gamma-scaled query times
    1/Gamma-scaled key product. When the chunk's whole decay fits the dtype, a
    mid-chunk reference serves every pair; otherwise blocks below the diagonal
    are measured from the start of the query's tile (every factor <= 1) and
    diagonal tiles from their middle, or in log space if even that overflows.
    """
    scratch = scratch or _Scratch(gam.dtype)
    m, c, _ = gam.shape
    mid = gam[:, c // 2, None]
    with np.errstate(over="ignore", invalid="ignore"):  # only the unused upper triangle can blow up
        if max((gam[:, 0] - mid[:, 0]).max(), (mid[:, 0] - gam[:, -1]).max()) > _limit(gam.dtype):
            return _tiled_gram(np.stack(a), b, gam, tile), np.exp(gam), np.exp(gam[:, -1:] - gam)
        e = scratch("e", gam.shape)
        np.exp(np.subtract(gam, mid, out=e), out=e)
        scaled = scratch("scaled", (len(a),) + gam.shape)
        for h, x in enumerate(a):
            np.multiply(x, e, out=scaled[h])
        keys = np.divide(b, e, out=scratch("keys", gam.shape)).swapaxes(-1, -2)
        gram = np.matmul(scaled, keys, out=scratch("gram", (len(a), m, c, c)))
        from_start = np.multiply(e, np.exp(mid), out=scratch("from_start", gam.shape))
        return gram, from_start, np.divide(np.exp(gam[:, -1:] - mid), e, out=e)


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
        np.matmul(inv[p], rhs[:, lo:lo + tile] - a[:, lo:lo + tile, :lo] @ x[:, :lo], out=x[:, lo:lo + tile])
    return x


def _chunk_parts(q, k, v, g, beta, scale, tile, scratch):
    """Chunk-local work for m chunks (m, C, .) at once: returns (w, u, q0, attn, k_end, fade).

    With S the state entering a chunk, its true writes are U = u - w S, its
    outputs O = q0 S + attn U, and the state leaving it Diag(fade) S + k_end U.
    """
    m, c, d_k = q.shape
    gam = np.cumsum(g, axis=1, out=scratch("gam", g.shape))  # Gamma: log-decay from the chunk start
    (akk, attn), from_start, to_end = decay_gram((k, q), k, gam, tile, scratch)
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
    """Chunk-parallel KDA on (B, T, ...) arrays; returns (o, final state, state entering each chunk or None)."""
    nb, t, d_k = q.shape
    n, tile = -(-t // c), min(TILE, c)
    cp = -(-c // tile) * tile
    blocks = [_blocks(x, n, c, cp) for x in (q, k, v, g, beta[..., None])]
    o = np.empty((n * nb, cp, v.shape[-1]), s.dtype)
    states = np.empty((n, nb) + s.shape[1:], s.dtype) if keep_states else None
    scratch, step = _Scratch(s.dtype), max(1, _GROUP_TOKENS // (cp * nb))
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
        np.matmul(q0, st.reshape((-1,) + s.shape[1:]), out=o[rows])
        o[rows] += np.matmul(attn, writes, out=scratch("o", o[rows].shape))
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
    c = _check_chunk(chunk_size)
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

    Keys: max_abs_diff, recurrent_ms, chunkwise_ms, bf16_max_log10 and chunks, a
    list of {index, start, end, state_norm, max_log10_reciprocal, bf16_dense_finite}
    judged over the 16-token tiles of each chunk (state_norm: Frobenius norm of
    the state handed to the next chunk). No I/O; the two timings come from
    time.perf_counter and so vary from run to run.
    """
    if not _is_int(T) or T < 1:
        raise ValueError(f"T must be an integer >= 1; got {T!r}")
    T, c = int(T), _check_chunk(chunk_size)
    q, k, v, g, beta = _demo_inputs(T, gate, g_min, seed, d_k, d_v)
    start = time.perf_counter()
    o_rec, _ = recurrent(q, k, v, g, beta)
    middle = time.perf_counter()
    inputs, s0, _, _ = _prepare(q, k, v, g, beta, None, None)
    o_chunk, final, states = _chunkwise_core(*inputs, s0, c, keep_states=True)
    end = time.perf_counter()
    handed = np.concatenate([states[0, 1:], final], axis=0)
    chunks = []
    for i, lo in enumerate(range(0, T, c)):
        hi = min(lo + c, T)
        report = overflow.span_report(q[lo:hi] * inputs[-1], k[lo:hi], g[lo:hi], TILE)
        chunks.append({"index": i, "start": lo, "end": hi,
                       "state_norm": float(np.linalg.norm(handed[i])), **report})
    return {"max_abs_diff": float(np.abs(o_rec - o_chunk[0]).max()),
            "recurrent_ms": 1000.0 * (middle - start), "chunkwise_ms": 1000.0 * (end - middle),
            "bf16_max_log10": float(np.log10(overflow.BF16_MAX)), "chunks": chunks}
