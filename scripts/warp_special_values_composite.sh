#!/usr/bin/env bash
# scripts/warp_special_values_composite.sh — regenerates
# tests/builtins/golden/warp_special_values_composite.txt from Warp 1.19 itself (bench venv): lists the composite builtins' signatures and input rows from
# tests/builtins/special_values_composite.cpp, runs them in Warp on the cpu, then runs the test.
#   scripts/warp_special_values_composite.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/bench/bench_venv.sh"
source "$root/scripts/common.sh"
kjit_build test_builtins >/dev/null
list="$(mktemp)"
trap 'rm -f "$list"' EXIT
KJIT_SPECIAL_VALUES_LIST="$list" "$KJIT_BUILD_DIR/tests/builtins/test_builtins" \
  --test-case='special values: list the composite signatures' --no-skip >/dev/null
"$bench_python" "$root/scripts/warp_special_values_composite.py" "$list" "$root/tests/builtins/golden/warp_special_values_composite.txt" 2>&1 |
  grep "absent in Warp" || true
"$KJIT_BUILD_DIR/tests/builtins/test_builtins" --test-case='vector, matrix, quaternion and transform builtins*' 2>&1 | tail -3
