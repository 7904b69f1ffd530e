#!/usr/bin/env bash
# Wall time of `kjit precompile` for the example library and two targets (sm_80, sm_90) into
# a fresh cache, with --jobs 1 and --jobs 2, and of a second run that finds everything cached.
# Rounds interleave the job counts (alternating which goes first) so that load on a shared
# machine drifts over both alike; medians are reported, with the CPU time each run got
# ((user + sys) / wall: about 1 for one busy thread, up to 2 for two) — on a machine whose
# cores other work holds, --jobs 2 cannot be faster than the CPU it is given.
#   bench/cli_precompile.sh [rounds=5] [build folder=build]
set -euo pipefail
rounds="${1:-5}"
build="$(cd "${2:-$(dirname "$0")/../build}" && pwd)"
kjit="$build/tools/kjit"
library="$build/lib/libdemo_kernels.so"
[ -x "$kjit" ] && [ -f "$library" ] || { echo "build kjit_tool and demo_kernels in $build first" >&2; exit 2; }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

# One precompile with --jobs $1 into cache folder $2; prints "<wall ms> <cpu/wall>".
timed() {
  local t
  t=$( { /usr/bin/time -f "%e %U %S" "$kjit" precompile "$library" --arch sm_80,sm_90 --jobs "$1" \
         --cache-dir "$2" >/dev/null; } 2>&1 | tail -1)
  awk -v t="$t" 'BEGIN {split(t, v, " "); printf "%d %.2f\n", v[1] * 1000, (v[1] > 0 ? (v[2] + v[3]) / v[1] : 0)}'
}

declare -a wall1 wall2 cpu1 cpu2 cached
for ((r = 0; r < rounds; r++)); do
  for j in $( ((r % 2 == 0)) && echo "1 2" || echo "2 1"); do
    read -r ms cpu < <(timed "$j" "$scratch/cache-$j-$r")
    if [ "$j" = 1 ]; then wall1+=("$ms"); cpu1+=("$cpu"); else wall2+=("$ms"); cpu2+=("$cpu"); fi
  done
  read -r ms _ < <(timed 2 "$scratch/cache-2-$r")  # everything is cached now
  cached+=("$ms")
  echo "round $((r + 1))/$rounds: --jobs 1 ${wall1[-1]} ms (cpu ${cpu1[-1]}), --jobs 2 ${wall2[-1]} ms (cpu ${cpu2[-1]}), cached ${ms} ms" >&2
done

m1=$(printf '%s\n' "${wall1[@]}" | median); c1=$(printf '%s\n' "${cpu1[@]}" | median)
m2=$(printf '%s\n' "${wall2[@]}" | median); c2=$(printf '%s\n' "${cpu2[@]}" | median)
mc=$(printf '%s\n' "${cached[@]}" | median)
echo "kjit precompile libdemo_kernels.so --arch sm_80,sm_90 (3 modules x 2 targets), median of $rounds:"
echo "  --jobs 1            ${m1} ms  cpu/wall ${c1}   (runs: ${wall1[*]})"
echo "  --jobs 2            ${m2} ms  cpu/wall ${c2}   (runs: ${wall2[*]})"
echo "  speed-up            $(awk -v a="$m1" -v b="$m2" 'BEGIN {printf "%.2f", a / b}')x"
echo "  all cached (jobs 2) ${mc} ms   (runs: ${cached[*]})"
echo "  machine: $(nproc) hardware threads, load average $(cut -d' ' -f1-3 /proc/loadavg)"
