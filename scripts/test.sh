#!/usr/bin/env bash
# Builds kjit and runs the whole test suite (ctest), then builds it again with AddressSanitizer
# and UBSan (LeakSanitizer on) in build-asan and runs it there too, the JAX and torch tests excepted
# (KJIT_SANITIZERS=0 skips that second pass). Extra arguments go to both ctest runs.
# No CUDA toolkit is needed (NVRTC and the CUDA headers come from PyPI where it is absent). A
# test that skips fails the run unless it is a GPU test on a machine without a GPU or
# KJIT_ALLOW_SKIP names it (scripts/skip_policy.py); the summary counts both.
set -euo pipefail
source "$(dirname "$0")/common.sh"
source "$KJIT_ROOT/scripts/python_env.sh"
kjit_install_packages
kjit_python_env
kjit_torch_env
kjit_cuda_wheels
started=$SECONDS

# kjit_ctest DIR ARGS... — runs ctest in DIR, then the skip policy over what it ran.
kjit_ctest() {
  local dir="$1"; shift
  local rc=0
  (cd "$dir" && ctest --output-on-failure --parallel "$(nproc)" --output-junit ctest-junit.xml "$@") || rc=$?
  (cd "$dir" && ctest --show-only=json-v1 "$@" >ctest-tests.json)
  python3 "$KJIT_ROOT/scripts/skip_policy.py" "$dir/ctest-junit.xml" "$dir/ctest-tests.json" || rc=1
  return $rc
}

kjit_build
kjit_ctest "$KJIT_BUILD_DIR" "$@"
kjit_log "build and tests: $((SECONDS - started)) s"
if [ "${KJIT_SANITIZERS:-1}" != 0 ]; then
  sanitized=$SECONDS
  kjit_build_sanitized
  kjit_sanitizer_env
  # JAX and torch (and the package's own test, and the Warp JAX and torch ports) load libkjit.so into a Python that
  # carries no sanitizer runtime: not run here (an exclusion, not a skip).
  kjit_ctest "$KJIT_ASAN_BUILD_DIR" -E '^(jax_|python_|compositions_|warp_example_jax_|warp_example_cupy_|warp_example_torch$|torch_)' "$@"
  kjit_log "sanitizer build and tests: $((SECONDS - sanitized)) s; in all $((SECONDS - started)) s"
fi
