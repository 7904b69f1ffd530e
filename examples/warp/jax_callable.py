"""Warp 1.19's interop/example_jax_callable.py in kjit: C++ functions that launch kjit kernels,
called from JAX.

Warp wraps annotated Python functions; kjit's jax_callable takes C++ functions registered in a
kernel library (``scale_func`` and ``in_out_func`` are in examples/warp/jax_interop/library.cpp,
their kernels in kernels.hpp, built into libwarp_jax_interop.so). Each exampleN is Warp's, one
to one, with the same inputs and prints.

    PYTHONPATH=python python examples/warp/jax_callable.py [build/lib/libwarp_jax_interop.so]
"""

import os
import sys
from functools import partial

import jax
import jax.numpy as jnp

import kjit.jax as kj

#: The kernel library, in a build tree beside this checkout unless named.
DEFAULT_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "lib",
                               "libwarp_jax_interop.so")


def example1():
    jax_func = kj.jax_callable("warp_jax::scale_func", num_outputs=2)

    @jax.jit
    def f():
        # inputs
        a = jnp.arange(10, dtype=jnp.float32)
        b = jnp.arange(10, dtype=jnp.float32).reshape((5, 2))  # vec2
        s = 2.0

        # output shapes
        output_dims = {"c": a.shape, "d": b.shape}

        c, d = jax_func(a, b, s, output_dims=output_dims)

        return c, d

    r1, r2 = f()
    print(r1)
    print(r2)


def example2():
    jax_func = kj.jax_callable("warp_jax::scale_func", num_outputs=2)

    # A callable's scalar arguments are static: a Python number, here a static argument of jit.
    @partial(jax.jit, static_argnames=["s"])
    def f(a, b, s):
        # output shapes
        output_dims = {"c": a.shape, "d": b.shape}

        c, d = jax_func(a, b, s, output_dims=output_dims)

        return c, d

    # inputs
    a = jnp.arange(10, dtype=jnp.float32)
    b = jnp.arange(10, dtype=jnp.float32).reshape((5, 2))  # vec2
    s = 3.0

    r1, r2 = f(a, b, s)
    print(r1)
    print(r2)


def example3():
    # Using input-output arguments

    jax_func = kj.jax_callable("warp_jax::in_out_func", num_outputs=2, in_out_argnames=["b"])

    f = jax.jit(jax_func)

    a = jnp.ones(10, dtype=jnp.float32)
    b = jnp.arange(10, dtype=jnp.float32)

    b, c = f(a, b)
    print(b)
    print(c)


EXAMPLES = [example1, example2, example3]


def load(library=None):
    """Loads the kernel library, which registers the callables: the argument, else
    $KJIT_WARP_JAX_LIBRARY, else the build tree's."""
    kj.load(library or os.environ.get("KJIT_WARP_JAX_LIBRARY") or DEFAULT_LIBRARY)


def main():
    load(sys.argv[1] if len(sys.argv) > 1 else None)

    for example in EXAMPLES:
        print("\n===========================================================================")
        print(f"{example.__name__}:")
        example()


if __name__ == "__main__":
    main()
