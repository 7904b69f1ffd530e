#!/usr/bin/env bash
# scripts/copy_checkout.sh SRC DEST — copies kjit's source tree as a clean clone would hold it,
# with the working tree's changes: in a git checkout the files git tracks and the untracked ones
# it does not ignore; elsewhere (a copy made by this script, a tarball) every file but build
# trees, venvs and caches. DEST must not exist or be empty. Used by the no-toolkit test and
# bench/readme_commands.sh.
set -euo pipefail
src="$1"
dest="$2"
mkdir -p "$dest"
if git -C "$src" rev-parse --show-toplevel >/dev/null 2>&1; then
  (cd "$src" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -C "$dest" -xf -
else
  tar -C "$src" -cf - --exclude='./build*' --exclude='./.venv*' --exclude='./.git' --exclude='./out' \
      --exclude='__pycache__' --exclude='*.egg-info' --exclude='./python/build' . | tar -C "$dest" -xf -
fi
