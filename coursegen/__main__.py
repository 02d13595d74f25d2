"""`python -m coursegen`: the same command line as the `coursegen` script."""
from .cli import run

run()
