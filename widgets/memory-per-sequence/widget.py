"""Memory per sequence: what standard attention, MLA and KDA keep for one sequence, from kernels.sizes.

Every number starts as an exact integer byte count. Texts divide by powers of 1,024 (one correctly
rounded division), chart heights use decimal's correctly rounded log10, and the ratio is a
Fraction, so the same bytes come out on every machine and in Pyodide.
"""
from decimal import Decimal
from fractions import Fraction

from kernels import sizes

CONTEXTS = ("8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M")
UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB")
CHART_TOP = 14  # log10(bytes) at the top edge of the chart; the bottom edge is 6


def tokens(context):
    """Return the number of tokens in a context length written like '64K' or '1M' (K = 1,024)."""
    scale = {"K": 1024, "M": 1024 ** 2}[context[-1]]
    return int(context[:-1]) * scale


def binary(n):
    """Return a byte count in the largest binary unit that keeps it at 1 or more, to three figures."""
    power = 0
    while power + 1 < len(UNITS) and n >= 1024 ** (power + 1):
        power += 1
    value = n / 1024 ** power
    text = f"{value:.{0 if value >= 100 else 1 if value >= 10 else 2}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} {UNITS[power]}" if power else f"{n:,} bytes"


def height(n):
    """Return the chart's y for n bytes: tenths below the top, from log10 correctly rounded."""
    return (CHART_TOP - Decimal(n).log10()).quantize(Decimal("0.1")) * 10


def points(values):
    """Return SVG polyline points, one per context length, 10 units apart."""
    return " ".join(f"{10 * i},{height(v):.0f}" for i, v in enumerate(values))


def memory(context, head_dim, latent_dim, bytes_per_value):
    """Return kernels.sizes.sequence_memory for K3's layer counts and the assumed sizes."""
    return sizes.sequence_memory(tokens(context), heads=sizes.K3_HEADS, head_dim=head_dim,
                                 latent_dim=latent_dim, kda_layers=sizes.K3_KDA_LAYERS,
                                 mla_layers=sizes.K3_MLA_LAYERS, bytes_per_value=bytes_per_value)


def run(context, head_dim, latent_dim, bytes_per_value):
    """Return what the widget shows for one context length and one set of assumed sizes."""
    m = memory(context, head_dim, latent_dim, bytes_per_value)
    curve = [memory(c, head_dim, latent_dim, bytes_per_value) for c in CONTEXTS]
    ratio = Fraction(m["attention"], m["hybrid"])
    times = f"{round(ratio):,}" if ratio >= 10 else f"{float(round(ratio, 1)):.1f}"
    layers = sizes.K3_LAYERS
    return {
        "layers": layers, "kda_layers": sizes.K3_KDA_LAYERS, "mla_layers": sizes.K3_MLA_LAYERS,
        "tokens": m["seq_len"], "tokens_text": f"{m['seq_len']:,} tokens",
        "attention_bytes": m["attention"], "mla_bytes": m["mla"], "kda_bytes": m["kda"],
        "hybrid_bytes": m["hybrid"],
        "attention_text": binary(m["attention"]), "mla_text": binary(m["mla"]),
        "kda_text": binary(m["kda"]), "hybrid_text": binary(m["hybrid"]),
        "attention_token_text": binary(m["attention"] // m["seq_len"]),
        "mla_token_text": binary(m["mla"] // m["seq_len"]),
        "kda_token_text": "0 bytes: the state keeps its size",
        "verdict": (f"At {context} tokens, K3's mix holds {binary(m['hybrid'])}: {times} times less "
                    f"than standard attention in all {layers} layers ({binary(m['attention'])})."),
        "assumptions_text": (f"Assumed: {sizes.K3_HEADS} heads, each keeping a key and a value in standard "
                             f"attention; head dimension {head_dim}, also KDA's d_k and d_v; an MLA latent "
                             f"of {latent_dim} values per token; {bytes_per_value} "
                             f"byte{'s' if bytes_per_value > 1 else ''} per value."),
        "attention_points": points([c["attention"] for c in curve]),
        "mla_points": points([c["mla"] for c in curve]),
        "kda_points": points([c["kda"] for c in curve]),
        "marker_x": 10 * CONTEXTS.index(context),
        "chart_text": (f"From {CONTEXTS[0]} to {CONTEXTS[-1]} tokens, standard attention grows from "
                       f"{binary(curve[0]['attention'])} to {binary(curve[-1]['attention'])} and MLA's latent "
                       f"cache from {binary(curve[0]['mla'])} to {binary(curve[-1]['mla'])}, each doubling "
                       f"with the length; KDA's state stays at {binary(curve[0]['kda'])}."),
    }
