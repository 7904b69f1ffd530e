#!/usr/bin/env bash
# bench/examples_side_by_side.sh — every kernel of examples/ as it is (forward, adjoint, tangent)
# against Dr.Jit on the cpu, in one command: makes the benchmarks' venv (bench/bench_venv.sh),
# builds the kjit runner and runs bench/examples_side_by_side.py.
#   bench/examples_side_by_side.sh [BUILD_DIR] [--reps N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build="$1"; shift; fi
source "$root/bench/bench_venv.sh"
ninja -C "$build" -j"${KJIT_BENCH_JOBS:-2}" bench_examples_side_by_side >&2
"$bench_python" "$root/bench/examples_side_by_side.py" --build "$build" "$@"
