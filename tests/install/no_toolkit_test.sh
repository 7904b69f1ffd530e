#!/usr/bin/env bash
# The README's demo command on a machine without the CUDA toolkit: under
# scripts/without_toolkit.sh (a private mount namespace that hides every /usr/local/cuda* folder,
# with CUDA_HOME, CUDA_PATH and LIBRARY_PATH unset and nothing of the toolkit on PATH), a copy
# of the checkout's tracked files (a clean clone of the working tree) runs ./scripts/demo.sh: it configures, builds the library, the tool and the
# demo, fetches NVRTC and the CUDA headers from PyPI into its own venv, and the demo passes its
# checks (its sm_90 step compiles with the wheel's NVRTC). Then `kjit devices` and
# `kjit precompile --arch sm_90` say they use that NVRTC, and a configure with the tests finds
# the wheel's headers for the declaration checks.
# Exits 77 (skipped, saying why) where the machine allows no mount namespace.
# Usage: no_toolkit_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
trap 'echo "FAIL: line $LINENO: \"$BASH_COMMAND\" exited $?"' ERR
src="$1"
work="$2"

if [ "${KJIT_NO_TOOLKIT_STAGE:-}" != inside ]; then
  rm -rf "$work"
  # A clean clone of the working tree: the files as they are now, nothing built.
  "$src/scripts/copy_checkout.sh" "$src" "$work/kjit"
  export KJIT_NO_TOOLKIT_STAGE=inside
  exec "$src/scripts/without_toolkit.sh" "$0" "$@"
fi

cd "$work/kjit"
export KJIT_BUILD_DIR="$work/build" KJIT_CACHE_DIR="$work/cache" KJIT_VENV="$work/kjit/.venv"
started=$SECONDS
./scripts/demo.sh >"$work/demo.log" 2>&1 || { cat "$work/demo.log"; echo "FAIL: ./scripts/demo.sh failed"; exit 1; }
cat "$work/demo.log"
echo "demo.sh: $((SECONDS - started)) s"
grep -q "All checks passed." "$work/demo.log" || { echo "FAIL: the demo did not pass its checks"; exit 1; }
grep -q "^   NVRTC .*(the project venv's nvidia-cuda-nvrtc: " "$work/demo.log" ||
  { echo "FAIL: the demo's sm_90 step did not use the wheel's NVRTC"; exit 1; }
grep -Eq "^   saxpy +compiled .* bytes" "$work/demo.log" || { echo "FAIL: the demo built nothing for sm_90"; exit 1; }

tool="$work/build/tools/kjit"
devices="$("$tool" devices)"
echo "$devices"
echo "$devices" | head -1 | grep -q "^NVRTC .*(the project venv's nvidia-cuda-nvrtc: $work/kjit/.venv/" ||
  { echo "FAIL: kjit devices does not say it uses the wheel's NVRTC"; exit 1; }
pre="$("$tool" precompile "$work/build/lib/libdemo_kernels.so" --arch sm_90 --module saxpy --cache-dir "$work/cache-pre")"
echo "$pre"
echo "$pre" | grep -q "GPU targets: NVRTC .*nvidia-cuda-nvrtc" ||
  { echo "FAIL: kjit precompile does not say which NVRTC it used"; exit 1; }

# The suite configures without the toolkit, and its declaration checks take the wheel's headers.
cmake -S "$work/kjit" -B "$work/build-tests" -DKJIT_BUILD_BENCH=OFF >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; echo "FAIL: configuring the tests without the toolkit failed"; exit 1; }
grep -q "checked against the PyPI wheels nvidia-cuda-runtime and nvidia-cuda-nvrtc" "$work/configure.log" ||
  { cat "$work/configure.log"; echo "FAIL: the declaration checks did not find the wheels' headers"; exit 1; }
echo "PASS: no CUDA toolkit needed (demo, devices, precompile sm_90, test configure)"
