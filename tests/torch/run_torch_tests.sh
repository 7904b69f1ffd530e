#!/usr/bin/env bash
# Runs one kjit.torch test module (tests/torch/<module>.py) with the torch venv's Python.
# Exits 77 (ctest: skipped), saying why, when the venv or its torch is missing.
# Usage: run_torch_tests.sh VENV MODULE [TEST...]
set -u
venv="$1"
module="$2"
shift 2
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -x "$venv/bin/python" ]; then
  echo "SKIP: no Python venv at $venv (scripts/test.sh creates it: kjit_torch_env in scripts/python_env.sh)"
  exit 77
fi
if ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
  echo "SKIP: torch is not installed in $venv (scripts/test.sh installs it)"
  exit 77
fi
cd "$here" && exec "$venv/bin/python" "$module.py" "$@"
