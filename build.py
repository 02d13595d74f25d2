#!/usr/bin/env python3
"""Build the course: `python build.py [build|serve|check] --help` for the commands."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coursegen.cli import run

if __name__ == "__main__":
    run()
