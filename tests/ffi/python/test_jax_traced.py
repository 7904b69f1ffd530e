"""Traced value parameters from JAX on the CPU platform: a scalar (vector, matrix) given a JAX
value travels as a buffer, one compiled call serves every value, and with enable_backward its
gradient (the kernel's adjoint summed over its threads) matches the same math in jax.numpy and
finite differences, in float32 and float64; vmap over traced values; static numbers unchanged."""

from __future__ import annotations

import os
import unittest

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _common import central, decay_jnp, kj, load_libraries  # noqa: E402

load_libraries()


def affine_jnp(v, d, m, s):
    return (v + d) @ m.T * s


class TracedValueTests(unittest.TestCase):
    def test_jit_with_the_scalar_as_an_argument_compiles_once(self) -> None:
        saxpy = kj.jax_kernel("demo::saxpy")
        x = jnp.linspace(0, 1, 37, dtype=jnp.float32)
        y = jnp.cos(x)
        traces = []

        @jax.jit
        def f(x, y, a):
            traces.append(1)
            return saxpy(x, y, a)

        for a in (2.0, -1.5, 0.25):  # a Python float: a weakly typed argument, float32 for the kernel
            np.testing.assert_allclose(f(x, y, a), np.float32(a) * x + y, rtol=1e-6)
        self.assertEqual(len(traces), 1)  # the value is an operand, not an attribute
        for a in (3.0, -7.0):  # a float32 array is another argument type (one more trace), then no more
            np.testing.assert_allclose(f(x, y, jnp.float32(a)), np.float32(a) * x + y, rtol=1e-6)
        self.assertEqual(len(traces), 2)
        # A concrete jax.Array outside jit travels as a buffer too.
        np.testing.assert_allclose(saxpy(x, y, jnp.float32(4.0)), 4.0 * x + y, rtol=1e-6)
        # Static numbers are still typed attributes (each value its own call).
        np.testing.assert_allclose(saxpy(x, y, 5.0), 5.0 * x + y, rtol=1e-6)

    def test_grad_wrt_a_scalar_float64_matches_jnp_and_finite_differences(self) -> None:
        daxpy = kj.jax_kernel("demo::daxpy", enable_backward=True)
        for n in (1, 37, 1003, 100000):
            x = jnp.sin(jnp.arange(n, dtype=jnp.float64))
            y = jnp.cos(jnp.arange(n, dtype=jnp.float64))

            def loss(a, x=x, y=y):
                return jnp.sum(jnp.tanh(daxpy(x, y, a)))

            def loss_ref(a, x=x, y=y):
                return jnp.sum(jnp.tanh(a * x + y))

            a = jnp.float64(0.7)
            g = jax.jit(jax.grad(loss))(a)
            r = jax.grad(loss_ref)(a)
            np.testing.assert_allclose(g, r, rtol=1e-10, err_msg=f"n={n}")
            np.testing.assert_allclose(g, central(loss_ref, 0.7, 1e-4), rtol=1e-7, err_msg=f"n={n}")
            # With respect to everything at once.
            gx, gy, ga = jax.grad(lambda x, y, a: jnp.sum(jnp.tanh(daxpy(x, y, a))), argnums=(0, 1, 2))(x, y, a)
            rx, ry, ra = jax.grad(lambda x, y, a: jnp.sum(jnp.tanh(a * x + y)), argnums=(0, 1, 2))(x, y, a)
            np.testing.assert_allclose(gx, rx, rtol=1e-12)
            np.testing.assert_allclose(gy, ry, rtol=1e-12)
            np.testing.assert_allclose(ga, ra, rtol=1e-10)

    def test_grad_wrt_a_scalar_float32(self) -> None:
        saxpy = kj.jax_kernel("demo::saxpy", enable_backward=True)
        x = jnp.linspace(-1, 1, 1003, dtype=jnp.float32)
        y = jnp.sin(x)
        w = jnp.cos(3 * x)
        g = jax.jit(jax.grad(lambda a: jnp.sum(w * saxpy(x, y, a) ** 2)))(jnp.float32(1.25))
        r = jax.grad(lambda a: jnp.sum(w * (a * x + y) ** 2))(jnp.float32(1.25))
        self.assertEqual(g.dtype, jnp.float32)
        np.testing.assert_allclose(g, r, rtol=1e-5)

    def test_vector_matrix_and_scalar_values_all_differentiable(self) -> None:
        for name, dt, tol in (("tests::values::affine", jnp.float64, 1e-11), ("tests::values::affine_f", jnp.float32, 2e-4)):
            affine = kj.jax_kernel(name, enable_backward=True)
            rng = np.random.default_rng(5)
            v = jnp.asarray(rng.normal(size=(1003, 3)), dt)
            d = jnp.asarray(rng.normal(size=3), dt)
            m = jnp.asarray(rng.normal(size=(3, 3)), dt)
            s = jnp.asarray(0.8, dt)
            w = jnp.asarray(rng.normal(size=(1003, 3)), dt)
            np.testing.assert_allclose(affine(v, d, m, s), affine_jnp(v, d, m, s), rtol=tol, atol=tol)
            grads = jax.grad(lambda v, d, m, s: jnp.sum(w * affine(v, d, m, s)), argnums=(0, 1, 2, 3))(v, d, m, s)
            refs = jax.grad(lambda v, d, m, s: jnp.sum(w * affine_jnp(v, d, m, s)), argnums=(0, 1, 2, 3))(v, d, m, s)
            for g, r, what in zip(grads, refs, "vdms"):
                self.assertEqual(g.shape, r.shape)
                self.assertEqual(g.dtype, dt)
                np.testing.assert_allclose(g, r, rtol=tol, atol=tol, err_msg=f"{name} d/d{what}")

    def test_mixed_static_and_traced_values_through_a_loop(self) -> None:
        decay = kj.jax_kernel("tests::values::decay", enable_backward=True)
        x = jnp.linspace(-2, 2, 37, dtype=jnp.float64)
        k = jnp.float64(0.6)
        # n static (a Python int: an attribute), k traced.
        g = jax.grad(lambda k: jnp.sum(decay(x, k, 4) ** 2))(k)
        r = jax.grad(lambda k: jnp.sum(decay_jnp(x, k, 4) ** 2))(k)
        np.testing.assert_allclose(g, r, rtol=1e-10)
        # n traced too (an integer: no gradient, one compiled call for every n).
        traces = []

        @jax.jit
        def both(x, k, n):
            traces.append(1)
            return jnp.sum(decay(x, k, n) ** 2)

        for n in (0, 3, 5):
            gk = jax.grad(both, argnums=1)(x, k, jnp.int32(n))
            rk = jax.grad(lambda k: jnp.sum(decay_jnp(x, k, n) ** 2))(k)
            np.testing.assert_allclose(gk, rk, rtol=1e-10, err_msg=f"n={n}")
        np.testing.assert_allclose(both(x, k, jnp.int32(3)), jnp.sum(decay_jnp(x, k, 3) ** 2), rtol=1e-12)
        self.assertEqual(len(traces), 1)

    def test_vmap_over_a_traced_scalar_each_item_its_value_and_gradient(self) -> None:
        for method in ("broadcast_all", "sequential", "expand_dims"):
            daxpy = kj.jax_kernel("demo::daxpy", enable_backward=True, vmap_method=method)
            x = jnp.linspace(0, 1, 37, dtype=jnp.float64)
            y = jnp.cos(x)
            a = jnp.array([0.5, -1.0, 2.0], jnp.float64)
            out = jax.vmap(lambda a: daxpy(x, y, a))(a)
            np.testing.assert_allclose(out, a[:, None] * x + y, rtol=1e-12, err_msg=method)
            # Per item: d/da_b sum tanh(a_b x + y).
            g = jax.grad(lambda a: jnp.sum(jnp.tanh(jax.vmap(lambda a: daxpy(x, y, a))(a))))(a)
            r = jax.grad(lambda a: jnp.sum(jnp.tanh(a[:, None] * x + y)))(a)
            np.testing.assert_allclose(g, r, rtol=1e-10, err_msg=method)
            # Batched arrays, one unbatched traced scalar: its gradient sums over the batch.
            xs = jnp.stack([x, 2 * x, -x])
            g1 = jax.grad(lambda a: jnp.sum(jnp.tanh(jax.vmap(lambda x: daxpy(x, y, a))(xs))))(jnp.float64(0.3))
            r1 = jax.grad(lambda a: jnp.sum(jnp.tanh(a * xs + y)))(jnp.float64(0.3))
            np.testing.assert_allclose(g1, r1, rtol=1e-10, err_msg=method)
            # Both batched together.
            g2 = jax.grad(lambda a: jnp.sum(jnp.tanh(jax.vmap(lambda x, a: daxpy(x, y, a))(xs, a))))(a)
            r2 = jax.grad(lambda a: jnp.sum(jnp.tanh(a[:, None] * xs + y)))(a)
            np.testing.assert_allclose(g2, r2, rtol=1e-10, err_msg=method)

    def test_traced_values_under_shard_map(self) -> None:
        from jax.sharding import Mesh, PartitionSpec as P

        try:
            from jax import shard_map
        except ImportError:  # JAX 0.7
            from jax.experimental.shard_map import shard_map
        daxpy = kj.jax_kernel("demo::daxpy", enable_backward=True)
        mesh = Mesh(np.array(jax.devices()[:4]), ("i",))
        x = jnp.linspace(0.1, 1.3, 64, dtype=jnp.float64)
        y = jnp.sin(3 * x)

        def local(x, y, a):
            return daxpy(x, y, a)

        f = shard_map(local, mesh=mesh, in_specs=(P("i"), P("i"), P()), out_specs=P("i"))
        np.testing.assert_allclose(jax.jit(f)(x, y, jnp.float64(1.5)), 1.5 * x + y, rtol=1e-12)
        g = jax.grad(lambda a: jnp.sum(jnp.tanh(f(x, y, a))))(jnp.float64(1.5))
        r = jax.grad(lambda a: jnp.sum(jnp.tanh(a * x + y)))(jnp.float64(1.5))
        np.testing.assert_allclose(g, r, rtol=1e-10)

    def test_wrong_dtype_or_shape_of_a_traced_value_names_it(self) -> None:
        saxpy = kj.jax_kernel("demo::saxpy")
        x = jnp.ones(4, jnp.float32)
        with self.assertRaisesRegex(TypeError, r"Invalid data type for traced argument 'a', expected float32, got float64"):
            saxpy(x, x, jnp.float64(2.0))
        with self.assertRaisesRegex(TypeError, r"Invalid shape for traced argument 'a', expected \(\) for float32, got \(2,\)"):
            saxpy(x, x, jnp.ones(2, jnp.float32))
        affine = kj.jax_kernel("tests::values::affine")
        with self.assertRaisesRegex(TypeError, r"Invalid shape for traced argument 'd', expected \(3,\) for vec3d, got \(\)"):
            affine(jnp.ones((4, 3)), jnp.float64(1.0), jnp.eye(3), 1.0)
        # The handler refuses a hand-made call the same way (INVALID_ARGUMENT).
        call = jax.ffi.ffi_call("kjit_launch", jax.ShapeDtypeStruct((4,), jnp.float32))
        with self.assertRaisesRegex(Exception, "kjit kernel 'demo::saxpy': Invalid data type for traced argument 'a', "
                                               "expected float32, got float64"):
            jax.block_until_ready(call(x, x, jnp.float64(2.0), kjit_kernel="demo::saxpy",
                                       kjit_traced=np.array([2], np.int64)))


if __name__ == "__main__":
    unittest.main()
