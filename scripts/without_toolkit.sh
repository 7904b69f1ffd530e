#!/usr/bin/env bash
# scripts/without_toolkit.sh CMD [ARGS...] — runs CMD as on a machine without the CUDA toolkit: in
# a private mount namespace (as root, or in a user namespace) where every /usr/local/cuda*
# folder is an empty tmpfs, with CUDA_HOME, CUDA_PATH, LIBRARY_PATH and VIRTUAL_ENV unset and
# nothing of the toolkit on PATH. Checks that the toolkit is out of sight before it runs CMD.
# Exits 77, saying why, where the machine allows no mount namespace (tests read that as a skip).
set -euo pipefail
if [ $# -eq 0 ]; then
  echo "usage: scripts/without_toolkit.sh CMD [ARGS...]" >&2
  exit 2
fi
if [ "${KJIT_WITHOUT_TOOLKIT_INSIDE:-}" != 1 ]; then
  how=()
  if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then how=(unshare -m)
  elif unshare -rm true 2>/dev/null; then how=(unshare -rm)
  else
    echo "SKIP: this machine allows no mount namespace (unshare -m as root, unshare -rm unprivileged):" \
         "the CUDA toolkit cannot be hidden here"
    exit 77
  fi
  export KJIT_WITHOUT_TOOLKIT_INSIDE=1
  exec "${how[@]}" --propagation private "$0" "$@"
fi
hidden=()
for d in /usr/local/cuda*; do
  [ -d "$d" ] && [ ! -L "$d" ] || continue
  mount -t tmpfs -o size=1m,mode=755 none "$d"
  hidden+=("$d")
done
unset CUDA_HOME CUDA_PATH LIBRARY_PATH CUDAToolkit_ROOT VIRTUAL_ENV KJIT_WITHOUT_TOOLKIT_INSIDE
PATH="$(printf '%s' "$PATH" | tr ':' '\n' | grep -v '^/usr/local/cuda' | paste -sd: -)"
export PATH
echo "[kjit] without the CUDA toolkit: hidden ${hidden[*]:-nothing (none was installed)}" >&2
if [ -e /usr/local/cuda/include/cuda.h ] || [ -e /usr/local/include/cuda.h ] || nvcc --version >/dev/null 2>&1; then
  echo "FAIL: the CUDA toolkit is still visible" >&2
  exit 1
fi
exec "$@"
