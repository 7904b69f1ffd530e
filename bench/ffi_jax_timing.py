"""Wall time of a jitted JAX function calling an empty kjit kernel through the FFI versus an
equivalent trivial jax.numpy op, on the CPU platform. Run from the repository root:

    PYTHONPATH=python .venv/bin/python bench/ffi_jax_timing.py build
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import kjit.jax as kj  # noqa: E402


def per_call_us(fn, x, repeats: int = 20000) -> float:
    """Median-of-5 wall time per call of ``fn(x)`` (blocking), in microseconds."""
    jax.block_until_ready(fn(x))
    runs = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(repeats):
            y = fn(x)
        jax.block_until_ready(y)
        runs.append((time.perf_counter() - t) / repeats * 1e6)
    return sorted(runs)[2]


def main() -> None:
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    kj.load(os.path.join(build, "lib", "libdemo_kernels.so"))
    kj.load(os.path.join(build, "lib", "libffi_jax_test_kernels.so"))
    noop = kj.jax_kernel("tests::noop")
    saxpy = kj.jax_kernel("demo::saxpy")
    for n in (1, 1024):
        x = jnp.ones(n, jnp.float32)
        cases = {
            "kjit empty kernel": jax.jit(lambda x: noop(x)),
            "jnp x + 1": jax.jit(lambda x: x + 1),
            "kjit saxpy": jax.jit(lambda x: saxpy(x, x, 2.0)),
            "jnp 2x + x": jax.jit(lambda x: 2 * x + x),
        }
        for name, fn in cases.items():
            print(f"n={n:5d}  {name:18s} {per_call_us(fn, x):7.2f} us/call")


if __name__ == "__main__":
    main()
