"""Warp 1.19's interop/example_jax_kernel.py in kjit: kjit kernels called from JAX.

The kernels are C++ (examples/warp/jax_interop/kernels.hpp, built into
libwarp_jax_interop.so); each exampleN is Warp's, one to one, with the same inputs and prints.
Unlike Warp's jax_kernel, which returns a list of outputs even for one output (Warp prints
``[Array(...)]``), kjit's returns the array itself when there is one output.

    PYTHONPATH=python python examples/warp/jax_kernel.py [build/lib/libwarp_jax_interop.so]
"""

import math
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
    # two inputs and one output
    jax_add = kj.jax_kernel("warp_jax::add_kernel")

    @jax.jit
    def f():
        n = 10
        a = jnp.arange(n, dtype=jnp.int32)
        b = jnp.ones(n, dtype=jnp.int32)
        return jax_add(a, b)

    print(f())


def example2():
    # one input and two outputs
    jax_sincos = kj.jax_kernel("warp_jax::sincos_kernel", num_outputs=2)

    @jax.jit
    def f():
        n = 32
        a = jnp.linspace(0, 2 * math.pi, n)
        return jax_sincos(a)

    s, c = f()
    print(s)
    print()
    print(c)


def example3():
    # multiply vectors by scalar
    jax_scale_vec = kj.jax_kernel("warp_jax::scale_vec_kernel")

    @jax.jit
    def f():
        a = jnp.arange(10, dtype=jnp.float32).reshape((5, 2))  # array of vec2
        s = 2.0
        return jax_scale_vec(a, s)

    b = f()
    print(b)


def example4():
    # multiply vectors by scalar (static arg)
    jax_scale_vec = kj.jax_kernel("warp_jax::scale_vec_kernel")

    # A Python number is a static attribute (as in Warp); a JAX value would be traced instead.
    @partial(jax.jit, static_argnames=["s"])
    def f(a, s):
        return jax_scale_vec(a, s)

    a = jnp.arange(10, dtype=jnp.float32).reshape((5, 2))  # array of vec2
    s = 3.0

    b = f(a, s)
    print(b)


def example5():
    N, M, K = 3, 4, 2

    # specify default launch dims
    jax_matmul = kj.jax_kernel("warp_jax::matmul_kernel", launch_dims=(N, M))

    @jax.jit
    def f():
        a = jnp.full((N, K), 2, dtype=jnp.float32)
        b = jnp.full((K, M), 3, dtype=jnp.float32)

        # use default launch dims
        return jax_matmul(a, b)

    print(f())


def example6():
    # don't specify default launch dims
    jax_matmul = kj.jax_kernel("warp_jax::matmul_kernel")

    @jax.jit
    def f():
        N1, M1, K1 = 3, 4, 2
        a1 = jnp.full((N1, K1), 2, dtype=jnp.float32)
        b1 = jnp.full((K1, M1), 3, dtype=jnp.float32)

        # use custom launch dims
        result1 = jax_matmul(a1, b1, launch_dims=(N1, M1))

        N2, M2, K2 = 4, 3, 2
        a2 = jnp.full((N2, K2), 2, dtype=jnp.float32)
        b2 = jnp.full((K2, M2), 3, dtype=jnp.float32)

        # use custom launch dims
        result2 = jax_matmul(a2, b2, launch_dims=(N2, M2))

        return result1, result2

    r1, r2 = f()
    print(r1)
    print()
    print(r2)


def example7():
    # no inputs and one output
    jax_diagonal = kj.jax_kernel("warp_jax::diagonal_kernel")

    @jax.jit
    def f():
        # launch dimensions determine output size
        return jax_diagonal(launch_dims=4)

    print(f())


def example8():
    # Using input-output arguments

    jax_func = kj.jax_kernel("warp_jax::in_out_kernel", num_outputs=2, in_out_argnames=["b"])

    f = jax.jit(jax_func)

    a = jnp.ones(10, dtype=jnp.float32)
    b = jnp.arange(10, dtype=jnp.float32)

    b, c = f(a, b)
    print(b)
    print(c)


EXAMPLES = [example1, example2, example3, example4, example5, example6, example7, example8]


def load(library=None):
    """Loads the kernel library (Warp's main loads its module instead): the argument, else
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
