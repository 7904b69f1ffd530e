"""kjit kernels from JAX on the CUDA platform (ctest label gpu): jit, grad (saxpy, springs, the
loop kernel), vmap, in/out, output and launch dims, dtype errors, a callable (in every graph mode, against its eager launches), a callback, and a jitted function
that XLA captures into a CUDA graph.

Exits 77 (skipped), saying why, without a GPU or without a CUDA-enabled jaxlib."""

from __future__ import annotations

import os
import sys
import unittest

# XLA captures custom calls whose handlers are command-buffer compatible into CUDA graphs,
# even for a single one.
os.environ.setdefault("XLA_FLAGS", "--xla_gpu_enable_command_buffer=FUSION,CUSTOM_CALL "
                                   "--xla_gpu_graph_min_graph_size=1")

import jax  # noqa: E402


def _gpu_or_skip() -> None:
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as e:
        print(f"SKIP: no CUDA device for JAX ({e}); the GPU tests need a GPU and jax[cuda12] in the venv")
        sys.exit(77)
    if not gpus:
        print("SKIP: JAX sees no GPU")
        sys.exit(77)


if __name__ == "__main__":
    _gpu_or_skip()

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _common import kj, load_libraries  # noqa: E402
from test_jax_cpu import (check_dtype_mismatch_messages, check_output_and_launch_dims, iterate_jnp,  # noqa: E402
                          spring_data, springs_jnp)


class GpuTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        load_libraries()

    def test_forward_grad_vmap(self) -> None:
        saxpy = kj.jax_kernel("demo::saxpy", enable_backward=True)
        x = jnp.linspace(0, 1, 100_000, dtype=jnp.float32)
        y = jnp.cos(x)
        np.testing.assert_allclose(jax.jit(lambda x, y: saxpy(x, y, 3.0))(x, y), 3 * x + y, rtol=1e-6)
        g = jax.jit(jax.grad(lambda x: jnp.sum(saxpy(x, y, 3.0) ** 2)))(x)
        np.testing.assert_allclose(g, 2 * (3 * x + y) * 3, rtol=1e-5)
        xs = jnp.stack([x, 2 * x])
        np.testing.assert_allclose(jax.vmap(lambda x: saxpy(x, y, 3.0))(xs), 3 * xs + y, rtol=1e-6)

    def test_springs_and_loops(self) -> None:
        springs = kj.jax_kernel("demo::springs", enable_backward=True, launch_dims=20, output_dims={"f": (12,)})
        x, pairs, rest = spring_data()
        w = jnp.ones((12, 3), jnp.float32)
        g = jax.grad(lambda x: jnp.sum(w * springs(x, pairs, rest, 40.0)))(x)
        r = jax.grad(lambda x: jnp.sum(w * springs_jnp(x, pairs, rest, 40.0)))(x)
        np.testing.assert_allclose(g, r, rtol=1e-3, atol=1e-3)
        inout = kj.jax_kernel("demo::springs", in_out_argnames=("f",), launch_dims=20)
        f0 = jnp.ones((12, 3), jnp.float32)
        np.testing.assert_allclose(inout(x, pairs, rest, 10.0, f0), f0 + springs_jnp(x, pairs, rest, 10.0),
                                   rtol=1e-4, atol=1e-4)
        # demo::iterate is float64 (x64 is on): forward and the gradient through its dynamic
        # loop, against the same recurrence in jax.numpy.
        iterate = kj.jax_kernel("demo::iterate", enable_backward=True)
        xd = jnp.linspace(0.1, 1.0, 64, dtype=jnp.float64)
        cd = jnp.linspace(0.5, 0.9, 64, dtype=jnp.float64)
        np.testing.assert_allclose(iterate(xd, cd, 9), iterate_jnp(xd, cd, 9), rtol=1e-12)
        g = jax.grad(lambda x, c: jnp.sum(jnp.cos(iterate(x, c, 9))), argnums=(0, 1))(xd, cd)
        r = jax.grad(lambda x, c: jnp.sum(jnp.cos(iterate_jnp(x, c, 9))), argnums=(0, 1))(xd, cd)
        np.testing.assert_allclose(g[0], r[0], rtol=1e-10)
        np.testing.assert_allclose(g[1], r[1], rtol=1e-10)

    def test_output_dims_launch_dims_and_dtype_errors(self) -> None:
        check_output_and_launch_dims(self)
        check_dtype_mismatch_messages(self)  # the CUDA handler's message, past the shim

    def test_jit_captured_as_cuda_graph(self) -> None:
        saxpy = kj.jax_kernel("demo::saxpy")
        x = jnp.ones(4096, jnp.float32)

        @jax.jit
        def step(x):
            for _ in range(4):  # several kjit calls and XLA ops in one command buffer
                x = saxpy(x, x, 0.5) + 1.0
            return x

        want = x
        for _ in range(4):
            want = 1.5 * want + 1.0
        for _ in range(3):  # later runs replay the captured graph
            np.testing.assert_allclose(step(x), want, rtol=1e-6)
        hlo = step.lower(x).compile().as_text()
        self.assertIn("kjit_launch", hlo)

    def test_callable_and_callback(self) -> None:
        # XLA may capture these calls into a graph on their first run, and a module cannot be
        # loaded during a capture: the callable preloads demo::saxpy, and so does the
        # jax_kernel call before the callback (its handler preloads at XLA's instantiate stage).
        f = kj.jax_callable("tests::saxpy_twice", graph_mode=kj.GraphMode.XLA, preload_kernels=("demo::saxpy",))
        x = jnp.arange(16, dtype=jnp.float32)
        y = jnp.ones(16, jnp.float32)
        np.testing.assert_allclose(jax.jit(lambda x, y: f(x, y, 2.0))(x, y), 2 * (2 * x + y) + y)
        np.testing.assert_allclose(kj.jax_kernel("demo::saxpy")(x, y, 1.0), x + y)
        # The callback launches a kjit kernel on XLA's stream (tests/ffi/jax_test_library.cpp).
        name = kj.register_ffi_callback("tests::scale")
        call = jax.ffi.ffi_call(name, jax.ShapeDtypeStruct(x.shape, x.dtype))
        np.testing.assert_allclose(jax.jit(lambda x: call(x, scale=np.float32(4.0)))(x), 4.0 * x)
        with self.assertRaisesRegex(Exception, "tests::scale takes one float32 array"):
            jax.block_until_ready(call(x.astype(jnp.float64), scale=np.float32(1)))

    def test_callable_graph_modes_match_eager(self) -> None:
        # The same callable in every graph mode gives what its eager launches give (NONE),
        # call after call: new inputs, new outputs, a changed static value.
        x = jnp.linspace(-1, 1, 10_000, dtype=jnp.float32)
        y = jnp.sin(x)
        eager = kj.jax_callable("tests::saxpy_twice", graph_mode=kj.GraphMode.NONE)
        eager_step = jax.jit(lambda x, y, a: eager(x, y, a), static_argnums=2)
        wants = [np.asarray(eager_step(x + i, y, 2.0 + (i == 3))) for i in range(5)]
        np.testing.assert_allclose(wants[0], 2 * (2 * x + y) + y, rtol=1e-5, atol=1e-6)
        for mode in (kj.GraphMode.XLA, kj.GraphMode.KJIT, kj.GraphMode.KJIT_STAGED_EX, kj.GraphMode.KJIT_STAGED):
            with self.subTest(mode=mode.name):
                f = kj.jax_callable("tests::saxpy_twice", graph_mode=mode, preload_kernels=("demo::saxpy",))
                kj.clear_jax_callable_graph_cache(f)
                step = jax.jit(lambda x, y, a: f(x, y, a), static_argnums=2)
                for i in range(5):  # later calls replay; XLA may hand other buffers each time
                    np.testing.assert_array_equal(np.asarray(step(x + i, y, 2.0 + (i == 3))), wants[i])
                if mode in (kj.GraphMode.KJIT_STAGED_EX, kj.GraphMode.KJIT_STAGED):
                    # one graph per static value (XLA's one compute stream, one shape)
                    self.assertLessEqual(f.graph_cache_size, 2)
                elif mode == kj.GraphMode.KJIT:
                    self.assertGreaterEqual(f.graph_cache_size, 2)
                kj.clear_jax_callable_graph_cache(f)
                self.assertEqual(f.graph_cache_size, 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
