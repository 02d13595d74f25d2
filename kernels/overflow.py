"""Why the chunked kernel needs a decay floor: when 1/Gamma stops fitting in BF16.

Inside a tile of L tokens the fast kernel scales queries by Gamma_i = exp(G_i)
and keys by 1/Gamma_j = exp(-G_j), where G_i is the cumulative log-decay since
the start of the tile. If every step decays at the floor g_min, the largest
reciprocal is exp(|g_min| * L). BF16 keeps float32's 8-bit exponent, so its
largest finite value is (2 - 2**-7) * 2**127 ~ 3.39e38, whose natural log is
~ 88.72. The tile fits when |g_min| * L <= ln(BF16_MAX).

The second half of the module is the overflow-safe way to form those
Gamma-scaled products in a given dtype (decay_gram), which
kernels.kda.chunkwise uses.
"""
import math

import ml_dtypes
import numpy as np

BF16 = ml_dtypes.bfloat16
BF16_MAX = float(ml_dtypes.finfo(BF16).max)  # (2 - 2**-7) * 2**127
BF16_MAX_LOG = math.log(BF16_MAX)  # ~ 88.7189
LN10 = math.log(10.0)
LN2 = math.log(2.0)


def round_bf16(x):
    """Return x rounded to the nearest bfloat16 (ties to even), as a float32 array.

    Done by hand on the float32 bit pattern (after first rounding to float32,
    as a float32 accumulator would): add 0x7FFF plus the lowest kept bit, then
    clear the low 16 bits. Overflow carries into the exponent and gives inf.
    """
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = bits.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, out)


_NO_TILE = object()


def _check(g_min, tile=_NO_TILE):
    """Raise ValueError unless g_min is finite and negative and tile (when given) a positive int."""
    number = isinstance(g_min, (int, float, np.integer, np.floating)) and not isinstance(g_min, (bool, np.bool_))
    if not (number and math.isfinite(g_min) and g_min < 0):
        raise ValueError(f"g_min must be a finite negative number; got {g_min!r}")
    if tile is not _NO_TILE and (isinstance(tile, (bool, np.bool_))
                             or not isinstance(tile, (int, np.integer)) or tile < 1):
        raise ValueError(f"tile must be a positive integer; got {tile!r}")


def worst_log_decay(g_min, tile):
    """Return |g_min| * tile, the largest cumulative log-decay inside one tile (nats)."""
    _check(g_min, tile)
    return abs(float(g_min)) * int(tile)


def reciprocal_bound(g_min, tile):
    """Return exp(|g_min| * tile), the largest 1/Gamma in a tile (inf past float64)."""
    x = worst_log_decay(g_min, tile)
    return math.exp(x) if x < 709.0 else float("inf")


def margin_nats(g_min, tile):
    """Return ln(BF16_MAX) - |g_min| * tile; negative means the tile overflows."""
    return BF16_MAX_LOG - worst_log_decay(g_min, tile)


def fits(g_min, tile):
    """Return True when exp(|g_min| * tile) is at most BF16's largest finite value."""
    return margin_nats(g_min, tile) >= 0.0


