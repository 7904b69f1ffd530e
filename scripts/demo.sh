#!/usr/bin/env bash
# Builds the library, the kjit tool, the demo and its kernel library (build/lib/libdemo_kernels.so,
# for `kjit precompile` and JAX) — not the tests, which are scripts/test.sh's business — then
# defines, compiles, caches and launches the demo kernels forward and backward on the default device (cuda:0 when usable, else cpu). Run it twice: the second run is served
# from the disk cache with no compiler run. No CUDA toolkit is needed: where there is none,
# NVRTC (for the demo's sm_90 build) comes from PyPI into the project venv.
set -euo pipefail
source "$(dirname "$0")/common.sh"
source "$KJIT_ROOT/scripts/python_env.sh"
kjit_install_packages
kjit_cuda_wheels
started=$SECONDS
kjit_build kjit kjit_tool kjit_demo demo_kernels
kjit_log "library, tool, demo and its kernel library built in $((SECONDS - started)) s"
exec "$KJIT_BUILD_DIR/examples/kjit_demo" "$@"
