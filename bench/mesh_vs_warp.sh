#!/usr/bin/env bash
# bench/mesh_vs_warp.sh — kjit's meshes against Warp 1.19's wp.Mesh on the cpu, side by side
# (bench/mesh_vs_warp.py): builds kjit's side, makes the bench venv, runs both.
#   bench/mesh_vs_warp.sh [BUILD_DIR] [--rounds R] [--reps K] [--tris N] [--queries Q]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build="$1"; shift; fi
source "$root/bench/bench_venv.sh"
ninja -C "$build" bench_mesh_side_by_side >&2
"$bench_python" "$root/bench/mesh_vs_warp.py" --build "$build" "$@"