def largest_safe_tile(g_min):
    """Return the largest tile length L with |g_min| * L <= ln(BF16_MAX)."""
    _check(g_min)
    tile = int(BF16_MAX_LOG // abs(float(g_min)))
    while tile > 0 and not fits(g_min, tile):
        tile -= 1
    while fits(g_min, tile + 1):
        tile += 1
    return tile


def reciprocal_profile_bf16(g_min, tile):
    """Return 1/Gamma at positions 1..tile computed in bfloat16 (float32 array, inf on overflow).

    Worst case: every step decays at g_min. The cumulative sum and the
    exponential are both done in bfloat16, each result rounded, as a BF16
    kernel would.
    """
    _check(g_min, tile)
    steps = np.full(int(tile), g_min, dtype=np.float32).astype(BF16)
    gam = np.cumsum(steps)  # ml_dtypes rounds every partial sum to bfloat16
    with np.errstate(over="ignore"):
        return np.exp(-gam).astype(np.float32)


def dense_tile_bf16(q, k, g):
    """Return the intra-tile matrix M (L, L) computed densely in bfloat16, lower triangle kept.

    q, k, g: (L, d_k), g the per-token log-decay. With G = cumsum(g) from the
    tile start, M[i, j] = sum_c (q[i,c] e^{G[i,c]}) (k[j,c] e^{-G[j,c]}) for
    j <= i, the way a fast kernel does it: G, both scaled operands and the
    result rounded to bfloat16, the product accumulated in float32. When
    e^{-G} overflows the result holds inf or NaN.
    """
    q, k, g = (np.asarray(x, np.float32).astype(BF16) for x in (q, k, g))
    gam = np.cumsum(g, axis=0)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        qs = (q * np.exp(gam)).astype(np.float32)
        ks = (k * np.exp(-gam)).astype(np.float32)
        m = round_bf16(qs @ ks.T)
    lower = np.tril(np.ones(m.shape, dtype=bool))
    return np.where(lower, m, np.float32(0.0))


def safe_tile(q, k, g):
    """Return the same lower-triangular M (L, L) evaluated in log space (float64, always finite).

    M[i, j] = sum_c q[i,c] k[j,c] exp(G[i,c] - G[j,c]) for j <= i; the exponent
    is never positive there, so nothing can overflow.
    """
    q, k, g = (np.asarray(x, np.float64) for x in (q, k, g))
    gam = np.cumsum(g, axis=0)
    diff = gam[:, None, :] - gam[None, :, :]
    lower = np.tril(np.ones(diff.shape[:2], dtype=bool))
    decay = np.exp(np.where(lower[..., None], diff, -np.inf))
    return np.einsum("ic,jc,ijc->ij", q, k, decay)


def tile_log10_reciprocal(g):
    """Return the largest log10(1/Gamma) inside one tile, from g (L, d_k) in float64."""
    gam = np.cumsum(np.asarray(g, np.float64), axis=0)
    return float(-gam.min() / LN10) if gam.size else 0.0


def verdict(g_min, tile):
    """Return one plain sentence saying whether a tile fits in BF16 and by how much."""
    worst, margin = worst_log_decay(g_min, tile), margin_nats(g_min, tile)
    if margin >= 0:
        return (f"fits: {worst:.4g} nats of decay stay {margin:.3g} nats "
                f"under BF16's ceiling of {BF16_MAX_LOG:.2f}")
    return (f"overflows: {worst:.4g} nats of decay exceed BF16's ceiling of "
            f"{BF16_MAX_LOG:.2f} by {-margin:.3g} nats")


def analyse(g_min, tile):
    """Return a JSON-able dict: the tile's bound, BF16's ceiling, the margin, a verdict, per-position values.

    Keys: g_min, tile, worst_log_decay (|g_min| * tile), reciprocal_bound
    (e^worst, inf only past float64's range) and reciprocal_bound_log10,
    bf16_max, bf16_max_log, bf16_max_log10, margin_nats and margin_bits
    (negative when the tile overflows), fits, largest_safe_tile, verdict, and
    positions: for i = 1..tile, {position, log10_reciprocal (exact, every step
    at g_min), bf16_finite (whether 1/Gamma computed in bfloat16 is finite)}.
    """
    _check(g_min, tile)
    worst = worst_log_decay(g_min, tile)
    margin = margin_nats(g_min, tile)
    profile = reciprocal_profile_bf16(g_min, tile)
    positions = [
        {"position": i + 1,
         "log10_reciprocal": abs(float(g_min)) * (i + 1) / LN10,
         "bf16_finite": bool(np.isfinite(profile[i]))}
        for i in range(int(tile))
    ]
    return {
        "g_min": float(g_min),
        "tile": int(tile),
        "worst_log_decay": worst,
        "reciprocal_bound": reciprocal_bound(g_min, tile),
        "reciprocal_bound_log10": worst / LN10,
        "bf16_max": BF16_MAX,
        "bf16_max_log": BF16_MAX_LOG,
        "bf16_max_log10": math.log10(BF16_MAX),
        "margin_nats": margin,
        "margin_bits": margin / LN2,
        "fits": fits(g_min, tile),
        "largest_safe_tile": largest_safe_tile(g_min),
        "verdict": verdict(g_min, tile),
        "positions": positions,
    }


def jsonable(obj):
    """Return a copy of obj safe for strict JSON: non-finite floats become "inf", "-inf" or "nan"."""
    if isinstance(obj, dict):
        return {str(key): jsonable(val) for key, val in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(val) for val in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))
    return obj


