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
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
  --no-index --target "$dest" "$copy"
"$venv/bin/python" - "$dest" <<'PY'
import importlib.metadata as md, sys
dist = next(md.distributions(path=[sys.argv[1]]))
print(f"installed {dist.metadata['Name']} {dist.version} into {sys.argv[1]}")
PY
