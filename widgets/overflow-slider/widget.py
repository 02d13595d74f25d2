"""Overflow slider: the largest 1/Γ in one tile against BF16's ceiling, from kernels.overflow.

The build runs run() in CPython for every (g_min, tile) on the sliders' grid; the browser runs
this same file in Pyodide when the learner asks for live Python.
"""
import math

from kernels import overflow

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sci(x):
    """Return x as 'm × 10ⁿ' with three significant figures."""
    exponent = math.floor(math.log10(abs(x)))
    mantissa = x / 10 ** exponent
    if round(mantissa, 2) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.2f} × 10{str(exponent).translate(SUPERSCRIPT)}"


def num(x):
    """Return a number with at most two decimals and no trailing zeros."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def run(g_min, tile):
    """Return what the widget shows for one decay floor and tile length."""
    a = overflow.analyse(g_min, tile)
    exact = [p["log10_reciprocal"] for p in a["positions"]]
    overflowing = [p["position"] for p in a["positions"] if not p["bf16_finite"]]
    sign = "+" if a["margin_nats"] >= 0 else "−"
    chart = (f"log₁₀(1/Γ) climbs from {num(exact[0])} at position 1 to {num(exact[-1])} at position "
             f"{tile}; BF16's ceiling is {num(a['bf16_max_log10'])}. ")
    chart += (f"Positions {overflowing[0]} to {tile} overflow in BF16." if overflowing
              else "Every position stays finite in BF16.")
    return {
        "g_min": a["g_min"], "tile": a["tile"], "fits": a["fits"], "verdict": a["verdict"],
        "worst_log_decay": a["worst_log_decay"], "margin_nats": round(a["margin_nats"], 4),
        "largest_safe_tile": a["largest_safe_tile"],
        "log10": [round(x, 1) for x in exact],  # a bar's height: a tenth is finer than a pixel
        "finite": "".join("1" if p["bf16_finite"] else "0" for p in a["positions"]),
        "ceiling_log10": round(a["bf16_max_log10"], 3),
        "product_text": f"{num(abs(a['g_min']))} × {tile} = {num(a['worst_log_decay'])} nats",
        "bound_text": sci(a["reciprocal_bound"]),
        "ceiling_text": f"{sci(a['bf16_max'])} (ln ≈ {num(a['bf16_max_log'])})",
        "margin_text": f"{sign}{num(abs(a['margin_nats']))} nats ({sign}{num(abs(a['margin_bits']))} bits)",
        "chart_text": chart,
    }
