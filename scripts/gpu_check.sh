#!/usr/bin/env bash
# scripts/gpu_check.sh — the GPU check: the gpu-labelled tests (C++ and JAX) and the GPU
# benchmarks on this machine's NVIDIA GPU, with a summary line per step, inside 8 minutes.
#
#   scripts/gpu_check.sh --stage  On the build machine (no GPU needed): builds what the check
#                                 runs and stages it into $KJIT_BUILD_DIR/gpu-bundle — stripped
#                                 binaries, libkjit.so, the kernel libraries and the pure-Python
#                                 shim for the JAX test, and a module cache pre-filled with the
#                                 cpu modules and sm_90 cubins — small enough to carry to a GPU
#                                 machine that has CUDA but none of kjit's build dependencies.
#   scripts/gpu_check.sh          On the GPU machine: runs from $KJIT_BUILD_DIR/gpu-bundle, else
#                                 from a built tree in $KJIT_BUILD_DIR, else builds one when this
#                                 machine can. Exit status: 0 when every step passed or skipped
#                                 (the summary says which, and why), 1 when one failed.
#
# Environment: KJIT_BUILD_DIR (default <repo>/build); KJIT_GPU_CHECK_BUDGET (seconds, default
# 450); KJIT_GPU_CHECK_PREFILL (compute capabilities the stage pre-compiles, default "9.0");
# KJIT_GPU_CHECK_PYTHON (a python to try first for the JAX test).
# Every step runs under `timeout` with its own limit, capped by what is left of the budget, so
# a wedged driver cannot hang the check.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KJIT_BUILD_DIR:-$ROOT/build}"
BUNDLE="$BUILD/gpu-bundle"
BUDGET="${KJIT_GPU_CHECK_BUDGET:-450}"
PROGRAMS=(test_gpu test_ffi_graphs_gpu bench_gpu_bandwidth bench_gpu_launch_overhead kjit_demo)
# The JAX test's libraries (kernel libraries link libkjit.so) and Python files.
LIBRARIES=(libkjit.so libdemo_kernels.so libffi_jax_test_kernels.so)
JAX_TEST_FILES=(_common.py test_jax_cpu.py test_jax_gpu.py)

log() { printf '\033[1m[gpu-check]\033[0m %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
remaining() { echo $((BUDGET - SECONDS)); }
# limit N: N seconds, capped by what is left of the budget.
limit() { local r; r=$(remaining); [ "$1" -lt "$r" ] && r=$1; echo "$r"; }

# Where a program lives in a build tree.
tree_path() {
  case "$1" in
    test_gpu) echo "$BUILD/tests/gpu/test_gpu" ;;
    test_ffi_graphs_gpu) echo "$BUILD/tests/ffi/test_ffi_graphs_gpu" ;;
    bench_*) echo "$BUILD/bench/$1" ;;
    kjit_demo) echo "$BUILD/examples/kjit_demo" ;;
  esac
}

# The folder holding libnvrtc.so.13 (the CUDA toolkit), or nothing.
cuda_lib_dir() {
  local d
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
    ls "$d"/libnvrtc.so* >/dev/null 2>&1 && { echo "$d"; return; }
  done
  d=$(ldconfig -p 2>/dev/null | awk '/libnvrtc\.so/ {print $NF; exit}')
  [ -n "$d" ] && dirname "$d"
}

