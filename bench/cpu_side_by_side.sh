#!/usr/bin/env bash
# bench/cpu_side_by_side.sh — issue 15's side-by-side cpu benchmark in one command: makes the
# benchmark's venv (bench/bench_venv.sh), builds kjit's and the hand loop's programs and the demo kernel
# library, then runs bench/cpu_side_by_side.py (kjit / Dr.Jit / Warp / hand, interleaved) and
# bench/cpu_side_by_side_jax.py (the kjit JAX shim against jnp).
#   bench/cpu_side_by_side.sh [BUILD_DIR] [args for cpu_side_by_side.py, e.g. --reps 5]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build="$1"; shift; fi
source "$root/bench/bench_venv.sh"

ninja -C "$build" -j"${KJIT_BENCH_JOBS:-2}" bench_side_by_side_kjit bench_side_by_side_hand demo_kernels >&2
"$bench_python" "$root/bench/cpu_side_by_side.py" --build "$build" "$@"
PYTHONPATH="$root/python" "$bench_python" "$root/bench/cpu_side_by_side_jax.py" "$build"
