#!/usr/bin/env bash
# Builds kjit, then defines, compiles, caches and launches the demo kernels forward and
# backward on the default device (cuda:0 when usable, else cpu). Run it twice: the second
# run is served from the disk cache with no compiler run.
set -euo pipefail
source "$(dirname "$0")/common.sh"
kjit_install_packages
# NVRTC from PyPI when the toolkit has none (the venv is created for it if need be).
source "$KJIT_ROOT/scripts/python_env.sh"
kjit_have_toolkit_nvrtc || { kjit_python_env && kjit_nvrtc_wheel; }
kjit_build
exec "$KJIT_BUILD_DIR/examples/kjit_demo" "$@"
