"""BF16 floors: for one tile length, each decay floor's worst tile against BF16's ceiling, from kernels.overflow.

Returns a mapping of mappings, which the theme shows as a table: one row per floor, one column per
inner key. The build runs run() in CPython for every tile length on the slider; the browser runs
this same file in Pyodide when the learner asks for live Python.
"""
from kernels import overflow

FLOORS = range(-1, -11, -1)  # the whole-number floors from -1 to -10 nats per token
K3_FLOOR = -5


def run(tile):
    """Return {floor: {column: text}} for one tile length."""
    rows = {}
    for g_min in FLOORS:
        margin = overflow.margin_nats(g_min, tile)
        label = f"g_min = −{abs(g_min)}" + (" (K3)" if g_min == K3_FLOOR else "")
        rows[label] = {
            "worst decay (nats)": f"{overflow.worst_log_decay(g_min, tile):.0f}",
            "margin (nats)": f"{'+' if margin >= 0 else '−'}{abs(margin):.2f}",
            "fits in BF16": "yes" if overflow.fits(g_min, tile) else "no",
            "longest tile that fits (tokens)": str(overflow.largest_safe_tile(g_min)),
        }
    return rows
