#!/usr/bin/env bash
# Builds kjit, then defines, compiles, caches and launches the demo kernels forward and
# backward on the default device (cuda:0 when usable, else cpu). Run it twice: the second
# run is served from the disk cache with no compiler run.
set -euo pipefail
source "$(dirname "$0")/common.sh"
kjit_install_packages
kjit_build
exec "$KJIT_BUILD_DIR/examples/kjit_demo" "$@"
