#!/usr/bin/env bash
# scripts/warp_examples.sh — builds the Warp ports (examples/warp/), makes the bench venv (Warp
# 1.19) and runs scripts/warp_examples.py: each port beside Warp's example, docs/WARP_EXAMPLES.md.
#   scripts/warp_examples.sh [BUILD_DIR [--only EXAMPLE,...]]   (--only: rerun those rows alone)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
source "$root/bench/bench_venv.sh"
ninja -C "$build" $(ninja -C "$build" -t targets all | grep -o '^warp_[a-z_0-9]*' | sort -u) >&2
"$bench_python" "$root/scripts/warp_examples.py" "$build" "$root/docs/WARP_EXAMPLES.md" "${@:2}"
