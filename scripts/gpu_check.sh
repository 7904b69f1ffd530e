#!/usr/bin/env bash
# scripts/gpu_check.sh — the GPU check: the gpu-labelled tests and the GPU benchmarks on this
# machine's NVIDIA GPU, with a short summary, all inside 8 minutes.
#
#   scripts/gpu_check.sh --stage  On the build machine (no GPU needed): builds what the check
#                                 runs and stages it into $KJIT_BUILD_DIR/gpu-bundle — stripped
#                                 binaries, libkjit.so and a module cache pre-filled with the cpu
#                                 modules and sm_90 cubins — small enough to carry to a GPU
#                                 machine that has CUDA but none of kjit's build dependencies.
#   scripts/gpu_check.sh          On the GPU machine: runs from $KJIT_BUILD_DIR/gpu-bundle, else
#                                 from a built tree in $KJIT_BUILD_DIR, else builds one when this
#                                 machine can. Exit status: 0 passed, 1 failed, 77 no usable GPU.
#
# Environment: KJIT_BUILD_DIR (default <repo>/build); KJIT_GPU_CHECK_BUDGET (seconds, default
# 470); KJIT_GPU_CHECK_PREFILL (compute capabilities the stage pre-compiles, default "9.0").
# Every step runs under `timeout`, so a wedged driver cannot hang the check.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KJIT_BUILD_DIR:-$ROOT/build}"
BUNDLE="$BUILD/gpu-bundle"
BUDGET="${KJIT_GPU_CHECK_BUDGET:-470}"
PROGRAMS=(test_gpu bench_gpu_bandwidth bench_gpu_launch_overhead kjit_demo)

