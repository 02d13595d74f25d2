"""Wall time and peak memory of kernels.kda.recurrent versus kernels.kda.chunkwise.

Run from the repository root:  python benchmarks/kernels.py [--sizes 256 1024 ...]
Peak memory is what tracemalloc sees numpy allocate during one call.
"""
import argparse
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kernels import kda  # noqa: E402

D_K = D_V = 64


def make_inputs(T, dtype, seed=0):
    """Return (q, k, v, g, beta) with unit-norm keys and bounded-gate-like decays."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((T, D_K))
    k = rng.standard_normal((T, D_K))
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    v = rng.standard_normal((T, D_V))
    g = -rng.uniform(0.005, 5.0, (T, D_K))
    beta = rng.uniform(0.0, 1.0, T)
    return tuple(x.astype(dtype) for x in (q, k, v, g, beta))


def best_time(fn, args, repeats):
    """Return (best wall time in ms, last result) over the given number of calls."""
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn(*args)
        best = min(best, time.perf_counter() - start)
    return 1000.0 * best, out


def peak_mib(fn, args):
    """Return the peak traced allocation in MiB during one call."""
    tracemalloc.start()
    fn(*args)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096, 16384])
    parser.add_argument("--chunk-size", type=int, default=64)
    args = parser.parse_args(argv)
    chunk = lambda *a: kda.chunkwise(*a, chunk_size=args.chunk_size)
    print(f"d_k = d_v = {D_K}, chunk_size = {args.chunk_size}")
    print(f"{'dtype':>8} {'T':>6} {'recurrent ms':>13} {'chunkwise ms':>13} {'ratio':>7}"
          f" {'rec MiB':>8} {'chunk MiB':>9} {'chunk KiB/token':>15} {'max rel diff':>12}")
    for dtype in (np.float32, np.float64):
        for T in args.sizes:
            inputs = make_inputs(T, dtype)
            rec_ms, (o_rec, _) = best_time(kda.recurrent, inputs, 1 if T > 4096 else 3)
            chunk_ms, (o_chunk, _) = best_time(chunk, inputs, 5)
            rec_mem, chunk_mem = peak_mib(kda.recurrent, inputs), peak_mib(chunk, inputs)
            diff = float(np.abs(o_rec - o_chunk).max() / np.abs(o_rec).max())
            print(f"{np.dtype(dtype).name:>8} {T:>6} {rec_ms:>13.1f} {chunk_ms:>13.1f}"
                  f" {rec_ms / chunk_ms:>6.1f}x {rec_mem:>8.1f} {chunk_mem:>9.1f}"
                  f" {1024 * chunk_mem / T:>15.1f} {diff:>12.1e}")


if __name__ == "__main__":
    main()
