"""The course's own Python package: what {calc} numbers and widgets compute with.

Every public module here is available to {calc} by its name (e.g. `growth.doubling_steps(5)`),
and widgets import it (`from kernels import growth`).
"""
from . import growth  # noqa: F401
