#!/usr/bin/env bash
# scripts/codegen_differential.sh BASE_REV [COUNT] [SEED] — the differential test of code
# generation: checks that this checkout generates, bit for bit, the same module texts as
# BASE_REV (a refactor of codegen/ must change none) over COUNT random programs (default 5000)
# from seed SEED (default 1).
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
# Exit status: 0 when every text is identical; 1 when any differs (that setting's dumps are
# kept, and the first differing files named); 2 when the test could not run.
#
# Environment: KJIT_BUILD_DIR; KJIT_DIFF_SPANS (default "default 8"); KJIT_DIFF_BATCHES (default
# "16 1"); KJIT_DIFF_ARGS (more options for both runs, e.g. "--no-tangents" or "--avoid-known");
# KJIT_DIFF_BASE_DIR (keep the base's worktree and build there and reuse them: a rerun rebuilds
# only what changed instead of the whole library); KJIT_DIFF_WORK (where the dumps go; default a
# new temporary folder, removed when every text was identical).
set -euo pipefail
source "$(dirname "$0")/common.sh"

die() { kjit_log "ERROR: $*"; exit 2; }

[ $# -ge 1 ] && [ $# -le 3 ] || { sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
BASE_REV="$1"
COUNT="${2:-5000}"
SEED="${3:-1}"
[[ "$COUNT" =~ ^[0-9]+$ && "$COUNT" -gt 0 ]] || die "COUNT must be a positive number, not '$COUNT'"
[[ "$SEED" =~ ^[0-9]+$ ]] || die "SEED must be a number, not '$SEED'"
read -r -a SPANS <<< "${KJIT_DIFF_SPANS:-default 8}"
read -r -a BATCHES <<< "${KJIT_DIFF_BATCHES:-16 1}"
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
    name="span-$span.batch-$batch"
    args=(--batch "$batch" "${EXTRA_ARGS[@]}")
    [ "$span" = default ] || args+=(--adjoint-span "$span")
    kjit_log "$name: $COUNT programs from seed $SEED, ${args[*]}"
    started=$SECONDS
    run_side "this checkout" "$KJIT_BUILD_DIR/$FUZZ_BIN" "$KJIT_ROOT" "$WORK/$name.new" "${args[@]}"
    run_side "$BASE_REV" "$BASE_BUILD/$FUZZ_BIN" "$BASE_TREE" "$WORK/$name.base" "${args[@]}"
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
    if [ "$ndiff" = 0 ]; then
      kjit_log "  $name: $COUNT programs compared ($files files): all identical, $((SECONDS - started)) s"
      rm -rf "$WORK/$name.new" "$WORK/$name.base" "$WORK/$name.names" "$WORK/$name.diff"
    else
      DIFFERING=1
      failed_settings+=("$name")
      kjit_log "  $name: $COUNT programs compared ($files files): $((COUNT - nprog)) identical, $nprog differ" \
        "($ndiff files), $((SECONDS - started)) s; the first differing files:"
      head -n 10 "$WORK/$name.names" | sed 's/^/      /' >&2
      kjit_log "  compare them with: diff $WORK/$name.base/<file> $WORK/$name.new/<file>"
    fi
  done
done

summary="codegen differential against $BASE_REV: ${#SPANS[@]} span x ${#BATCHES[@]} batch settings, $compared programs compared"
if [ "$DIFFERING" = 0 ]; then
  kjit_log "$summary, all identical ($((SECONDS - total_started)) s for the runs and comparisons)"
  exit 0
fi
kjit_log "$summary, $((compared - differing)) identical, $differing differing (in ${failed_settings[*]}); the dumps are in $WORK"
exit 1
