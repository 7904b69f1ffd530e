#!/usr/bin/env bash
# bench/mesh_vs_warp.sh — kjit's meshes against Warp 1.19's wp.Mesh on the cpu, side by side
# with Embree 3's rays (bench/mesh_vs_warp.py): installs libembree-dev, builds kjit's and Embree's
# sides, makes the bench venv, runs all three.
#   bench/mesh_vs_warp.sh [BUILD_DIR] [--rounds R] [--reps K] [--tris N] [--queries Q]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build="$1"; shift; fi
source "$root/bench/bench_venv.sh"
# Embree (the ray-cast row's third peer): Debian's libembree-dev, then CMake finds it.
source "$root/scripts/common.sh"
KJIT_APT_PACKAGES=(libembree-dev)
kjit_install_packages
cmake "$build" >/dev/null
ninja -C "$build" bench_mesh_side_by_side bench_mesh_rays_embree >&2
"$bench_python" "$root/bench/mesh_vs_warp.py" --build "$build" "$@"
