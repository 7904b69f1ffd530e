# bench/bench_venv.sh — sourced by the side-by-side benchmarks' scripts: makes the benchmarks'
# venv (.venv-bench, or $KJIT_BENCH_VENV: drjit, warp-lang, numpy, the README's jax and usd-core, for
# the Warp examples that read USD assets, and CuPy, which Warp's core/example_cupy.py imports (on
# the cpu it keeps NumPy arrays: CuPy needs no GPU to import), at the pinned versions; idempotent, the network only on
# the first run) and sets $bench_python.
kjit_bench_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kjit_bench_venv="${KJIT_BENCH_VENV:-$kjit_bench_root/.venv-bench}"
kjit_bench_pins=(drjit==1.5.0 warp-lang==1.19.0 numpy==2.3.5 jax==0.7.2 jaxlib==0.7.2 usd-core==26.11 cupy-cuda12x==14.2.0)
if [ ! -x "$kjit_bench_venv/bin/python" ] ||
   [ "$(cat "$kjit_bench_venv/.kjit-bench-pins" 2>/dev/null)" != "${kjit_bench_pins[*]}" ]; then
  echo "[bench] preparing $kjit_bench_venv with ${kjit_bench_pins[*]}" >&2
  [ -x "$kjit_bench_venv/bin/python" ] || python3 -m venv "$kjit_bench_venv"
  "$kjit_bench_venv/bin/python" -m pip install --quiet --disable-pip-version-check "${kjit_bench_pins[@]}"
  printf '%s' "${kjit_bench_pins[*]}" >"$kjit_bench_venv/.kjit-bench-pins"
fi
bench_python="$kjit_bench_venv/bin/python"
