#!/usr/bin/env bash
# bench/hash_grid_vs_warp.sh — kjit's hash grid (build + neighbour sum) against Warp 1.19's on the
# cpu, side by side (bench/hash_grid_vs_warp.py): builds kjit's side, makes the bench venv, runs.
#   bench/hash_grid_vs_warp.sh [BUILD_DIR] [--rounds R] [--reps K] [--n N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build="$1"; shift; fi
source "$root/bench/bench_venv.sh"
ninja -C "$build" bench_hash_grid_side_by_side >&2
"$bench_python" "$root/bench/hash_grid_vs_warp.py" --build "$build" "$@"
