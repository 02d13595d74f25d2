#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine, then run the whole suite.
# Usage: bash scripts/test.sh [pytest arguments]
#
# Python packages go into the repository's own virtual environment (.venv, or $COURSEGEN_VENV) at the
# exact versions in scripts/requirements-test.txt, so whatever else the machine has installed cannot
# change a golden page or a browser test. The venv is made anew whenever that file changes.
set -euo pipefail
cd "$(dirname "$0")/.."
unset PYTHONPATH PYTHONHOME  # nothing from outside the venv may shadow what it pins

if [ ! -x /usr/bin/chromium ]; then
  echo "== installing Debian's chromium"
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

VENV="${COURSEGEN_VENV:-.venv}"
LOCK=scripts/requirements-test.txt
STAMP="$VENV/.requirements-test.sha256"
if [ ! -x "$VENV/bin/python" ] || ! sha256sum --status -c "$STAMP" 2>/dev/null; then
  echo "== making the test environment $VENV from $LOCK"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-warn-script-location -r "$LOCK"
  sha256sum "$LOCK" > "$STAMP"
fi
PY="$VENV/bin/python"

echo "== installing coursegen into $VENV (editable, no other packages)"
"$PY" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
"$PY" -m pip check --disable-pip-version-check >/dev/null

echo "== installing pinned npm packages"
npm ci --no-audit --no-fund --loglevel=error

echo "== format, lint and types (ruff, mypy; settings in pyproject.toml)"
"$PY" -m ruff format --check --quiet .
"$PY" -m ruff check --quiet .
"$PY" -m mypy

echo "== running the test suite"
exec "$PY" -m pytest "$@"
