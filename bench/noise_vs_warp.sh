#!/usr/bin/env bash
# bench/noise_vs_warp.sh — kjit's noise and random builtins against Warp 1.19's on the cpu, side
# by side (bench/noise_vs_warp.py): builds kjit's side, makes the bench venv, runs both.
#   bench/noise_vs_warp.sh [BUILD_DIR] [--rounds R] [--reps K] [--n N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build="$1"; shift; fi
source "$root/bench/bench_venv.sh"
ninja -C "$build" bench_noise_side_by_side >&2
"$bench_python" "$root/bench/noise_vs_warp.py" --build "$build" "$@"
