#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine, then run the whole suite.
# Usage: bash scripts/test.sh [pytest arguments]; COURSEGEN_PYTHON names the interpreter that makes the venv
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

# The interpreter that makes the venv: COURSEGEN_PYTHON, default python3. Nothing installed in it is used
# (the venv sees only its own packages), so a bare /usr/bin/python3 works as well as any other.
BASE_PYTHON="${COURSEGEN_PYTHON:-python3}"
BASE_ID="$("$BASE_PYTHON" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
VENV="${COURSEGEN_VENV:-.venv}"
LOCK=scripts/requirements-test.txt
STAMP="$VENV/.requirements-test.sha256"
MADE_WITH="$VENV/.made-with"
if [ ! -x "$VENV/bin/python" ] || ! sha256sum --status -c "$STAMP" 2>/dev/null \
   || [ "$(cat "$MADE_WITH" 2>/dev/null)" != "$BASE_ID" ]; then
  echo "== making the test environment $VENV from $LOCK with $BASE_ID"
  rm -rf "$VENV"
  "$BASE_PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-warn-script-location -r "$LOCK"
  sha256sum "$LOCK" > "$STAMP"
  echo "$BASE_ID" > "$MADE_WITH"
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
