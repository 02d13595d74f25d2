"""`python -m coursegen`: the same command line as the `coursegen` script."""

from coursegen.cli import run

run()
