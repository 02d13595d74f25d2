"""coursegen: build interactive course websites from Markdown lessons and reviews.

The pipeline is a chain of small stages with plain data between them:
load (sources, config) → parse (Markdown → Page) → link (course map, navigation,
link checks) → render (Jinja templates → {path: bytes}) → write (atomic swap of site/).
"""

__version__ = "0.1.0"  # the one place the version is set (pyproject.toml reads it)
