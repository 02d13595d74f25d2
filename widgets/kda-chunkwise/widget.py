"""Chunkwise KDA demo: kernels.kda.demo run on seeded inputs, reported chunk by chunk.

The build runs run() in CPython for the page's parameters (both gates, every chunk size); the
browser runs this same file in Pyodide, and only there are the timings shown.
"""
import math

from kernels import kda

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
AGREE = 1e-9  # differences below this are floating-point rounding, not a different result


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
    chunks = [{"index": c["index"], "start": c["start"], "end": c["end"],
               "state_norm": round(c["state_norm"], 3),
               "max_log10_reciprocal": round(c["max_log10_reciprocal"], 2),
               "bf16_dense_finite": c["bf16_dense_finite"]} for c in d["chunks"]]
    broken = sum(not c["bf16_dense_finite"] for c in chunks)
    same = d["max_abs_diff"] < AGREE
    return {
        "max_abs_diff": d["max_abs_diff"], "diff_text": sci(d["max_abs_diff"]),
        "equal_text": ("Both forms give the same outputs: the largest difference is "
                       if same else "The two forms disagree: the largest difference is ")
                      + sci(d["max_abs_diff"]) + ".",
        "chunks": chunks, "ceiling_log10": round(d["bf16_max_log10"], 2),
        "tiles_text": (f"{broken} of {len(chunks)} chunks hold a 16-token tile whose dense BF16 "
                       "product turns into inf or NaN." if broken else
                       f"All {len(chunks)} chunks keep their dense BF16 tiles finite."),
        "recurrent_ms": round(d["recurrent_ms"], 2), "chunkwise_ms": round(d["chunkwise_ms"], 2),
        "timing_text": (f"In this browser the recurrence took {d['recurrent_ms']:.1f} ms and the "
                        f"chunkwise form {d['chunkwise_ms']:.1f} ms."),
    }
