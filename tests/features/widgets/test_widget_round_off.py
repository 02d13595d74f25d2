"""Every number the sample course bakes into a widget stays put under round-off.

BLAS kernels, numpy's SIMD paths and libm move a float64 result by a few units in its last place
(about 1e-15 of it) from one machine to another. A rounded value can change only if the exact one
lies that close to a rounding tie, and a BF16 verdict only if a value lies that close to a BF16
rounding step or to BF16's ceiling. These tests recompute the raw values behind every baked state
and require each to keep a millionfold more room than round-off needs, so no machine can show
other digits. (tests/test_determinism.py builds the site under several such machines' settings.)
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from widget_pages import figure_states

from coursegen.pipeline import build_site
from kernels import kda, overflow

ROOM = 1e-6  # least distance from a rounding tie, in units of the last digit shown (round-off: ~1e-12)


def room(x: float, decimals: int) -> float:
    """Return how far x lies from the nearest tie of rounding to `decimals`, in units of that digit."""
    scaled = abs(x) * 10.0**decimals
    return abs(scaled - math.floor(scaled) - 0.5)


def significant(x: float, figures: int) -> int:
    """Return the decimals that `figures` significant figures of x show."""
    return figures - 1 - math.floor(math.log10(abs(x))) if x else 0


@pytest.fixture(scope="module")
def sequence_axis(tmp_path_factory):
    from helpers import REPO, copy_course

    course = copy_course(REPO, tmp_path_factory.mktemp("round-off") / "course")
    return build_site(course).outputs["sequence-axis.html"].decode()


def test_the_overflow_sliders_numbers_keep_clear_of_rounding_ties():
    shown = {
        "BF16 max, ln (.2f)": (overflow.BF16_MAX_LOG, 2),
        "BF16 max, log10 (.2f, .3f)": (math.log10(overflow.BF16_MAX), 3),
        "BF16 max (sci)": (overflow.BF16_MAX, significant(overflow.BF16_MAX, 3)),
    }
    for g_min in np.arange(-10, -0.5, 0.5):
        for tile in range(4, 65, 4):
            a = overflow.analyse(float(g_min), tile)
            margin = a["margin_nats"]
            shown |= {
                f"margin {g_min}/{tile}": (margin, 4),
                f"margin bits {g_min}/{tile}": (a["margin_bits"], 2),
                f"margin .3g {g_min}/{tile}": (margin, significant(margin, 3)),
                f"bound {g_min}/{tile}": (a["reciprocal_bound"], significant(a["reciprocal_bound"], 3)),
            }
            for p in a["positions"]:  # bar heights to one decimal, the chart's words to two
                shown[f"log10 {g_min}/{tile}/{p['position']}"] = (p["log10_reciprocal"], 1)
                shown[f"log10 .2f {g_min}/{tile}/{p['position']}"] = (p["log10_reciprocal"], 2)
    tight = {name: room(x, d) for name, (x, d) in shown.items() if room(x, d) < ROOM}
    assert tight == {}


def bf16_steps_hold(x: np.ndarray) -> bool:
    """True when x moved two float64 units either way still rounds to the same BF16 values."""
    bf16 = lambda y: np.asarray(y, np.float32).astype(ml_dtypes.bfloat16)
    nudged = [x, np.nextafter(np.nextafter(x, np.inf), np.inf), np.nextafter(np.nextafter(x, -np.inf), -np.inf)]
    rounded = [bf16(y).view(np.uint16) for y in nudged]
    return all(np.array_equal(rounded[0], r) for r in rounded[1:])


def dense_verdict_is_clear(q, k, g) -> bool:
    """True when dense_tile_bf16's finite-or-not verdict does not hang on round-off.

    Finite: the float32 product stays under half BF16's ceiling, so no summation order reaches it.
    Not finite: a scaled operand is already inf before any product is summed.
    """
    q, k, g = (np.asarray(x, np.float32).astype(ml_dtypes.bfloat16) for x in (q, k, g))
    gam = np.cumsum(g, axis=0)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        qs = (q * np.exp(gam)).astype(np.float64)
        ks = (k * np.exp(-gam)).astype(np.float64)
        if not (np.isfinite(qs).all() and np.isfinite(ks).all()):
            return True
        return float(np.abs(qs @ ks.T).max()) < overflow.BF16_MAX / 2


def test_the_kda_demos_baked_numbers_keep_clear_of_rounding_ties_and_bf16_edges(sequence_axis):
    states = figure_states(sequence_axis, "kda-chunkwise")
    assert len(states) == 8
    tight = []
    for params, result in states:
        d = kda.demo(**params)
        assert d["max_abs_diff"] < result["agree_bound"] / 100  # whether the forms agree cannot flip
        for chunk in d["chunks"]:
            for key, decimals in (("state_norm", 3), ("max_log10_reciprocal", 2)):
                if room(chunk[key], decimals) < ROOM:
                    tight.append((params, chunk["index"], key, chunk[key]))
        q, k, _v, g, _beta = kda._demo_inputs(params["T"], params["gate"], params["g_min"], params["seed"], 16, 16)
        q = q * 16**-0.5  # the demo judges tiles on scaled queries
        assert bf16_steps_hold(q) and bf16_steps_hold(k) and bf16_steps_hold(g), params
        for lo in range(0, params["T"], kda.TILE):
            hi = lo + kda.TILE
            assert dense_verdict_is_clear(q[lo:hi], k[lo:hi], g[lo:hi]), (params, lo)
    assert tight == []
    assert room(math.log10(overflow.BF16_MAX), 2) >= ROOM  # the timeline's ceiling


def test_the_bf16_floors_tables_numbers_keep_clear_of_rounding_ties_and_of_the_ceiling(sequence_axis):
    states = figure_states(sequence_axis, "bf16-floors")
    assert [params["tile"] for params, _ in states] == [16, *(t for t in range(4, 65, 4) if t != 16)]
    for params, _result in states:
        for g_min in range(-1, -11, -1):
            margin = overflow.margin_nats(g_min, params["tile"])
            assert room(margin, 2) >= ROOM and abs(margin) >= ROOM, (g_min, params)  # digits and verdict hold
