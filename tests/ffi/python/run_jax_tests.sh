#!/usr/bin/env bash
# Runs one JAX test module (tests/ffi/python/<module>.py) with the project venv's Python.
# Exits 77 (ctest: skipped), saying why, when the venv or its jax is missing.
# Usage: run_jax_tests.sh VENV MODULE
set -u
venv="$1"
module="$2"
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -x "$venv/bin/python" ]; then
  echo "SKIP: no Python venv at $venv (scripts/test.sh creates it with pinned jax, jaxlib, numpy)"
  exit 77
fi
if ! "$venv/bin/python" -c "import jax" 2>/dev/null; then
  echo "SKIP: jax is not installed in $venv (scripts/test.sh installs it)"
  exit 77
fi
cd "$here" && exec "$venv/bin/python" "$module.py"