# ---------------------------------------------------------------------------------------------
stage() {
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    log "configuring $BUILD"
    cmake -S "$ROOT" -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null ||
      die "cmake configure failed"
  fi
  log "building the GPU programs and libraries"
  cmake --build "$BUILD" --parallel "$(nproc)" --target kjit kjit_fake_cuda demo_kernels \
    ffi_jax_test_kernels "${PROGRAMS[@]}" || die "build failed"
  rm -rf "$BUNDLE"
  mkdir -p "$BUNDLE/bin" "$BUNDLE/lib" "$BUNDLE/cache" "$BUNDLE/python" "$BUNDLE/jax-tests"
  local p
  for p in "${LIBRARIES[@]}"; do cp "$BUILD/lib/$p" "$BUNDLE/lib/" || die "missing $BUILD/lib/$p"; done
  for p in "${PROGRAMS[@]}"; do cp "$(tree_path "$p")" "$BUNDLE/bin/" || die "missing $p"; done
  # Debug information is most of the size; the check needs none of it.
  for p in "$BUNDLE"/lib/* "$BUNDLE"/bin/*; do strip --strip-debug "$p" || die "strip $p failed"; done
  # The JAX shim is pure Python: it needs only the libraries above.
  (cd "$ROOT/python" && find kjit -name '*.py' -exec cp --parents {} "$BUNDLE/python/" \;)
  for p in "${JAX_TEST_FILES[@]}"; do cp "$ROOT/tests/ffi/python/$p" "$BUNDLE/jax-tests/"; done
  # Pre-fill the module cache: run the C++ GPU tests once against the fake driver. Their
  # results are meaningless (the fake runs no kernel) but every module they build lands in the
  # cache — the cpu ones (so the GPU machine needs no host compiler) and cubins for the archs.
  local archs="${KJIT_GPU_CHECK_PREFILL:-9.0}"
  log "pre-filling the module cache (cpu and compute capability $archs)"
  for p in test_gpu test_ffi_graphs_gpu; do
    KJIT_CUDA_DRIVER="$BUILD/tests/cuda/libkjit_fake_cuda.so" KJIT_FAKE_CUDA_DEVICES="$archs" \
      KJIT_CACHE_DIR="$BUNDLE/cache" LD_LIBRARY_PATH="$BUNDLE/lib:${LD_LIBRARY_PATH:-}" \
      timeout 600 "$BUNDLE/bin/$p" >"$BUILD/gpu-bundle-prefill-$p.log" 2>&1
  done
  local built
  built=$(find "$BUNDLE/cache" -name meta.json | wc -l)
  [ "$built" -gt 0 ] || die "the cache pre-fill built no module (see $BUILD/gpu-bundle-prefill-*.log)"
  {
    echo "kjit GPU check bundle"
    echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) $(git -C "$ROOT" status --porcelain 2>/dev/null | grep -q . && echo '(with local changes)')"
    echo "staged: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
    echo "programs: ${PROGRAMS[*]}"
    echo "libraries: ${LIBRARIES[*]}; python: kjit (shim), jax-tests: ${JAX_TEST_FILES[*]}"
    echo "cached modules: $built (cpu, and compute capability $archs)"
  } >"$BUNDLE/MANIFEST"
  log "staged $(du -sh "$BUNDLE" | cut -f1) in $BUNDLE ($built cached module builds)"
  log "on the GPU machine, with this folder carried along: scripts/gpu_check.sh"
}

# ---------------------------------------------------------------------------------------------
# Sets BIN_<program>, LIB_DIR, PY_DIR and JAX_TEST_DIR from the bundle or the tree; returns 1
# when neither has the test program.
locate() {
  local p
  if [ -x "$BUNDLE/bin/test_gpu" ]; then
    SOURCE="bundle $BUNDLE ($(sed -n 2p "$BUNDLE/MANIFEST" 2>/dev/null))"
    LIB_DIR="$BUNDLE/lib" PY_DIR="$BUNDLE/python" JAX_TEST_DIR="$BUNDLE/jax-tests"
    for p in "${PROGRAMS[@]}"; do eval "BIN_$p=\"$BUNDLE/bin/$p\""; done
    return 0
  fi
  if [ -x "$(tree_path test_gpu)" ]; then
    SOURCE="build tree $BUILD"
    LIB_DIR="$BUILD/lib" PY_DIR="$ROOT/python" JAX_TEST_DIR="$ROOT/tests/ffi/python"
    for p in "${PROGRAMS[@]}"; do eval "BIN_$p=\"$(tree_path "$p")\""; done
    return 0
  fi
  return 1
}

# Libraries a program cannot find here ("" when it can run).
missing_libs() { LD_LIBRARY_PATH="$RUN_LD_PATH" ldd "$1" 2>&1 | awk '/not found/ {print $1}' | tr '\n' ' '; }

# Builds the GPU programs in $BUILD when this machine has what that takes.
try_build() {
  command -v cmake >/dev/null 2>&1 || { log "cannot build here: no cmake"; return 1; }
  log "building in $BUILD (budget $(limit 300) s)"
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  timeout "$(limit 60)" cmake -S "$ROOT" -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    >"$WORK/configure.log" 2>&1 ||
    { log "cannot build here: configure failed:"; tail -5 "$WORK/configure.log" >&2; return 1; }
  timeout "$(limit 300)" cmake --build "$BUILD" --parallel "$(nproc)" --target "${PROGRAMS[@]}" \
    demo_kernels ffi_jax_test_kernels >"$WORK/build.log" 2>&1 ||
    { log "build failed:"; tail -15 "$WORK/build.log" >&2; return 1; }
}

SUMMARY=()
# note NAME TEXT: one line of the summary.
note() { SUMMARY+=("$(printf '%-24s %s' "$1:" "$2")"); }

# step NAME LIMIT LOG COMMAND...: runs COMMAND under timeout (its output in LOG), then sets
# STEP_RC and STEP_TIME. Skips it (STEP_RC=-1) when under 10 s of the budget are left.
step() {
  local name="$1" lim="$2" logfile="$3"
  shift 3
  STEP_TIME=0
  if [ "$(remaining)" -lt 10 ]; then
    STEP_RC=-1
    log "$name: no time left in the ${BUDGET} s budget"
    return
  fi
  lim=$(limit "$lim")
  log "$name (limit $lim s)"
  local start=$SECONDS
  timeout -k 10 "$lim" "$@" >"$logfile" 2>&1
  STEP_RC=$?
  STEP_TIME=$((SECONDS - start))
  [ "$STEP_RC" -eq 124 ] || [ "$STEP_RC" -eq 137 ] && STEP_RC=124
}

# The skip reason a program printed: its "Reason:" line, else its first SKIP line.
skip_reason() {
  { grep -m1 'Reason:' "$1" || grep -m1 'SKIP' "$1"; } | sed -E 's/^ *(Reason: *|SKIP(PED)?:? *)//'
}

# judge NAME LOG [COUNTS]: the summary line of the last step: PASSED, SKIPPED (exit 77, with
# the reason the program printed), TIMED OUT or FAILED (with the end of its output). Sets
# status=1 on a failure.
judge() {
  local name="$1" logfile="$2" detail="${3:-}"
  case $STEP_RC in
    -1) note "$name" "NOT RUN: the ${BUDGET} s budget was spent" ;;
    0) note "$name" "PASSED${detail:+ ($detail)} [${STEP_TIME} s]" ;;
    77) note "$name" "SKIPPED: $(skip_reason "$logfile")" ;;
    124) note "$name" "TIMED OUT after ${STEP_TIME} s"; status=1 ;;
    *) note "$name" "FAILED (exit $STEP_RC${detail:+; $detail}) [${STEP_TIME} s]"; status=1 ;;
  esac
  if [ "$STEP_RC" -ne 0 ] && [ "$STEP_RC" -ne 77 ] && [ "$STEP_RC" -ne -1 ]; then
    log "$name output (last 40 lines):"
    tail -40 "$logfile" >&2
  fi
}

doctest_counts() {
  grep -E '^\[doctest\] (test cases|assertions):' "$1" | sed 's/\[doctest\] //' | tr -s ' ' | paste -sd ';' -
}

# Sets JAX_PYTHON to the first python whose jax has a CUDA backend (else empty), and
# JAX_PROBES to what each candidate said.
find_jax_python() {
  JAX_PYTHON="" JAX_PROBES=""
  local candidates=() seen=" " py real out rc name dir
  [ -n "${KJIT_GPU_CHECK_PYTHON:-}" ] && candidates+=("$KJIT_GPU_CHECK_PYTHON")
  candidates+=(/usr/bin/python3)
  [ -x "$ROOT/.venv/bin/python" ] && candidates+=("$ROOT/.venv/bin/python")
  [ -x "$ROOT/.venv-jax-new/bin/python" ] && candidates+=("$ROOT/.venv-jax-new/bin/python")
  local IFS=:
  for dir in $PATH; do
    for py in "$dir"/python3 "$dir"/python "$dir"/python3.[0-9]*; do
      [[ "$(basename "$py")" =~ ^python(3(\.[0-9]+)?)?$ ]] && [ -x "$py" ] && candidates+=("$py")
    done
  done
  unset IFS
  local probe='import sys, jax
d = jax.devices()
print("jax", jax.__version__, "devices", [str(x) for x in d])
sys.exit(0 if any(x.platform == "gpu" for x in d) else 3)'
  for py in "${candidates[@]}"; do
    [ -x "$py" ] || continue
    real=$(readlink -f "$py")
    case "$seen" in *" $real "*) continue ;; esac
    seen="$seen$real "
    [ "$(remaining)" -lt 30 ] && { JAX_PROBES+="$py: not probed (budget); "; continue; }
    out=$(timeout -k 5 "$(limit 60)" "$py" -c "$probe" 2>&1)
    rc=$?
    case $rc in
      0) JAX_PYTHON="$py"; JAX_PROBES+="$py: $(echo "$out" | grep '^jax ' | tail -1); "
         log "JAX with a CUDA backend: $py ($(echo "$out" | grep '^jax ' | tail -1))"
         return ;;
      3) JAX_PROBES+="$py: $(echo "$out" | grep '^jax ' | tail -1), no GPU backend; " ;;
      124|137) JAX_PROBES+="$py: timed out importing jax; " ;;
      *) JAX_PROBES+="$py: $(echo "$out" | grep -m1 -E 'Error|error' | sed 's/^ModuleNotFoundError: //' ||
                              echo "cannot run (exit $rc)"); " ;;
    esac
  done
  log "no python with a CUDA-enabled jax: ${JAX_PROBES:-no python found}"
}

run_check() {
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/kjit-gpu-check.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
  local device="unknown"
  status=0

  # 1. The GPU, as the driver's own tool sees it.
  if command -v nvidia-smi >/dev/null 2>&1; then
    device=$(timeout -k 5 20 nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version \
      --format=csv,noheader 2>&1 | head -1)
    [ -n "$device" ] || device="nvidia-smi printed nothing"
    log "GPU: $device"
  else
    log "nvidia-smi not found: this machine may have no NVIDIA driver"
    device="no nvidia-smi (no NVIDIA driver?)"
  fi

  # 2. The programs, and the libraries they need.
  local cuda_lib
  cuda_lib=$(cuda_lib_dir)
  [ -n "$cuda_lib" ] || log "libnvrtc.so not found in /usr/local/cuda or ldconfig: is CUDA installed?"
  locate || { log "no GPU programs in $BUNDLE or $BUILD"; try_build && locate; } ||
    die "nothing to run: stage a bundle (scripts/gpu_check.sh --stage) or build in $BUILD"
  RUN_LD_PATH="$LIB_DIR${cuda_lib:+:$cuda_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local missing
  missing=$(missing_libs "$BIN_test_gpu")
  if [ -n "$missing" ]; then
    log "the programs in $SOURCE cannot load here (missing: $missing)"
    try_build && locate && missing=$(missing_libs "$BIN_test_gpu")
    [ -z "$missing" ] || die "cannot run the GPU programs: missing $missing"
  fi
  log "running from $SOURCE"
  # A writable copy of the pre-filled cache (modules for other archs are compiled on the spot).
  mkdir -p "$WORK/cache"
  [ -d "$BUNDLE/cache" ] && cp -r "$BUNDLE/cache/." "$WORK/cache/"
  export KJIT_CACHE_DIR="$WORK/cache"
  export LD_LIBRARY_PATH="$RUN_LD_PATH"

  # 3. The C++ gpu suites.
  step "gpu tests" 180 "$WORK/tests.log" "$BIN_test_gpu" --no-colors
  judge "gpu tests" "$WORK/tests.log" "$(doctest_counts "$WORK/tests.log")"
  step "ffi graphs gpu" 60 "$WORK/ffi_graphs.log" "$BIN_test_ffi_graphs_gpu" --no-colors
  judge "ffi graphs gpu" "$WORK/ffi_graphs.log" "$(doctest_counts "$WORK/ffi_graphs.log")"

  # 4. The benchmarks (they print SKIPPED and exit 0 without a usable GPU).
  local b
  local b name
  for b in bench_gpu_bandwidth bench_gpu_launch_overhead; do
    local bin_var="BIN_$b"
    name="bench ${b#bench_gpu_}"
    step "$name" 60 "$WORK/$b.log" "${!bin_var}"
    if [ "$STEP_RC" -eq 0 ] && grep -q SKIPPED "$WORK/$b.log"; then
      note "$name" "SKIPPED: $(grep -m1 SKIPPED "$WORK/$b.log" | sed 's/^[^:]*: SKIPPED, //')"
    else
      judge "$name" "$WORK/$b.log"
    fi
    [ "$STEP_RC" -eq 0 ] && cat "$WORK/$b.log" >&2
  done
  v() { awk -v k="$1" '$1 == "KJIT_BENCH" && $2 == k {printf "%.3g", $3}' "$WORK"/bench_gpu_*.log 2>/dev/null; }
  if grep -q '^KJIT_BENCH' "$WORK"/bench_gpu_*.log 2>/dev/null; then
    note "bandwidth" "copy $(v copy_bandwidth) GB/s; saxpy $(v saxpy_bandwidth) GB/s = $(v saxpy_fraction_of_copy) of copy; adjoint/forward: saxpy $(v saxpy_adjoint_over_forward), damp $(v damp_adjoint_over_forward)"
    note "launch" "raw cuLaunchKernel $(v raw_launch) ns; kjit::launch +$(v kjit_launch_overhead) ns (+$(v kjit_launch_overhead_with_args) ns building the argument vector; +$(v kjit_launch_overhead_no_context) ns with no current context)"
  fi

  # 5. The README demo (on cuda:0 when a GPU is usable, else on the cpu).
  step "demo" 45 "$WORK/demo.log" "$BIN_kjit_demo"
  judge "demo" "$WORK/demo.log" "$(head -1 "$WORK/demo.log")"

  # 6. The JAX GPU test, with a python whose jax has a CUDA backend.
  if [ "$(remaining)" -lt 40 ]; then
    note "jax gpu" "NOT RUN: the ${BUDGET} s budget was spent"
  else
    find_jax_python
    if [ -z "$JAX_PYTHON" ]; then
      note "jax gpu" "SKIPPED: no python with a CUDA-enabled jax (${JAX_PROBES:-no python found})"
    else
      step "jax gpu" 150 "$WORK/jax.log" env -C "$JAX_TEST_DIR" PYTHONPATH="$PY_DIR" \
        KJIT_DEMO_LIBRARY="$LIB_DIR/libdemo_kernels.so" \
        KJIT_TEST_LIBRARY="$LIB_DIR/libffi_jax_test_kernels.so" "$JAX_PYTHON" test_jax_gpu.py
      judge "jax gpu" "$WORK/jax.log" "$JAX_PYTHON; $(grep -E '^(Ran|OK|FAILED)' "$WORK/jax.log" | paste -sd ' ' -)"
    fi
  fi

  local verdict="PASSED"
  [ $status -ne 0 ] && verdict="FAILED"
  printf '%s\n' "${SUMMARY[@]}" | grep -q 'SKIPPED' && [ $status -eq 0 ] && verdict="PASSED (with skipped steps)"
  {
    echo
    echo "==================== kjit GPU check ===================="
    printf '%-24s %s\n' "device:" "$device" "programs:" "$SOURCE"
    printf '%s\n' "${SUMMARY[@]}"
    printf '%-24s %s\n' "result:" "$verdict" "time:" "${SECONDS} s"
    echo "========================================================"
  }
  exit $status
}

case "${1:-}" in
  --stage) stage ;;
  ""|--run) run_check ;;
  -h|--help) sed -n '2,20p' "$0" ;;
  *) die "unknown argument '$1' (use --stage, or nothing to run the check)" ;;
esac
