# scripts/python_env.sh — the project-local Python environments for the JAX tests: .venv with the
# oldest JAX kjit supports, .venv-jax-new with the newest on PyPI; the suite runs on both.
# Sourced, not run: defines kjit_python_env, which scripts/test.sh calls. Idempotent: when a
# venv already holds its pinned versions it is left alone, without touching the network.

# Pinned versions (CPU jaxlib; CI has no GPU). setuptools lets the tests pip-install ./python
# without build isolation, that is without the network.
KJIT_JAX_OLDEST=0.7.2
KJIT_JAX_NEWEST=0.10.2
KJIT_PY_PINS=(jax==$KJIT_JAX_OLDEST jaxlib==$KJIT_JAX_OLDEST numpy==2.3.5 setuptools==80.9.0)
KJIT_PY_PINS_NEWEST=(jax==$KJIT_JAX_NEWEST jaxlib==$KJIT_JAX_NEWEST numpy==2.4.6 setuptools==80.9.0)
# On a GPU machine, KJIT_JAX_CUDA=1 adds JAX's CUDA plugin (for the `gpu` JAX tests).
if [ "${KJIT_JAX_CUDA:-0}" = 1 ]; then
  KJIT_PY_PINS+=("jax[cuda12]==$KJIT_JAX_OLDEST")
  KJIT_PY_PINS_NEWEST+=("jax[cuda12]==$KJIT_JAX_NEWEST")
fi

# kjit_python_venv VENV PIN... — creates or refreshes one venv with exactly these pins. A
# failure is reported but returns 0 (test.sh runs under set -e): that venv's tests then skip,
# printing why.
kjit_python_venv() {
  local venv="$1"; shift
  local stamp="$venv/.kjit-pins"
  local want="$*"
  if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  local py
  py="$(command -v python3 || true)"
  if [ -z "$py" ]; then
    printf '[kjit] python3 not found: the JAX tests will be skipped\n' >&2
    return 0
  fi
  printf '[kjit] preparing %s with %s\n' "$venv" "$want" >&2
  if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv" || { printf '[kjit] cannot create %s: its JAX tests will be skipped\n' "$venv" >&2; return 0; }
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" ||
    { printf '[kjit] pip install into %s failed: its JAX tests will be skipped\n' "$venv" >&2; return 0; }
  printf '%s' "$want" >"$stamp"
}

# Creates or refreshes $KJIT_ROOT/.venv (KJIT_VENV overrides the folder) and
# $KJIT_ROOT/.venv-jax-new (KJIT_VENV_NEWEST).
kjit_python_env() {
  local root="${KJIT_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
  kjit_python_venv "${KJIT_VENV:-$root/.venv}" "${KJIT_PY_PINS[@]}"
  kjit_python_venv "${KJIT_VENV_NEWEST:-$root/.venv-jax-new}" "${KJIT_PY_PINS_NEWEST[@]}"
}

# Whether an NVRTC kjit can load is installed outside any venv: the toolkit's (CUDA_PATH,
# CUDA_HOME, /usr/local/cuda) or one on the dynamic loader's path. The sonames are
# compiler/src/nvrtc_loader.cpp's list.
kjit_have_toolkit_nvrtc() {
  local dir so
  for dir in ${CUDA_PATH:+"$CUDA_PATH/lib64" "$CUDA_PATH/lib"} ${CUDA_HOME:+"$CUDA_HOME/lib64" "$CUDA_HOME/lib"} \
             /usr/local/cuda/lib64 /usr/local/cuda/lib; do
    for so in libnvrtc.so.13 libnvrtc.so.12; do [ -e "$dir/$so" ] && return 0; done
  done
  ldconfig -p 2>/dev/null | grep -qE 'libnvrtc\.so\.1[23] ' && return 0
  return 1
}

# Installs the nvidia-cuda-nvrtc wheel into the project venv when no toolkit NVRTC is found,
# so that the NVRTC tests run (kjit finds the wheel in the venv; docs/CUDA.md). Idempotent:
# returns at once when the toolkit has NVRTC or the venv already holds the wheel. A failure
# is reported but returns 0: the GPU-target tests then fail saying how to get NVRTC.
kjit_nvrtc_wheel() {
  local root="${KJIT_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
  local venv="${KJIT_VENV:-$root/.venv}"
  kjit_have_toolkit_nvrtc && return 0
  compgen -G "$venv/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.13" >/dev/null && return 0
  if [ ! -x "$venv/bin/python" ]; then
    printf '[kjit] no venv at %s: cannot install nvidia-cuda-nvrtc\n' "$venv" >&2
    return 0
  fi
  printf '[kjit] no NVRTC in the CUDA toolkit: installing nvidia-cuda-nvrtc into %s\n' "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "nvidia-cuda-nvrtc==13.*" ||
    printf '[kjit] pip install nvidia-cuda-nvrtc failed: GPU targets cannot be compiled\n' >&2
  return 0
}
