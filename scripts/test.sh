#!/usr/bin/env bash
# Builds kjit and runs the whole test suite (ctest). Extra arguments go to ctest.
set -euo pipefail
source "$(dirname "$0")/common.sh"
kjit_install_packages
[ -f "$KJIT_ROOT/scripts/python_env.sh" ] && source "$KJIT_ROOT/scripts/python_env.sh" && kjit_python_env
kjit_build
cd "$KJIT_BUILD_DIR"
ctest --output-on-failure --parallel "$(nproc)" "$@"