log() { printf '\033[1m[gpu-check]\033[0m %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
remaining() { echo $((BUDGET - SECONDS)); }
# limit N: N seconds, capped by what is left of the budget (at least 5).
limit() { local r; r=$(remaining); [ "$1" -lt "$r" ] && r=$1; [ "$r" -lt 5 ] && r=5; echo "$r"; }

# Where a program lives in a build tree.
tree_path() {
  case "$1" in
    test_gpu) echo "$BUILD/tests/gpu/test_gpu" ;;
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
  log "building the GPU programs"
  cmake --build "$BUILD" --parallel "$(nproc)" --target kjit kjit_fake_cuda "${PROGRAMS[@]}" ||
    die "build failed"
  rm -rf "$BUNDLE"
  mkdir -p "$BUNDLE/bin" "$BUNDLE/lib" "$BUNDLE/cache"
  cp "$BUILD/lib/libkjit.so" "$BUNDLE/lib/"
  local p
  for p in "${PROGRAMS[@]}"; do cp "$(tree_path "$p")" "$BUNDLE/bin/"; done
  # Debug information is most of the size; the check needs none of it.
  for p in "$BUNDLE"/lib/* "$BUNDLE"/bin/*; do strip --strip-debug "$p" || die "strip $p failed"; done
  # Pre-fill the module cache: run the suite once against the fake driver. Its results are
  # meaningless (the fake runs no kernel) but every module it builds lands in the cache — the
  # cpu ones (so the GPU machine needs no host compiler) and cubins for the listed archs.
  local archs="${KJIT_GPU_CHECK_PREFILL:-9.0}"
  log "pre-filling the module cache (cpu and compute capability $archs)"
  KJIT_CUDA_DRIVER="$BUILD/tests/cuda/libkjit_fake_cuda.so" KJIT_FAKE_CUDA_DEVICES="$archs" \
    KJIT_CACHE_DIR="$BUNDLE/cache" LD_LIBRARY_PATH="$BUNDLE/lib:${LD_LIBRARY_PATH:-}" \
    timeout 600 "$BUNDLE/bin/test_gpu" >"$BUILD/gpu-bundle-prefill.log" 2>&1
  local built
  built=$(find "$BUNDLE/cache" -name meta.json | wc -l)
  [ "$built" -gt 0 ] || die "the cache pre-fill built no module (see $BUILD/gpu-bundle-prefill.log)"
  {
    echo "kjit GPU check bundle"
    echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) $(git -C "$ROOT" status --porcelain 2>/dev/null | grep -q . && echo '(with local changes)')"
    echo "staged: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
    echo "programs: ${PROGRAMS[*]}"
    echo "cached modules: $built (cpu, and compute capability $archs)"
  } >"$BUNDLE/MANIFEST"
  log "staged $(du -sh "$BUNDLE" | cut -f1) in $BUNDLE ($built cached module builds)"
  log "on the GPU machine, with this folder carried along: scripts/gpu_check.sh"
}

# ---------------------------------------------------------------------------------------------
# Sets BIN_<program> paths and LIB_DIR from the bundle or the tree; returns 1 when neither has
# the test program.
locate() {
  local p
  if [ -x "$BUNDLE/bin/test_gpu" ]; then
    SOURCE="bundle $BUNDLE ($(sed -n 2p "$BUNDLE/MANIFEST" 2>/dev/null))"
    LIB_DIR="$BUNDLE/lib"
    for p in "${PROGRAMS[@]}"; do eval "BIN_$p=\"$BUNDLE/bin/$p\""; done
    return 0
  fi
  if [ -x "$(tree_path test_gpu)" ]; then
    SOURCE="build tree $BUILD"
    LIB_DIR="$BUILD/lib"
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
    -DKJIT_BUILD_BENCH=ON >"$WORK/configure.log" 2>&1 ||
    { log "cannot build here: configure failed:"; tail -5 "$WORK/configure.log" >&2; return 1; }
  timeout "$(limit 300)" cmake --build "$BUILD" --parallel "$(nproc)" --target "${PROGRAMS[@]}" \
    >"$WORK/build.log" 2>&1 || { log "build failed:"; tail -15 "$WORK/build.log" >&2; return 1; }
}

run_check() {
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/kjit-gpu-check.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
  local device="unknown" tests="not run" bandwidth="not run" overhead="not run" demo="not run"
  local status=0

  # 1. The GPU, as the driver's own tool sees it.
  if command -v nvidia-smi >/dev/null 2>&1; then
    device=$(timeout -k 5 20 nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version \
      --format=csv,noheader 2>&1 | head -1)
    [ -n "$device" ] || device="nvidia-smi printed nothing"
    log "GPU: $device"
  else
    log "nvidia-smi not found: this machine may have no NVIDIA driver"
    device="no nvidia-smi"
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

  # 3. The gpu suite.
  log "gpu tests (limit $(limit 300) s)"
  timeout -k 10 "$(limit 300)" "$BIN_test_gpu" --no-colors >"$WORK/tests.log" 2>&1
  local rc=$?
  local counts
  counts=$(grep -E '^\[doctest\] (test cases|assertions):' "$WORK/tests.log" | sed 's/\[doctest\] //' | tr -s ' ' | paste -sd ';' -)
  case $rc in
    0) tests="PASSED ($counts)" ;;
    77) tests="SKIPPED: $(grep -m1 'Reason:' "$WORK/tests.log" | sed 's/^ *Reason: //')"; status=77 ;;
    124|137) tests="TIMED OUT after $(limit 300) s"; status=1 ;;
    *) tests="FAILED (exit $rc; $counts)"; status=1 ;;
  esac
  if [ $rc -ne 0 ]; then
    log "test output (last 60 lines):"
    tail -60 "$WORK/tests.log" >&2
  fi

  # 4. The benchmarks (only on a usable GPU).
  if [ $rc -ne 77 ]; then
    local b
    for b in bench_gpu_bandwidth bench_gpu_launch_overhead; do
      local bin_var="BIN_$b"
      [ -x "${!bin_var}" ] || { log "$b is missing"; continue; }
      log "$b (limit $(limit 120) s)"
      timeout -k 10 "$(limit 120)" "${!bin_var}" >"$WORK/$b.log" 2>&1 || {
        log "$b failed (exit $?):"; tail -20 "$WORK/$b.log" >&2; status=1; }
      cat "$WORK/$b.log" >&2
    done
    v() { awk -v k="$1" '$1 == "KJIT_BENCH" && $2 == k {printf "%.3g", $3}' "$WORK"/bench_gpu_*.log 2>/dev/null; }
    bandwidth="copy $(v copy_bandwidth) GB/s; saxpy $(v saxpy_bandwidth) GB/s = $(v saxpy_fraction_of_copy) of copy; adjoint/forward: saxpy $(v saxpy_adjoint_over_forward), damp $(v damp_adjoint_over_forward)"
    overhead="raw cuLaunchKernel $(v raw_launch) ns; kjit::launch +$(v kjit_launch_overhead) ns (+$(v kjit_launch_overhead_with_args) ns building the argument vector; +$(v kjit_launch_overhead_no_context) ns with no current context)"
    # 5. The README demo, when it was staged and time remains.
    if [ -x "${BIN_kjit_demo:-}" ] && [ "$(remaining)" -gt 60 ]; then
      timeout -k 5 "$(limit 90)" "$BIN_kjit_demo" >"$WORK/demo.log" 2>&1
      local drc=$?
      if [ $drc -eq 0 ]; then demo="ok ($(head -1 "$WORK/demo.log"))"
      else demo="FAILED (exit $drc)"; status=1; tail -20 "$WORK/demo.log" >&2; fi
    fi
  fi

  cat <<EOF

==================== kjit GPU check ====================
device:    $device
programs:  $SOURCE
tests:     $tests
bandwidth: $bandwidth
launch:    $overhead
demo:      $demo
time:      ${SECONDS} s
========================================================
EOF
  exit $status
}

case "${1:-}" in
  --stage) stage ;;
  ""|--run) run_check ;;
  -h|--help) sed -n '2,18p' "$0" ;;
  *) die "unknown argument '$1' (use --stage, or nothing to run the check)" ;;
esac
