#!/usr/bin/env bash
# pip-installs the kjit package, from a fresh copy of python/ (as an install's copy would be),
# into DEST with the venv's pip: no network (no build isolation, no index), nothing added to
# the venv. Exits 77 (ctest: skipped), saying why, when the venv is missing.
# Usage: install_package.sh VENV SOURCE DEST
set -eu
venv="$1"
src="$2"
dest="$3"
if [ ! -x "$venv/bin/python" ]; then
  echo "SKIP: no Python venv at $venv (scripts/test.sh creates it)"
  exit 77
fi
copy="$dest.src"
rm -rf "$copy" "$dest"
mkdir -p "$copy"
# The package's files only: a build/ or egg-info left by a manual `pip install ./python` stays out.
cp -R "$src/pyproject.toml" "$src/README.md" "$src/kjit" "$copy/"
find "$copy" -name __pycache__ -prune -exec rm -rf {} +
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
  --no-index --target "$dest" "$copy"; then
  # Offline, the venv's own setuptools builds the package: scripts/python_env.sh pins one.
  echo "FAILED: pip could not install $copy with $venv (its setuptools: $("$venv/bin/python" -c \
    'import setuptools; print(setuptools.__version__)' 2>&1 | tail -1)); refresh the venv with scripts/test.sh or" \
    "'source scripts/python_env.sh && kjit_python_env'"
  exit 1
fi
"$venv/bin/python" - "$dest" <<'PY'
import importlib.metadata as md, sys
dist = next(md.distributions(path=[sys.argv[1]]))
print(f"installed {dist.metadata['Name']} {dist.version} into {sys.argv[1]}")
PY
