#!/usr/bin/env bash
# Times the README's two commands as a new user meets them: a copy of the checkout's files (a
# clean clone of the working tree, nothing built, an empty module cache) runs ./scripts/demo.sh
# and prints when its set-up (apt, pip: not kjit's time) ended, when its build ended, when its
# first kernel ran (the first forward launch's line) and when it ended, in seconds from the
# command's start; with --test it then runs ./scripts/test.sh in the same copy and times that
# too. `scripts/without_toolkit.sh bench/readme_commands.sh --test` times (and checks) both on a
# machine without the CUDA toolkit.
# Usage: bench/readme_commands.sh [--test] [WORK_DIR]   (docs/BENCHMARKS.md, "The README's commands")
set -euo pipefail
run_tests=0
if [ "${1:-}" = "--test" ]; then run_tests=1; shift; fi
src="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-/tmp/kjit-readme-commands}"
rm -rf "$work"
"$src/scripts/copy_checkout.sh" "$src" "$work/kjit"
export KJIT_CACHE_DIR="$work/cache"
cd "$work/kjit"

# stamp CMD...: runs CMD, prefixing each output line with the seconds since the start.
stamp() {
  local start
  start=$(date +%s.%N)
  "$@" 2>&1 | while IFS= read -r line; do
    printf "%7.1f  %s\n" "$(awk -v a="$(date +%s.%N)" -v b="$start" "BEGIN{print a-b}")" "$line"
  done
  return "${PIPESTATUS[0]}"
}

echo "== ./scripts/demo.sh on $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
stamp ./scripts/demo.sh >"$work/demo.log"
setup=$(grep -m1 "configuring\|building" "$work/demo.log" | awk '{print $1}')
built=$(grep -m1 "built in" "$work/demo.log" | awk '{print $1}')
first=$(grep -m1 -A1 "4. forward launches" "$work/demo.log" | tail -1 | awk '{print $1}')
ended=$(tail -1 "$work/demo.log" | awk '{print $1}')
grep -q "All checks passed." "$work/demo.log" || { cat "$work/demo.log"; echo "the demo failed"; exit 1; }
echo "demo.sh: set-up done at ${setup} s; library, tool and demo built at ${built} s; first kernel ran at" \
     "${first} s; done at ${ended} s"

if [ "$run_tests" = 1 ]; then
  echo "== ./scripts/test.sh"
  stamp ./scripts/test.sh >"$work/test.log" || { tail -40 "$work/test.log"; echo "test.sh failed"; exit 1; }
  grep -E "configuring|build and tests:|sanitizer build and tests:|tests: [0-9]+ ran" "$work/test.log"
  echo "test.sh: done at $(tail -1 "$work/test.log" | awk '{print $1}') s"
fi
