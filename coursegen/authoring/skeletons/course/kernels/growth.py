"""Growth at a fixed rate per step: the example module of a new course."""
import math


def grow(start, rate_percent, steps):
    """Return `start` after `steps` steps of growth at `rate_percent` per step."""
    return start * (1 + rate_percent / 100) ** steps


def doubling_steps(rate_percent):
    """Return how many whole steps it takes to at least double at `rate_percent` per step."""
    return math.ceil(math.log(2) / math.log1p(rate_percent / 100))
