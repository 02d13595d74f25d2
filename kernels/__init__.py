"""Small exact numerical kernels shared by the build, the widgets and the lessons.

Submodules:
    kernels.kda       Kimi Delta Attention, token-by-token and chunk-parallel
    kernels.gates     the two decay gates (Kimi Linear softplus gate, bounded gate)
    kernels.overflow  when 1/Gamma stops fitting in bfloat16
    kernels.sizes     cache/state sizes and mixture-of-experts parameter counts

Only numpy and ml_dtypes are needed, so everything also imports in Pyodide.
"""
from . import gates, overflow, kda, sizes  # noqa: F401

__all__ = ["gates", "kda", "overflow", "sizes"]
