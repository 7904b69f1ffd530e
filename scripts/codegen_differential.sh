#!/usr/bin/env bash
# scripts/codegen_differential.sh BASE_REV [COUNT] [SEED] — the differential test of code
# generation: checks that this checkout generates, bit for bit, the same module texts as
# BASE_REV (a refactor of codegen/ must change none) over COUNT random programs (default 5000)
# from seed SEED (default 1). KJIT_DIFF_MODE=values compares the programs' computed values instead.
#
# Builds kjit_autodiff_fuzz for this checkout (in $KJIT_BUILD_DIR, default build/) and for
# BASE_REV (in a temporary git worktree and build folder), runs both with --generate-only
# --dump-source (each module's forward + adjoint text and its tangent module's text, nothing
# compiled or launched) once per adjoint-span setting — the default, and 8, which cuts long
# adjoints into spans — and batch size — 16, the modules a checked run builds, and 1, a module
# per program whose files are named by its seed — and compares the dumps with `diff -r`.
# The base gets this checkout's tests/fuzz (the fuzz harness, which adds --dump-source: BASE_REV
# may predate it), so that both sides trace the same programs from the same lines of
# walker.cpp: only the library differs. One normalisation: each side's own checkout path, which
# the #line directives name, is written as @ROOT@ before the comparison.
#
# Exit status: 0 when every text (in values mode, every program's values) is identical; 1 when
# any differs (that setting's dumps are kept, and the first differing files named); 2 when the
# test could not run.
#
# KJIT_DIFF_MODE=values: the differential test of values instead (COUNT default 500). Both
# sides run the programs checked, on the cpu (--no-nvrtc --no-shrink --dump-values: compiled,
# launched and checked against the reference, nothing compiled for the GPU), and the raw bytes
# of everything the checker reads back from kjit's launches — forward outputs, tangent outputs,
# adjoint gradients of the arrays and of the value s, the outputs' adjoints — are compared bit
# for bit, one <seed>.values file per program: a change that alters the generated text (loop
# bookkeeping, compiler attributes) must still give identical results. The launches are over 37
# threads (--threads 37) by default: two blocks of 16 through the cpu's lane functions, where
# the cpu's code generation differs most, and 5 through the strided body (the generator's 4
# threads run the strided body alone). The runs have KJIT_NUM_THREADS=1: the launches are far
# below the size the cpu pool splits, so they run on the launching thread anyway (the dumps are
# the same bytes run to run without it too), and one pool thread keeps a float atomic's order
# fixed should one ever be split. Checker failures on either side are reported (the summary
# lines) but are not differences; a program's outcome (pass, refused, degenerate, the kind of a
# failure) is part of its file. The dumps see a change of summation order (KJIT_PRIVATE_ADDS=0,
# atomic adds instead of private copies, changes the last bit of some atomic targets): the
# environment is the same for both sides. A checked run compiles a host module per batch of 16
# programs and one per tangent module: 2 to 3 minutes per 100 programs and setting for both
# sides on two shared cores (1.5 minutes with the generator's 4 threads), so the default COUNT
# of 500 takes about 25 minutes for its two settings.
#
# Environment: KJIT_BUILD_DIR; KJIT_DIFF_MODE (text, the default, or values); KJIT_DIFF_SPANS
# (default "default 8"); KJIT_DIFF_BATCHES (default "16 1"; "16" in values mode, where batches of
# 1 cost a host compile per program); KJIT_DIFF_THREADS (values mode: the launches' thread
# counts, default "37"; "default" is the generator's 4, which run no lane function, e.g.
# "37 default" for both); KJIT_DIFF_ARGS (more options for both runs, e.g. "--no-tangents" or
# "--avoid-known"); KJIT_DIFF_BASE_DIR (keep the base's worktree and build there and reuse them:
# a rerun rebuilds only what changed instead of the whole library); KJIT_DIFF_WORK (where the
# dumps go; default a new temporary folder, removed when every text was identical).
set -euo pipefail
source "$(dirname "$0")/common.sh"

die() { kjit_log "ERROR: $*"; exit 2; }

