"""matplotlib's backend for code cells (`module://coursegen.features.cells.inline_backend`), as Jupyter's inline
backend is: Agg draws, and `plt.show()` shows every open figure in the running cell's outputs, then closes it."""

from matplotlib.backend_bases import FigureManagerBase as FigureManager  # noqa: F401 - what a backend module names
from matplotlib.backends.backend_agg import FigureCanvasAgg as FigureCanvas  # noqa: F401


def show(*args, **kwargs) -> None:
    """Show the open figures in the running cell (figures.ACTIVE), if one is running."""
    from coursegen.features.cells.figures import ACTIVE

    if ACTIVE[0] is not None:
        ACTIVE[0].collect()
