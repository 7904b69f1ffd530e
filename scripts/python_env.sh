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
