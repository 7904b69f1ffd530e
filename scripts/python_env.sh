# scripts/python_env.sh — the project-local Python environments: .venv with the oldest JAX kjit
# supports (and, where no CUDA toolkit is installed, NVRTC and the CUDA headers from PyPI),
# .venv-jax-new with the newest JAX on PyPI, each on an interpreter that JAX supports.
# Sourced, not run: scripts/test.sh calls kjit_python_env and kjit_cuda_wheels, scripts/demo.sh
# kjit_cuda_wheels only. Idempotent: a venv that already holds its pins on its interpreter is
# left alone, without touching the network.

# Pinned versions (CPU jaxlib; CI has no GPU). setuptools lets the tests pip-install ./python
# without build isolation, that is without the network. JAX >= 0.11 needs Python >= 3.12: where
# no such interpreter is installed, the newest-JAX venv gets the newest JAX Python 3.11 allows.
KJIT_JAX_OLDEST=0.7.2
KJIT_JAX_NEWEST=0.12.0.1
KJIT_JAX_NEWEST_PY311=0.10.2
KJIT_PY_PINS=(jax==$KJIT_JAX_OLDEST jaxlib==$KJIT_JAX_OLDEST numpy==2.3.5 setuptools==80.9.0)
KJIT_PY_PINS_NEWEST=(jax==$KJIT_JAX_NEWEST jaxlib==$KJIT_JAX_NEWEST numpy==2.4.6 setuptools==80.9.0)
KJIT_PY_PINS_NEWEST_PY311=(jax==$KJIT_JAX_NEWEST_PY311 jaxlib==$KJIT_JAX_NEWEST_PY311 numpy==2.4.6 setuptools==80.9.0)
# NVRTC and the driver/NVRTC headers (for the tests that check kjit's declarations) from PyPI.
KJIT_CUDA_WHEELS=("nvidia-cuda-nvrtc==13.0.88" "nvidia-cuda-runtime==13.0.96")

# kjit_python_version PY — "3.12" for an interpreter that runs and can make venvs, else nothing.
kjit_python_version() {
  "$1" -c 'import sys, venv, ensurepip; print("%d.%d" % sys.version_info[:2])' 2>/dev/null
}

# kjit_find_python MIN MAX — prints the oldest working interpreter whose version is in
# [3.MIN, 3.MAX] (the JAX pins say which versions they support; the oldest keeps the venvs
# stable as newer Pythons get installed): python3.MIN... on PATH (pyenv's shims answer only for
# the selected version, so they are tried, not trusted), pyenv's, uv's and deadsnakes' folders,
# then python3. Prints nothing when there is none.
kjit_find_python() {
  local min="$1" max="$2" minor cand ver
  local pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
  command -v pyenv >/dev/null 2>&1 && pyenv_root="$(pyenv root 2>/dev/null || echo "$pyenv_root")"
  for ((minor = min; minor <= max; ++minor)); do
    for cand in "$(command -v "python3.$minor" 2>/dev/null)" \
                "$pyenv_root"/versions/3."$minor".*/bin/python3."$minor" \
                "$HOME"/.local/share/uv/python/cpython-3."$minor".*/bin/python3."$minor" \
                /usr/local/bin/python3."$minor" /usr/bin/python3."$minor"; do
      [ -n "$cand" ] && [ -x "$cand" ] || continue
      ver="$(kjit_python_version "$cand")"
      [ "$ver" = "3.$minor" ] && { echo "$cand"; return 0; }
    done
  done
  cand="$(command -v python3 2>/dev/null)" || return 0
  ver="$(kjit_python_version "$cand")"
  [ -n "$ver" ] && [ "${ver#3.}" -ge "$min" ] && [ "${ver#3.}" -le "$max" ] && echo "$cand"
  return 0
}

# kjit_python_venv VENV PY PIN... — creates or refreshes one venv on interpreter PY with exactly
# these pins (a venv on another Python version is made anew). A failure is reported and returns
# 1: the caller says what will not be tested, and the test run fails on the skipped tests
# unless KJIT_ALLOW_SKIP names them (scripts/skip_policy.py).
kjit_python_venv() {
  local venv="$1" py="$2"; shift 2
  local want="python$(kjit_python_version "$py") $*" ready=0
  kjit_venv_prepare "$venv" "$py" "$want" || ready=$?  # (set -e callers)
  [ "$ready" = 2 ] || return "$ready"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" ||
    { printf '[kjit] pip install into %s failed\n' "$venv" >&2; return 1; }
  printf '%s' "$want" >"$venv/.kjit-pins"
}

