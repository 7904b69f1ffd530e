"""JAX on cpu, n = 1M float32: issue 15's saxpy through the kjit JAX shim (demo::saxpy from
libdemo_kernels.so, the same kernel as bench/side_by_side/kernels.hpp's) against jnp `a*x+y`,
both under jax.jit, timed in alternating batches. Part of bench/cpu_side_by_side.sh; directly:

    PYTHONPATH=python .venv/bin/python bench/cpu_side_by_side_jax.py build
"""

from __future__ import annotations

import os
import statistics
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import kjit.jax as kj  # noqa: E402

N = 1 << 20
CALLS = 100  # per batch
BATCHES = 21


def batch_ms(fn, x, y) -> float:
    t = time.perf_counter()
    for _ in range(CALLS):
        r = fn(x, y)
    jax.block_until_ready(r)
    return (time.perf_counter() - t) / CALLS * 1e3


def main() -> int:
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    kj.load(os.path.join(build, "lib", "libdemo_kernels.so"))
    saxpy = kj.jax_kernel("demo::saxpy")
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.uniform(-1, 1, N).astype(np.float32))
    y = jnp.asarray(rng.uniform(-1, 1, N).astype(np.float32))
    fns = {"kjit shim": jax.jit(lambda x, y: saxpy(x, y, 2.0)), "jnp a*x+y": jax.jit(lambda x, y: 2.0 * x + y)}
    want = 2.0 * np.asarray(x, np.float64) + np.asarray(y, np.float64)
    for name, fn in fns.items():
        got = np.asarray(fn(x, y), np.float64)
        if not np.allclose(got, want, rtol=1e-6, atol=1e-6):
            print(f"FAILED: {name} does not compute 2x + y", file=sys.stderr)
            return 1
        batch_ms(fn, x, y)  # warm-up
    times = {name: [] for name in fns}
    for _ in range(BATCHES):
        for name, fn in fns.items():
            times[name].append(batch_ms(fn, x, y))
    print(f"\nJAX on cpu (jax {jax.__version__}), saxpy n = {N}, jitted; ms per call, median (min) of "
          f"{BATCHES} alternating batches of {CALLS} calls:")
    for name, t in times.items():
        print(f"  {name:10s} {statistics.median(t):.3f} ({min(t):.3f})")
    k, j = (statistics.median(times[n]) for n in fns)
    print(f"  kjit / jnp: {k / j:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
