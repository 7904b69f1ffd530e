#!/usr/bin/env bash
# Builds kjit and runs the whole test suite (ctest), then builds it again with AddressSanitizer
# and UBSan (LeakSanitizer on) in build-asan and runs it there too, the JAX tests excepted
# (KJIT_SANITIZERS=0 skips that second pass). Extra arguments go to both ctest runs.
set -euo pipefail
source "$(dirname "$0")/common.sh"
kjit_install_packages
[ -f "$KJIT_ROOT/scripts/python_env.sh" ] && source "$KJIT_ROOT/scripts/python_env.sh" && kjit_python_env && kjit_nvrtc_wheel
started=$SECONDS
kjit_build
(cd "$KJIT_BUILD_DIR" && ctest --output-on-failure --parallel "$(nproc)" "$@")
kjit_log "build and tests: $((SECONDS - started)) s"
if [ "${KJIT_SANITIZERS:-1}" != 0 ]; then
  sanitized=$SECONDS
  kjit_build_sanitized
  kjit_sanitizer_env
  # JAX (and the package's own test) load libkjit.so into a Python that carries no sanitizer
  # runtime: skipped here.
  (cd "$KJIT_ASAN_BUILD_DIR" && ctest --output-on-failure --parallel "$(nproc)" -E '^(jax_|python_)' "$@")
  kjit_log "sanitizer build and tests: $((SECONDS - sanitized)) s; in all $((SECONDS - started)) s"
fi
