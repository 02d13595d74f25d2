"""Growth step by step: the amount after some steps, from the course's kernels.growth.

The build runs run() for every rate on the slider; the browser runs this same file live.
"""
from kernels import growth


def run(rate, steps):
    """Return what the widget shows for one rate and number of steps."""
    return {"amount_text": f"{growth.grow(100, rate, steps):.2f}",
            "doubling": growth.doubling_steps(rate)}