# kjit_venv_prepare VENV PY WANT — 0 when VENV already holds WANT (the first line of its
# .kjit-pins stamp), without touching the network; else 2 with VENV a venv on PY, ready for pip
# (made anew where it was on another Python version), or 1 when it cannot be made (said).
kjit_venv_prepare() {
  local venv="$1" py="$2" want="$3"
  local stamp="$venv/.kjit-pins"
  if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "$want" ]; then
    return 0
  fi
  printf '[kjit] preparing %s: %s\n' "$venv" "$want" >&2
  if [ -x "$venv/bin/python" ] && [ "$(kjit_python_version "$venv/bin/python")" != "$(kjit_python_version "$py")" ]; then
    rm -rf "$venv"
  fi
  if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv" || { printf '[kjit] cannot create %s with %s\n' "$venv" "$py" >&2; return 1; }
  fi
  return 2
}

# Creates or refreshes $KJIT_ROOT/.venv (KJIT_VENV overrides the folder: JAX 0.7.2 on Python
# 3.11, else 3.12 or 3.13) and $KJIT_ROOT/.venv-jax-new (KJIT_VENV_NEWEST: the newest JAX, on the newest
# Python 3.12/3.13 installed, else 0.10.2 on 3.11, said loudly). Returns 0 either way: a venv
# that could not be made leaves its tests skipped, which fails the run (skip_policy.py).
kjit_python_env() {
  local root="${KJIT_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
  local old new pins_old=("${KJIT_PY_PINS[@]}") pins_new
  if [ "${KJIT_JAX_CUDA:-0}" = 1 ]; then pins_old+=("jax[cuda12]==$KJIT_JAX_OLDEST"); fi
  old="$(kjit_find_python 11 13)"
  if [ -z "$old" ]; then
    printf '[kjit] no Python 3.11-3.13 found: JAX %s cannot be installed (its tests will fail as skipped)\n' \
      "$KJIT_JAX_OLDEST" >&2
  else
    kjit_python_venv "${KJIT_VENV:-$root/.venv}" "$old" "${pins_old[@]}" ||
      printf '[kjit] the oldest-JAX tests cannot run (they will fail as skipped)\n' >&2
  fi
  new="$(kjit_find_python 12 13)"
  if [ -n "$new" ]; then
    pins_new=("${KJIT_PY_PINS_NEWEST[@]}")
  else
    new="$old"
    pins_new=("${KJIT_PY_PINS_NEWEST_PY311[@]}")
    printf '[kjit] no Python >= 3.12 found (PATH, pyenv, uv, /usr/bin): the newest-JAX tests run JAX %s, the newest ' \
      "$KJIT_JAX_NEWEST_PY311" >&2
    printf 'Python %s allows; install Python 3.12 or 3.13 to test JAX %s\n' "$(kjit_python_version "${new:-python3}")" \
      "$KJIT_JAX_NEWEST" >&2
  fi
  if [ "${KJIT_JAX_CUDA:-0}" = 1 ]; then pins_new+=("jax[cuda12]==${pins_new[0]#jax==}"); fi
  if [ -n "$new" ]; then
    kjit_python_venv "${KJIT_VENV_NEWEST:-$root/.venv-jax-new}" "$new" "${pins_new[@]}" ||
      printf '[kjit] the newest-JAX tests cannot run (they will fail as skipped)\n' >&2
  fi
  return 0
}

# Whether the CUDA toolkit is installed where kjit and CMake look (CUDA_PATH, CUDA_HOME,
# /usr/local/cuda): its NVRTC and its headers.
kjit_have_toolkit() {
  local dir
  for dir in ${CUDA_PATH:+"$CUDA_PATH"} ${CUDA_HOME:+"$CUDA_HOME"} /usr/local/cuda; do
    [ -f "$dir/include/cuda.h" ] && [ -f "$dir/include/nvrtc.h" ] &&
      compgen -G "$dir/lib*/libnvrtc.so.1[23]" >/dev/null && return 0
  done
  return 1
}

