"""Forward mode from JAX (docs/BENCHMARKS.md, *Forward mode from JAX*): jit-compiled f, jax.jvp
and jax.grad of kjit kernels on the cpu platform, interleaved, medians (and mins) in ms, and the
ratios to f. Run with a JAX venv and kjit.jax importable:

    PYTHONPATH=python .venv/bin/python bench/jax_forward.py --build build [--reps 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)

import kjit.jax as kj  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--n", type=int, default=1 << 20)
    a = ap.parse_args()
    kj.load(os.path.join(a.build, "lib", "libdemo_kernels.so"))
    kj.load(os.path.join(a.build, "lib", "libffi_jax_test_kernels.so"))
    n = a.n
    daxpy = kj.jax_kernel("demo::daxpy", enable_backward=True)
    swirl = kj.jax_kernel("tests::values::swirl", enable_backward=True)
    x = jnp.sin(jnp.arange(n, dtype=jnp.float64))
    y = jnp.cos(jnp.arange(n, dtype=jnp.float64))
    p = jnp.stack([x, y, x * y], axis=1) * 0.5
    q = jnp.stack([y, x, -x], axis=1) * 0.5
    cases = {
        "daxpy": (lambda x, y, s: daxpy(x, y, s), (x, y, jnp.float64(1.5))),
        "swirl (n=8)": (lambda x, y, s: swirl(x, y, s, 8), (p, q, jnp.float64(0.3))),
    }
    for name, (f, args) in cases.items():
        tangents = tuple(jnp.ones_like(v) for v in args)
        fns = {
            "f": jax.jit(f),
            "jvp": jax.jit(lambda *v: jax.jvp(f, v, tangents)),
            "grad": jax.jit(jax.grad(lambda *v: jnp.sum(f(*v)), argnums=(0, 1, 2))),
        }
        times: dict[str, list[float]] = {k: [] for k in fns}
        for fn in fns.values():  # compile, and the modules' first launch
            jax.block_until_ready(fn(*args))
        for _ in range(a.reps):
            for k, fn in fns.items():
                t0 = time.perf_counter()
                jax.block_until_ready(fn(*args))
                times[k].append((time.perf_counter() - t0) * 1e3)
        base = statistics.median(times["f"])
        for k, t in times.items():
            m = statistics.median(t)
            print(f"{name:12s} {k:5s} median {m:8.2f} ms  min {min(t):8.2f} ms  / f {m / base:5.2f}")


if __name__ == "__main__":
    main()
