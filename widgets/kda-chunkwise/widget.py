"""Chunkwise KDA demo: kernels.kda.demo run on seeded inputs, reported chunk by chunk.

The build runs run() in CPython for the page's parameters (both gates, every chunk size); the
browser runs this same file in Pyodide, and only there are the timings and the exact difference
shown: both depend on the machine (its BLAS, CPU and threads), and the page must not.
"""
import math

import numpy as np

from kernels import kda

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
# The two forms round differently: on these inputs (outputs of order 1) they differ by at most
# about 25 float64 epsilons (5e-15 at T = 1024, chunk size 128). The bound is 4096 epsilons
# written as the power of ten above it, 10⁻¹²: two hundred times that round-off, so whether the
# forms agree is the same on every machine, while a wrong kernel misses it by far more.
AGREE_EXPONENT = math.ceil(math.log10(4096 * np.finfo(np.float64).eps))
AGREE = 10.0 ** AGREE_EXPONENT


def sci(x):
    """Return x as 'm × 10ⁿ' with two significant figures (or '0')."""
    if x == 0:
        return "0"
    exponent = math.floor(math.log10(abs(x)))
    mantissa = round(x / 10 ** exponent, 1)
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.1f} × 10{str(exponent).translate(SUPERSCRIPT)}"


def run(T, chunk_size, gate, g_min, seed):
    """Return what the widget shows for one sequence length, chunk size, gate, floor and seed."""
    d = kda.demo(T, chunk_size, gate, g_min, seed)
    # Round-off moves a state norm or a log-decay by about 1e-15 of itself; rounded to 3 and 2
    # decimals they could change only at that distance from a rounding tie (tests/widgets checks
    # that the page's states keep clear of ties by a millionfold more).
    chunks = [{"index": c["index"], "start": c["start"], "end": c["end"],
               "state_norm": round(c["state_norm"], 3),
               "max_log10_reciprocal": round(c["max_log10_reciprocal"], 2),
               "bf16_dense_finite": c["bf16_dense_finite"]} for c in d["chunks"]]
    broken = sum(not c["bf16_dense_finite"] for c in chunks)
    agree = d["max_abs_diff"] <= AGREE
    bound = "10" + str(AGREE_EXPONENT).translate(SUPERSCRIPT)
    return {
        # Whether the forms agree and the bound, never the difference: the same on every machine.
        "agree": agree, "agree_bound": AGREE,
        "equal_text": (f"Both forms give the same outputs: none differs by more than {bound}." if agree
                       else f"The two forms disagree: some output differs by more than {bound}."),
        "chunks": chunks, "ceiling_log10": round(d["bf16_max_log10"], 2),
        "tiles_text": (f"{broken} of {len(chunks)} chunks hold a 16-token tile whose dense BF16 "
                       "product turns into inf or NaN." if broken else
                       f"All {len(chunks)} chunks keep their dense BF16 tiles finite."),
        # Live only (spec.yaml): round-off and timings of this machine.
        "max_abs_diff": d["max_abs_diff"], "diff_text": sci(d["max_abs_diff"]),
        "recurrent_ms": round(d["recurrent_ms"], 2), "chunkwise_ms": round(d["chunkwise_ms"], 2),
        "measured_text": (f"In this browser the largest difference is {sci(d['max_abs_diff'])}; the "
                          f"recurrence took {d['recurrent_ms']:.1f} ms and the chunkwise form "
                          f"{d['chunkwise_ms']:.1f} ms."),
    }