[ $# -ge 1 ] && [ $# -le 3 ] || { sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
MODE="${KJIT_DIFF_MODE:-text}"
[ "$MODE" = text ] || [ "$MODE" = values ] || die "KJIT_DIFF_MODE must be text or values, not '$MODE'"
BASE_REV="$1"
if [ "$MODE" = values ]; then COUNT="${2:-500}"; else COUNT="${2:-5000}"; fi
SEED="${3:-1}"
[[ "$COUNT" =~ ^[0-9]+$ && "$COUNT" -gt 0 ]] || die "COUNT must be a positive number, not '$COUNT'"
[[ "$SEED" =~ ^[0-9]+$ ]] || die "SEED must be a number, not '$SEED'"
read -r -a SPANS <<< "${KJIT_DIFF_SPANS:-default 8}"
if [ "$MODE" = values ]; then
  read -r -a BATCHES <<< "${KJIT_DIFF_BATCHES:-16}"
  read -r -a THREADS <<< "${KJIT_DIFF_THREADS:-37}"
else
  read -r -a BATCHES <<< "${KJIT_DIFF_BATCHES:-16 1}"
  THREADS=(default)  # the launches' size changes no text
fi
read -r -a EXTRA_ARGS <<< "${KJIT_DIFF_ARGS:-}"
BASE_COMMIT=$(git -C "$KJIT_ROOT" rev-parse --verify --quiet "$BASE_REV^{commit}") ||
  die "'$BASE_REV' names no commit of $KJIT_ROOT"
FUZZ_BIN=tests/fuzz/kjit_autodiff_fuzz

# Where the base's worktree and build live: KJIT_DIFF_BASE_DIR (kept), or a temporary folder.
if [ -n "${KJIT_DIFF_BASE_DIR:-}" ]; then
  mkdir -p "$KJIT_DIFF_BASE_DIR"
  BASE_HOME="$(cd "$KJIT_DIFF_BASE_DIR" && pwd)"
  KEEP_BASE=1
else
  BASE_HOME="$(mktemp -d "${TMPDIR:-/tmp}/kjit-differential-base.XXXXXX")"
  KEEP_BASE=0
fi
BASE_TREE="$BASE_HOME/src"
BASE_BUILD="$BASE_HOME/build"
if [ -n "${KJIT_DIFF_WORK:-}" ]; then
  mkdir -p "$KJIT_DIFF_WORK"
  WORK="$(cd "$KJIT_DIFF_WORK" && pwd)"
else
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/kjit-differential.XXXXXX")"
fi

cleanup() {
  local rc=$?
  if [ "$KEEP_BASE" = 0 ]; then
    git -C "$KJIT_ROOT" worktree remove --force "$BASE_TREE" >/dev/null 2>&1 || true
    rm -rf "$BASE_HOME"
    git -C "$KJIT_ROOT" worktree prune >/dev/null 2>&1 || true
  fi
  # The dumps and logs stay where the texts differed or a run failed (to look at), and where
  # they were asked for.
  if [ "$rc" = 0 ] && [ -z "${KJIT_DIFF_WORK:-}" ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

# The base's worktree at BASE_COMMIT (made, or brought there when kept from an earlier run).
if [ -e "$BASE_TREE/.git" ]; then
  if [ "$(git -C "$BASE_TREE" rev-parse HEAD)" != "$BASE_COMMIT" ]; then
    kjit_log "base: moving the kept worktree $BASE_TREE to $BASE_REV"
    git -C "$BASE_TREE" checkout --quiet --force --detach "$BASE_COMMIT"
  fi
  # A kept worktree is BASE_REV exactly: tracked files changed there outside tests/fuzz are
  # restored (only those, so that the kept build recompiles only them).
  changed=$(git -C "$BASE_TREE" diff --name-only HEAD -- . ':(exclude)tests/fuzz')
  if [ -n "$changed" ]; then
    kjit_log "base: restoring the files changed in the kept worktree: $(echo $changed)"
    git -C "$BASE_TREE" diff --name-only -z HEAD -- . ':(exclude)tests/fuzz' |
      (cd "$BASE_TREE" && xargs -0 git checkout --quiet HEAD --)
  fi
else
  kjit_log "base: a worktree of $BASE_REV ($(git -C "$KJIT_ROOT" rev-parse --short "$BASE_COMMIT")) in $BASE_TREE"
  git -C "$KJIT_ROOT" worktree add --quiet --detach "$BASE_TREE" "$BASE_COMMIT" ||
    die "cannot add a worktree of $BASE_REV at $BASE_TREE"
fi

# The base's tests/fuzz becomes this checkout's (tracked and untracked files, uncommitted
# changes included). Only files whose content differs are written, so that a kept base build
# recompiles nothing when nothing changed.
fuzz_files() { git -C "$1" ls-files --cached --others --exclude-standard -- tests/fuzz | sort -u; }
synced=0
while IFS= read -r f; do
  [ -f "$KJIT_ROOT/$f" ] || continue  # deleted in this working tree
  if ! cmp -s "$KJIT_ROOT/$f" "$BASE_TREE/$f"; then
    mkdir -p "$(dirname "$BASE_TREE/$f")"
    cp "$KJIT_ROOT/$f" "$BASE_TREE/$f"
    synced=$((synced + 1))
  fi
done < <(fuzz_files "$KJIT_ROOT")
while IFS= read -r f; do
  if [ -f "$BASE_TREE/$f" ] && [ ! -f "$KJIT_ROOT/$f" ]; then rm -f "$BASE_TREE/$f"; synced=$((synced + 1)); fi
done < <(fuzz_files "$BASE_TREE")
kjit_log "base: tests/fuzz is this checkout's ($synced files written or removed)"
grep -q -- '--dump-source' "$BASE_TREE/tests/fuzz/fuzz_main.cpp" ||
  die "this checkout's tests/fuzz/fuzz_main.cpp has no --dump-source option"
[ "$MODE" = text ] || grep -q -- '--dump-values' "$BASE_TREE/tests/fuzz/fuzz_main.cpp" ||
  die "this checkout's tests/fuzz/fuzz_main.cpp has no --dump-values option"

# Both builds, with the project's flags (kjit_build: KJIT_WERROR, Ninja).
started=$SECONDS
kjit_build kjit_autodiff_fuzz || die "this checkout's kjit_autodiff_fuzz does not build"
kjit_log "this checkout: kjit_autodiff_fuzz built in $((SECONDS - started)) s"
started=$SECONDS
(KJIT_ROOT="$BASE_TREE" KJIT_BUILD_DIR="$BASE_BUILD" && kjit_build kjit_autodiff_fuzz) ||
  die "kjit_autodiff_fuzz of $BASE_REV (with this checkout's tests/fuzz) does not build"
kjit_log "base: kjit_autodiff_fuzz built in $((SECONDS - started)) s"

# run SIDE BINARY ROOT OUT ARGS...: dumps the texts, checks the run's summary line and writes
# the side's checkout path as @ROOT@.
run_side() {
  local side="$1" bin="$2" root="$3" out="$4"
  shift 4
  rm -rf "$out"
  local rc=0
  "$bin" --seed "$SEED" --count "$COUNT" --jobs "$(nproc)" --generate-only --dump-source "$out" "$@" \
    >"$out.log" 2>&1 || rc=$?
  local summary
  summary=$(grep -- '--generate-only: ' "$out.log" | tail -n 1 || true)
  # 1: some program failed to generate (its .error file is compared like a text).
  if { [ "$rc" != 0 ] && [ "$rc" != 1 ]; } || [[ "$summary" != *": $COUNT programs,"* ]]; then
    tail -n 20 "$out.log" >&2
    die "$side: kjit_autodiff_fuzz exited with $rc (log: $out.log)"
  fi
  kjit_log "  $side: ${summary#kjit_autodiff_fuzz --generate-only: }"
  # The path as given and with symbolic links resolved (what the compiler was given).
  local logical physical
  logical=$(printf '%s/' "$root" | sed 's/[][\.*^$|]/\\&/g')
  physical=$(printf '%s/' "$(cd "$root" && pwd -P)" | sed 's/[][\.*^$|]/\\&/g')
  find "$out" -type f -print0 |
    xargs -0 -r -n 32 -P "$(nproc)" sed -i -e "s|$logical|@ROOT@/|g" -e "s|$physical|@ROOT@/|g"
}

# run_values SIDE BINARY OUT ARGS...: runs the programs checked on the cpu, each program's values
# written to OUT/<seed>.values, and checks the run's summary line (checker failures are
# reported, not fatal: each side's outcomes are in its files).
run_values() {
  local side="$1" bin="$2" out="$3"
  shift 3
  rm -rf "$out"
  local rc=0 started=$SECONDS
  KJIT_NUM_THREADS=1 "$bin" --seed "$SEED" --count "$COUNT" --jobs "$(nproc)" --no-nvrtc --no-shrink \
    --dump-values "$out" "$@" >"$out.log" 2>&1 || rc=$?
  local summary
  summary=$(grep -- '^kjit_autodiff_fuzz: ' "$out.log" | tail -n 1 || true)
  # 1: some program failed its check (its outcome is in its file, compared like its values).
  if { [ "$rc" != 0 ] && [ "$rc" != 1 ]; } || [[ "$summary" != *": $COUNT programs,"* ]]; then
    tail -n 20 "$out.log" >&2
    die "$side: kjit_autodiff_fuzz exited with $rc (log: $out.log)"
  fi
  kjit_log "  $side ($((SECONDS - started)) s): $(sed -E 's/^kjit_autodiff_fuzz: //; s/; [0-9]+ gradient components.*//' <<< "$summary")"
  if [ "$rc" = 1 ]; then
    grep -E '^seed [0-9]+: ' "$out.log" | cut -c 1-160 | head -n 5 | sed 's/^/      /' >&2 || true
  fi
}

# describe_values BASE_DIR NEW_DIR NAMES: names the first differing buffer of each differing
# values file that the file NAMES lists (at most 10), with its first differing value.
describe_values() {
  python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
def records(path):
    try:
        data = open(path, 'rb').read()
    except OSError:
        return None, {}
    head, recs, at = [], [], 0
    for _ in range(5):  # the header's five lines
        end = data.index(b'\n', at)
        head.append(data[at:end].decode())
        at = end + 1
    while at < len(data):
        end = data.index(b'\n', at)
        name, _, count, nbytes = data[at:end].decode().split()
        at = end + 1
        recs.append((name, data[at:at + int(nbytes)]))
        at += int(nbytes) + 1
    return head, recs
for line in open(sys.argv[3]).read().split()[:10]:
    f = line.strip()
    bh, br = records(sys.argv[1] + '/' + f)
    nh, nr = records(sys.argv[2] + '/' + f)
    if bh is None or nh is None:
        print(f'{f}: only {"this checkout" if bh is None else "the base"} has it')
        continue
    if bh != nh:
        print(f'{f}: header: base {" / ".join(bh[3:])}; this checkout {" / ".join(nh[3:])}')
    for i in range(max(len(br), len(nr))):
        b = br[i] if i < len(br) else None
        n = nr[i] if i < len(nr) else None
        if b == n:
            continue
        if b is None or n is None or b[0] != n[0]:
            print(f'{f}: record {i}: base {b[0] if b else "(none)"}, this checkout {n[0] if n else "(none)"}')
            break
        bv = struct.unpack(f'<{len(b[1]) // 8}d', b[1])
        nv = struct.unpack(f'<{len(n[1]) // 8}d', n[1])
        diffs = [k for k in range(min(len(bv), len(nv))) if struct.pack('<d', bv[k]) != struct.pack('<d', nv[k])]
        k = diffs[0] if diffs else min(len(bv), len(nv))
        print(f'{f}: {b[0]} differs in {len(diffs)} of {len(bv)} values; first at {k}: '
              f'base {bv[k] if k < len(bv) else "(none)"!r}, this checkout {nv[k] if k < len(nv) else "(none)"!r}')
        break
PY
}

# The seeds whose texts the files named on stdin hold (<seed>, <first>-<last>, suffixes).
seeds_of() {
  sed -E -n 's/^([0-9]+)(-([0-9]+))?[.].*/\1 \3/p' |
    awk '{ last = $2 == "" ? $1 : $2; for (s = $1; s <= last; ++s) print s }' | sort -un
}

total_started=$SECONDS
failed_settings=()
DIFFERING=0
compared=0 differing=0
for span in "${SPANS[@]}"; do
  for batch in "${BATCHES[@]}"; do
  for threads in "${THREADS[@]}"; do
    name="span-$span.batch-$batch"
    args=(--batch "$batch" "${EXTRA_ARGS[@]}")
    [ "$span" = default ] || args+=(--adjoint-span "$span")
    if [ "$threads" != default ]; then
      name+=".threads-$threads"
      args+=(--threads "$threads")
    fi
    kjit_log "$name: $COUNT programs from seed $SEED, ${args[*]}"
    started=$SECONDS
    if [ "$MODE" = values ]; then
      run_values "this checkout" "$KJIT_BUILD_DIR/$FUZZ_BIN" "$WORK/$name.new" "${args[@]}"
      run_values "$BASE_REV" "$BASE_BUILD/$FUZZ_BIN" "$WORK/$name.base" "${args[@]}"
    else
      run_side "this checkout" "$KJIT_BUILD_DIR/$FUZZ_BIN" "$KJIT_ROOT" "$WORK/$name.new" "${args[@]}"
      run_side "$BASE_REV" "$BASE_BUILD/$FUZZ_BIN" "$BASE_TREE" "$WORK/$name.base" "${args[@]}"
    fi
    rc=0
    diff -rq "$WORK/$name.base" "$WORK/$name.new" >"$WORK/$name.diff" 2>&1 || rc=$?
    [ "$rc" -le 1 ] || { cat "$WORK/$name.diff" >&2; die "diff -r failed"; }
    files=$(find "$WORK/$name.new" -type f | wc -l)
    # The names of the differing files (and of those only one side has).
    sed -E -n -e 's|^Files .*/([^/]+) and .* differ$|\1|p' -e 's|^Only in [^:]*: (.*)$|\1|p' \
      "$WORK/$name.diff" | sort -V -u >"$WORK/$name.names"
    ndiff=$(wc -l <"$WORK/$name.names")
    nprog=$(seeds_of <"$WORK/$name.names" | wc -l)
    compared=$((compared + COUNT))
    differing=$((differing + nprog))
    took=$((SECONDS - started))
    per100=""
    [ "$MODE" = text ] || per100=" ($((took * 100 / COUNT)) s per 100 programs, both sides)"
    if [ "$ndiff" = 0 ]; then
      kjit_log "  $name: $COUNT programs compared ($files files): all identical, $took s$per100"
      rm -rf "$WORK/$name.new" "$WORK/$name.base" "$WORK/$name.names" "$WORK/$name.diff"
    else
      DIFFERING=1
      failed_settings+=("$name")
      kjit_log "  $name: $COUNT programs compared ($files files): $((COUNT - nprog)) identical, $nprog differ" \
        "($ndiff files), $took s$per100; the first differing files:"
      if [ "$MODE" = values ]; then
        describe_values "$WORK/$name.base" "$WORK/$name.new" "$WORK/$name.names" | sed 's/^/      /' >&2 ||
          head -n 10 "$WORK/$name.names" | sed 's/^/      /' >&2
        kjit_log "  a program: $KJIT_BUILD_DIR/$FUZZ_BIN --print <seed>; rerun one: $KJIT_BUILD_DIR/$FUZZ_BIN" \
          "--seed <seed> --count 1 --no-nvrtc --no-shrink --dump-values DIR ${args[*]} (with KJIT_NUM_THREADS=1)"
      else
        head -n 10 "$WORK/$name.names" | sed 's/^/      /' >&2
        kjit_log "  compare them with: diff $WORK/$name.base/<file> $WORK/$name.new/<file>"
      fi
    fi
  done
  done
done

if [ "$MODE" = values ]; then
  summary="values differential against $BASE_REV: ${#SPANS[@]} span x ${#BATCHES[@]} batch x ${#THREADS[@]} thread settings, $compared programs compared"
else
  summary="codegen differential against $BASE_REV: ${#SPANS[@]} span x ${#BATCHES[@]} batch settings, $compared programs compared"
fi
if [ "$DIFFERING" = 0 ]; then
  kjit_log "$summary, all identical ($((SECONDS - total_started)) s for the runs and comparisons)"
  exit 0
fi
kjit_log "$summary, $((compared - differing)) identical, $differing differing (in ${failed_settings[*]}); the dumps are in $WORK"
exit 1
