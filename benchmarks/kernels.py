"""Wall time and peak memory of kernels.kda.recurrent against kernels.kda.chunkwise.

Run from the repository root:

    python benchmarks/kernels.py [--sizes 256 1024 4096 16384] [--chunk-size 64] [--repeats 5]

For each dtype and sequence length T (d_k = d_v = 64, one head) it times both
forms in the same run, interleaved, and keeps each one's best wall time (and,
as a check on a busy machine, best CPU time). It prints their ratios, the
largest relative difference between their outputs, and the peak memory
tracemalloc sees numpy allocate during one call (total and per token, to show
that it grows linearly with T). BLAS runs single-threaded unless
--blas-threads says otherwise, so the ratio measures the algorithms rather than
thread scheduling.
"""

import argparse
import os
import sys
import time
import tracemalloc

D_K = D_V = 64
TARGET_T, TARGET_RATIO = 4096, 5.0


def parse(argv):
    """Return the command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096, 16384])
    parser.add_argument("--chunk-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per form (fewer for long T)")
    parser.add_argument("--blas-threads", type=int, default=1)
    return parser.parse_args(argv)


def make_inputs(np, T, dtype, seed=0):
    """Return (q, k, v, g, beta): unit-norm keys, decays from -5 to -0.005, beta in (0, 1)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((T, D_K))
    k = rng.standard_normal((T, D_K))
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    v = rng.standard_normal((T, D_V))
    g = -rng.uniform(0.005, 5.0, (T, D_K))
    beta = rng.uniform(0.0, 1.0, T)
    return tuple(x.astype(dtype) for x in (q, k, v, g, beta))


def best_times(forms, inputs, repeats):
    """Return {name: (best wall ms, best CPU ms, last output)}, calling the forms in turn."""
    best = {name: (float("inf"), float("inf"), None) for name in forms}
    for _ in range(repeats):
        for name, fn in forms.items():
            wall, cpu = time.perf_counter(), time.process_time()
            out = fn(*inputs)[0]
            wall, cpu = 1000.0 * (time.perf_counter() - wall), 1000.0 * (time.process_time() - cpu)
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu), out)
    return best


def peak_mib(fn, inputs, release):
    """Return the peak traced allocation in MiB during one call (scratch buffers included)."""
    release()
    tracemalloc.start()
    fn(*inputs)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def main(argv=None):
    args = parse(argv)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.blas_threads)  # read when numpy loads BLAS, so before the import
    import numpy as np

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from kernels import kda

    forms = {"recurrent": kda.recurrent, "chunkwise": lambda *a: kda.chunkwise(*a, chunk_size=args.chunk_size)}
    print(f"d_k = d_v = {D_K}, chunk_size = {args.chunk_size}, BLAS threads = {args.blas_threads}")
    print(
        f"{'dtype':>8} {'T':>6} {'recurrent ms':>13} {'chunkwise ms':>13} {'ratio':>7} {'CPU ratio':>10}"
        f" {'max rel diff':>13} {'rec MiB':>8} {'chunk MiB':>10} {'rec KiB/tok':>12} {'chunk KiB/tok':>14}"
    )
    verdicts = []
    for dtype in (np.float32, np.float64):
        for T in args.sizes:
            inputs = make_inputs(np, T, dtype)
            best = best_times(forms, inputs, max(1, args.repeats if T <= 4096 else args.repeats // 2))
            (rec_ms, rec_cpu, o_rec), (chunk_ms, chunk_cpu, o_chunk) = best["recurrent"], best["chunkwise"]
            diff = float(np.abs(o_rec - o_chunk).max() / np.abs(o_rec).max())
            mem = {name: peak_mib(fn, inputs, kda.release_workspace) for name, fn in forms.items()}
            print(
                f"{np.dtype(dtype).name:>8} {T:>6} {rec_ms:>13.1f} {chunk_ms:>13.1f} {rec_ms / chunk_ms:>6.1f}x"
                f" {rec_cpu / max(chunk_cpu, 1e-9):>9.1f}x {diff:>13.1e}"
                f" {mem['recurrent']:>8.1f} {mem['chunkwise']:>10.1f}"
                f" {1024 * mem['recurrent'] / T:>12.1f} {1024 * mem['chunkwise'] / T:>14.1f}"
            )
            if T == TARGET_T:
                verdicts.append(f"{np.dtype(dtype).name}: {rec_ms / chunk_ms:.1f}x at T = {T}")
    if verdicts:
        print(f"target: chunkwise at least {TARGET_RATIO:g}x faster at T = {TARGET_T}; measured " + ", ".join(verdicts))


if __name__ == "__main__":
    main()
