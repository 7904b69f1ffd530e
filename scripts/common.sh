# scripts/common.sh — set-up shared by the README's commands: packages, configure, build.
# Sourced, not run. Every step is idempotent and quick when already done.

KJIT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KJIT_BUILD_DIR="${KJIT_BUILD_DIR:-$KJIT_ROOT/build}"
KJIT_ASAN_BUILD_DIR="${KJIT_ASAN_BUILD_DIR:-$KJIT_ROOT/build-asan}"
KJIT_APT_PACKAGES=(cmake ninja-build g++ llvm-14-dev nlohmann-json3-dev doctest-dev libbenchmark-dev
                   libssl-dev python3-venv)

# ccache keys name paths relative to the checkout and leave the build folder out, so that
# clones and worktrees of the same tree share one cache (only the debug info's folder differs).
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$KJIT_ROOT}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"

kjit_log() { printf '\033[1m[kjit]\033[0m %s\n' "$*" >&2; }

# Installs the Debian packages that are missing (apt-get update only when something is).
kjit_install_packages() {
  local missing=()
  for p in "${KJIT_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    kjit_log "installing ${missing[*]}"
    local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# The CMake options both builds share: Ninja and ccache where installed, and the CUDA toolkit's
# root where one is (it is optional: only the tests that check kjit's driver and NVRTC
# declarations read its headers, and they take the PyPI wheels' headers where it is absent).
kjit_cmake_common() {
  KJIT_CMAKE_COMMON=()
  command -v ninja >/dev/null 2>&1 && KJIT_CMAKE_COMMON+=(-G Ninja)
  command -v ccache >/dev/null 2>&1 &&
    KJIT_CMAKE_COMMON+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  [ -d /usr/local/cuda ] && KJIT_CMAKE_COMMON+=(-DCUDAToolkit_ROOT=/usr/local/cuda)
  return 0
}

# Configures (once) the tree in $KJIT_BUILD_DIR — warnings are errors there (KJIT_WERROR) —
# and builds the targets named (kjit_build kjit kjit_tool), or everything.
kjit_build() {
  kjit_cmake_common
  if ! grep -qs '^KJIT_WERROR:BOOL=ON' "$KJIT_BUILD_DIR/CMakeCache.txt"; then
    kjit_log "configuring $KJIT_BUILD_DIR"
    cmake -S "$KJIT_ROOT" -B "$KJIT_BUILD_DIR" "${KJIT_CMAKE_COMMON[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DKJIT_WERROR=ON >/dev/null
  fi
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  kjit_log "building ${*:-everything}"
  cmake --build "$KJIT_BUILD_DIR" --parallel "$(nproc)" "${targets[@]}"
}

# Configures (once) and builds the suite with AddressSanitizer and UndefinedBehaviorSanitizer
# in $KJIT_ASAN_BUILD_DIR: lean (-O1, line tables only, no benchmarks), so that CI stays fast.
# Its tests share the plain build's module caches (KJIT_TEST_CACHE_ROOT, tests/CMakeLists.txt
# says why): run after the plain build's tests, they compile almost nothing again.
kjit_build_sanitized() {
  kjit_cmake_common
  if ! grep -qs "^KJIT_TEST_CACHE_ROOT:PATH=$KJIT_BUILD_DIR/test-cache\$" "$KJIT_ASAN_BUILD_DIR/CMakeCache.txt"; then
    kjit_log "configuring $KJIT_ASAN_BUILD_DIR (AddressSanitizer + UBSan)"
    cmake -S "$KJIT_ROOT" -B "$KJIT_ASAN_BUILD_DIR" "${KJIT_CMAKE_COMMON[@]}" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DKJIT_SANITIZE=address,undefined -DKJIT_BUILD_BENCH=OFF \
      -DKJIT_TEST_CACHE_ROOT="$KJIT_BUILD_DIR/test-cache" -DKJIT_WERROR=ON >/dev/null
  fi
  kjit_log "building the sanitizer build"
  cmake --build "$KJIT_ASAN_BUILD_DIR" --parallel "$(nproc)"
}

# The sanitizers' settings for a test run: any report fails, leaks included; the fake CUDA
# driver's deliberate leaks are suppressed (tests/sanitizers/lsan.supp says why). An
# allocation too large to satisfy returns null, as malloc does, rather than aborting: the
# tests ask for such sizes on purpose to check kjit's out-of-memory errors.
kjit_sanitizer_env() {
  export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:detect_odr_violation=1:allocator_may_return_null=1"
  export LSAN_OPTIONS="suppressions=$KJIT_ROOT/tests/sanitizers/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
}
