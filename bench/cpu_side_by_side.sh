#!/usr/bin/env bash
# bench/cpu_side_by_side.sh — issue 15's side-by-side cpu benchmark in one command: makes the
# benchmark's venv (.venv-bench: drjit, warp-lang, numpy and the README's jax; idempotent, the
# network only on the first run), builds kjit's and the hand loop's programs and the demo kernel
# library, then runs bench/cpu_side_by_side.py (kjit / Dr.Jit / Warp / hand, interleaved) and
# bench/cpu_side_by_side_jax.py (the kjit JAX shim against jnp).
#   bench/cpu_side_by_side.sh [BUILD_DIR] [args for cpu_side_by_side.py, e.g. --reps 5]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build="$1"; shift; fi
venv="${KJIT_BENCH_VENV:-$root/.venv-bench}"
pins=(drjit==1.5.0 warp-lang==1.19.0 numpy==2.3.5 jax==0.7.2 jaxlib==0.7.2)

if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.kjit-bench-pins" 2>/dev/null)" != "${pins[*]}" ]; then
  echo "[bench] preparing $venv with ${pins[*]}" >&2
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}"
  printf '%s' "${pins[*]}" >"$venv/.kjit-bench-pins"
fi

ninja -C "$build" -j"${KJIT_BENCH_JOBS:-2}" bench_side_by_side_kjit bench_side_by_side_hand demo_kernels >&2
"$venv/bin/python" "$root/bench/cpu_side_by_side.py" --build "$build" "$@"
PYTHONPATH="$root/python" "$venv/bin/python" "$root/bench/cpu_side_by_side_jax.py" "$build"