# Installs NVRTC and the CUDA headers from PyPI (nvidia-cuda-nvrtc, nvidia-cuda-runtime) into
# the project venv when no toolkit is installed: kjit finds the wheel's NVRTC there at run time
# (docs/CUDA.md), and CMake the headers (tests/CMakeLists.txt). Creates the venv if need be
# (nothing else: the JAX pins are kjit_python_env's). Idempotent: returns at once when a toolkit
# is installed or the venv already holds the wheels. A failure is reported and returns 0: the
# GPU-target tests then fail saying how to get NVRTC; the demo skips its NVRTC step, saying so.
kjit_cuda_wheels() {
  local root="${KJIT_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
  local venv="${KJIT_VENV:-$root/.venv}" py
  kjit_have_toolkit && return 0
  compgen -G "$venv/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.13" >/dev/null &&
    compgen -G "$venv/lib/python3*/site-packages/nvidia/cu13/include/cuda.h" >/dev/null && return 0
  if [ ! -x "$venv/bin/python" ]; then
    py="$(kjit_find_python 11 13)"
    if [ -z "$py" ] || ! "$py" -m venv "$venv"; then
      printf '[kjit] no Python venv at %s: cannot install NVRTC from PyPI\n' "$venv" >&2
      return 0
    fi
  fi
  printf '[kjit] no CUDA toolkit: installing %s into %s\n' "${KJIT_CUDA_WHEELS[*]}" "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${KJIT_CUDA_WHEELS[@]}" ||
    printf '[kjit] pip install of NVRTC failed: GPU targets cannot be compiled\n' >&2
  return 0
}

# torch for kjit.torch's tests, in its own venv (.venv-torch; KJIT_VENV_TORCH overrides), so
# that no JAX venv ever holds torch. The CPU wheel index comes first (a few hundred MB); where
# it cannot be reached, PyPI's torch (which pulls the CUDA libraries: several GB, said loudly).
KJIT_TORCH_VERSION=2.15.0
KJIT_TORCH_PINS=(torch==$KJIT_TORCH_VERSION numpy==2.3.5 setuptools==80.9.0)
KJIT_TORCH_CPU_INDEX=https://download.pytorch.org/whl/cpu

# Creates or refreshes the torch venv on a Python 3.11-3.13. Idempotent (a stamp holds the pins
# and the index they came from: a venv with them is left alone, without the network). Returns 0
# either way: a venv that could not be made leaves the torch tests skipped, which fails the run
# (skip_policy.py).
kjit_torch_env() {
  local root="${KJIT_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
  local venv="${KJIT_VENV_TORCH:-$root/.venv-torch}" py want stamp
  py="$(kjit_find_python 11 13)"
  if [ -z "$py" ]; then
    printf '[kjit] no Python 3.11-3.13 found: torch cannot be installed (its tests will fail as skipped)\n' >&2
    return 0
  fi
  stamp="$venv/.kjit-pins"
  want="python$(kjit_python_version "$py") ${KJIT_TORCH_PINS[*]}"
  local ready=0
  kjit_venv_prepare "$venv" "$py" "$want" || ready=$?
  [ "$ready" = 2 ] || return 0  # ready (0), or no venv (1): the tests say they were skipped
  local pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check) from
  if "${pip[@]}" --timeout 20 --retries 1 --index-url "$KJIT_TORCH_CPU_INDEX" "torch==$KJIT_TORCH_VERSION" 2>/dev/null; then
    from="$KJIT_TORCH_CPU_INDEX"
  else
    printf '[kjit] %s cannot be reached: installing torch from PyPI (the CUDA build and its libraries)\n' \
      "$KJIT_TORCH_CPU_INDEX" >&2
    from=pypi
  fi
  "${pip[@]}" "${KJIT_TORCH_PINS[@]}" ||
    { printf '[kjit] pip install into %s failed: the torch tests cannot run (they will fail as skipped)\n' "$venv" >&2; return 0; }
  printf '%s\n%s\n' "$want" "$from" >"$stamp"
}
