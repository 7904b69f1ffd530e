#!/usr/bin/env bash
# scripts/warp_streams.sh — kjit's random and noise builtins against Warp 1.19 itself: runs
# scripts/warp_random_reference.py in the bench venv (Warp on the cpu, ROWS rows, default
# 10^6), then tests/builtins/warp_streams.cpp against its tables, every row and column.
# --update also rewrites tests/builtins/golden/warp_streams.txt from Warp's tables.
#   scripts/warp_streams.sh [--update] [ROWS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
update=""
if [ "${1:-}" = "--update" ]; then update=1; shift; fi
rows="${1:-1000000}"
source "$root/bench/bench_venv.sh"
source "$root/scripts/common.sh"
kjit_build test_builtins >/dev/null
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
"$bench_python" "$root/scripts/warp_random_reference.py" "$dir" "$rows" >/dev/null
KJIT_WARP_REFERENCE="$dir" ${update:+KJIT_UPDATE_GOLDEN=1} "$KJIT_BUILD_DIR/tests/builtins/test_builtins" \
  --test-case='*Warp 1.19*' --success=false -s 2>&1 | grep -E "MESSAGE|Status|ERROR" | sed 's/^.*MESSAGE: //'