def span_report(q, k, g, tile=16):
    """Return {max_log10_reciprocal, bf16_dense_finite} over the tiles of a span of tokens.

    q, k, g: (T, d_k), cut into tiles of ``tile`` tokens (the last may be
    shorter). max_log10_reciprocal is the largest log10(1/Gamma) in any tile;
    bf16_dense_finite says whether dense_tile_bf16 stays finite on all of them.
    """
    bounds = [(lo, min(lo + tile, len(g))) for lo in range(0, len(g), tile)]
    return {
        "max_log10_reciprocal": max(tile_log10_reciprocal(g[a:b]) for a, b in bounds),
        "bf16_dense_finite": all(bool(np.isfinite(dense_tile_bf16(q[a:b], k[a:b], g[a:b])).all())
                                 for a, b in bounds),
    }


# Overflow-safe Gamma-scaled products, used by kernels.kda.chunkwise.


def _limit(dtype):
    """Largest |exponent| allowed on either side of a factorised product, so both sides stay finite."""
    return 0.5 * np.log(np.finfo(dtype).max) - 2.0


def _span(g):
    """Largest |g - g_mid| along axis -2 of g (..., L, d); g never increases along that axis."""
    mid = g[..., g.shape[-2] // 2, :]
    return max((g[..., 0, :] - mid).max(), (mid - g[..., -1, :]).max())


def _put_diagonal(out, blocks, size):
    """Write blocks (s, m, n, size, size) onto the diagonal blocks of out (s, m, n*size, n*size)."""
    s, m, n = blocks.shape[:3]
    idx = np.arange(n)
    out.reshape(s, m, n, size, n, size)[:, :, idx, :, idx, :] = blocks.transpose(2, 0, 1, 3, 4)


def _fill_gram(out, a, b, gam, tile):
    """decay_gram's M when even one tile's decay is too steep to factorise; a is (s, m, C, d).

    C is tile * 2**k. The chunk is halved again and again: the lower-left
    quarter of each block measures queries and keys from the last key row of its
    upper half, so every factor is <= 1. The diagonal tiles are summed in log space.
    """
    s, m, c, d = a.shape
    half = c // 2
    while half >= tile:
        n = c // (2 * half)
        g = gam.reshape(m, n, 2, half, d)
        ref = g[:, :, 0, -1:]  # log-decay at the last row of each upper half
        rows = a.reshape(s, m, n, 2, half, d)[:, :, :, 1] * np.exp(g[:, :, 1] - ref)
        cols = b.reshape(m, n, 2, half, d)[:, :, 0] * np.exp(ref - g[:, :, 0])
        idx = np.arange(n)
        out.reshape(s, m, n, 2, half, n, 2, half)[:, :, idx, 1, :, idx, 0, :] = \
            (rows @ cols.swapaxes(-1, -2)).transpose(2, 0, 1, 3, 4)
        half //= 2
    n = c // tile
    g, al, bl = gam.reshape(m, n, tile, d), a.reshape(s, m, n, tile, d), b.reshape(m, n, tile, d)
    diff = g[:, :, :, None, :] - g[:, :, None, :, :]
    lower = np.tril(np.ones((tile, tile), dtype=bool))[..., None]
    decay = np.exp(np.where(lower, diff, -np.inf))
    _put_diagonal(out, np.einsum("smnic,mnjc,mnijc->smnij", al, bl, decay), tile)


def _one_reference(a, b, gam, tile, scratch, work):
    """decay_gram with one mid-chunk reference for every pair, the products formed in dtype work."""
    m, c, _ = gam.shape
    dtype = gam.dtype
    mid = gam[:, c // 2, None].astype(work)
    e = scratch("e", gam.shape, work)
    np.exp(np.subtract(gam, mid, out=e), out=e)
    scaled = scratch("scaled", (len(a),) + gam.shape, work)
    for h, x in enumerate(a):
        np.multiply(x, e, out=scaled[h])
    keys = np.divide(b, e, out=scratch("keys", gam.shape, work)).swapaxes(-1, -2)
    gram = scratch("gram", (len(a), m, c, c), dtype)
    for lo in range(0, c, tile):  # one row of tiles at a time: blocks above the diagonal are skipped
        hi = lo + tile
        np.matmul(scaled[:, :, lo:hi], keys[..., :hi], out=gram[:, :, lo:hi, :hi])
    from_start = np.multiply(e, np.exp(mid), out=scratch("from_start", gam.shape, dtype))
    return gram, from_start, np.divide(np.exp(gam[:, -1:] - mid), e, out=scratch("to_end", gam.shape, dtype))


def _tile_references(a, b, gam, tile, scratch):
    """decay_gram measuring each row of tiles from the middle of its own query tile.

    With mid_p the log-decay in the middle of tile p, a query in tile p gets
    e^(G_i - mid_p) and a key in tile q <= p gets e^(mid_q - G_j) * e^(mid_p - mid_q):
    the last factor is <= 1, the first two at most e^(span/2) of one tile.
    """
    m, c, d = gam.shape
    p = c // tile
    gt = gam.reshape(m, p, tile, d)
    mid = gt[:, :, tile // 2]
    e = scratch("e", gt.shape)
    np.exp(np.subtract(gt, mid[:, :, None], out=e), out=e)
    scaled = scratch("scaled", (len(a), m, c, d))
    for h, x in enumerate(a):
        np.multiply(x, e.reshape(m, c, d), out=scaled[h])
    keys = np.divide(b.reshape(m, p, tile, d), e, out=scratch("keys", gt.shape))
    bridge = np.exp(np.minimum(mid[:, :, None] - mid[:, None], 0.0))[..., None, :]  # (m, p, q, 1, d)
    gram = scratch("gram", (len(a), m, c, c))
    for i in range(p):
        lo, hi = i * tile, (i + 1) * tile
        kp = np.multiply(keys[:, :i + 1], bridge[:, i, :i + 1], out=scratch("kp", (m, i + 1, tile, d)))
        np.matmul(scaled[:, :, lo:hi], kp.reshape(m, hi, d).swapaxes(-1, -2), out=gram[:, :, lo:hi, :hi])
    from_start = np.multiply(e, np.exp(mid)[:, :, None], out=scratch("from_start", gt.shape))
    to_end = np.divide(np.exp(gam[:, -1:] - mid)[:, :, None], e, out=scratch("to_end", gt.shape))
    return gram, from_start.reshape(m, c, d), to_end.reshape(m, c, d)


def decay_gram(a, b, gam, tile=16, scratch=None):
    """Return (M, e^gam, e^(gam_last - gam)), M the decay-weighted products of a with b.

    a: a sequence of s arrays (m, C, d); b, gam: (m, C, d), where C = tile * 2**k
    and gam is the cumulative log-decay from the chunk start (never increasing
    along C). M has shape (s, m, C, C) with
        M[h, :, i, j] = sum_c a[h][:, i, c] b[:, j, c] exp(gam[:, i, c] - gam[:, j, c])
    for j <= i: the Gamma-scaled a times the 1/Gamma-scaled b. Only that lower
    triangle is written. The first of these that fits the dtype's exponent range
    is used: one mid-chunk reference; one reference per tile of queries; one
    mid-chunk reference in float64 (rounded back); halving (_fill_gram).
    scratch, if given, is a callable (name, shape, dtype=None) -> array for the
    big buffers. Results have gam's dtype.
    """
    scratch = scratch or (lambda name, shape, dtype=None: np.empty(shape, dtype or gam.dtype))
    m, c, d = gam.shape
    span, dtype = _span(gam), gam.dtype
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):  # the unused upper triangle may blow up
        if span <= _limit(dtype):
            return _one_reference(a, b, gam, tile, scratch, dtype)
        if _span(gam.reshape(m, c // tile, tile, d)) <= _limit(dtype):
            return _tile_references(a, b, gam, tile, scratch)
        if span <= _limit(np.float64):
            return _one_reference(a, b, gam, tile, scratch, np.dtype(np.float64))
        gram = scratch("gram", (len(a), m, c, c))
        _fill_gram(gram, np.stack(a), b, gam, tile)
        return gram, np.exp(gam), np.exp(gam[:, -1:] - gam)
