"""Forward mode from JAX (docs/JAX.md, *Forward mode and second order*): with
jax_kernel(..., enable_backward=True) the call's jvp is the tangent kernel, whose transpose is
the adjoint. jax.jvp, jacfwd,
jacrev, grad and hessian of kernels with loops and vec3 arrays against the same math in
jax.numpy in float64; traced scalars (their tangent is a broadcast) against finite differences;
static and traced values mixed; under jit and vmap; lane blocks and tails (37, 1003 threads)."""

from __future__ import annotations

import os
import unittest

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _common import central, decay_jnp, iterate_ref, kj, load_libraries, swirl_ref  # noqa: E402

load_libraries()

RTOL = 1e-9  # float64 throughout: the kernel and jax.numpy differ by rounding only


def close(test, got, want, rtol=RTOL, atol=1e-12, msg=""):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol, err_msg=msg)


def points(n, seed):
    r = np.random.default_rng(seed)
    return jnp.asarray(r.uniform(-1, 1, (n, 3)))


class ForwardModeTests(unittest.TestCase):
    swirl = kj.jax_kernel("tests::values::swirl", enable_backward=True)
    iterate = kj.jax_kernel("demo::iterate", enable_backward=True)
    decay = kj.jax_kernel("tests::values::decay", enable_backward=True)
    daxpy = kj.jax_kernel("demo::daxpy", enable_backward=True)

    def test_jvp_of_a_vec3_loop_kernel_matches_jnp_under_jit(self) -> None:
        for n_points in (5, 37, 1003):  # one lane block's tail, blocks and a tail
            p, q = points(n_points, 1), points(n_points, 2)
            dp, dq = points(n_points, 3), points(n_points, 4)
            k, dk = jnp.float64(0.3), jnp.float64(-0.7)
            f = lambda p, q, k: self.swirl(p, q, k, 4)  # noqa: E731
            r = lambda p, q, k: swirl_ref(p, q, k, 4)  # noqa: E731
            for g in (f, jax.jit(f)):
                y, t = jax.jvp(g, (p, q, k), (dp, dq, dk))
                y_ref, t_ref = jax.jvp(r, (p, q, k), (dp, dq, dk))
                close(self, y, y_ref, msg=f"n={n_points}")
                close(self, t, t_ref, msg=f"n={n_points}")

    def test_traced_scalar_tangent_is_a_broadcast(self) -> None:
        # d out / d k along dk alone: every thread sees the same dk.
        p, q = points(37, 5), points(37, 6)
        k = jnp.float64(0.4)
        t = jax.jvp(lambda k: self.swirl(p, q, k, 3), (k,), (jnp.float64(1.0),))[1]
        close(self, t, jax.jacfwd(lambda k: swirl_ref(p, q, k, 3))(k))
        fd = central(lambda k: np.asarray(self.swirl(p, q, jnp.float64(k), 3)), 0.4, 1e-4)
        close(self, t, fd, rtol=1e-7, atol=1e-9)
        # Linear in dk.
        t3 = jax.jvp(lambda k: self.swirl(p, q, k, 3), (k,), (jnp.float64(3.0),))[1]
        close(self, t3, 3 * t)

    def test_jacfwd_and_jacrev_agree_with_jnp(self) -> None:
        p, q = points(4, 7), points(4, 8)
        k = jnp.float64(0.25)
        f = lambda p, q, k: self.swirl(p, q, k, 3)  # noqa: E731
        r = lambda p, q, k: swirl_ref(p, q, k, 3)  # noqa: E731
        for jac in (jax.jacfwd, jax.jacrev):
            got = jax.jit(jac(f, argnums=(0, 1, 2)))(p, q, k)
            want = jac(r, argnums=(0, 1, 2))(p, q, k)
            close(self, got, want, msg=jac.__name__)
        # The Jacobian mixes threads (out[i] reads q[i + 1]): not a diagonal.
        self.assertGreater(float(jnp.abs(jax.jacfwd(f, argnums=1)(p, q, k)[0, :, 1, :]).max()), 1e-3)

    def test_grad_of_a_traced_scalar_against_finite_differences(self) -> None:
        for n_points in (1, 37, 1003):
            p, q = points(n_points, 9), points(n_points, 10)

            def loss(k, p=p, q=q):
                return jnp.sum(jnp.tanh(self.swirl(p, q, k, 5)))

            def loss_ref(k, p=p, q=q):
                return jnp.sum(jnp.tanh(swirl_ref(p, q, k, 5)))

            g = jax.jit(jax.grad(loss))(jnp.float64(0.3))
            close(self, g, jax.grad(loss_ref)(jnp.float64(0.3)), msg=f"n={n_points}")
            close(self, g, central(lambda k: float(loss(jnp.float64(k))), 0.3, 1e-4), rtol=1e-7, atol=1e-9,
                  msg=f"n={n_points}")

    def test_grad_of_arrays_and_values_together(self) -> None:
        p, q = points(37, 11), points(37, 12)
        loss = lambda p, q, k: jnp.sum(self.swirl(p, q, k, 4) ** 2)  # noqa: E731
        loss_ref = lambda p, q, k: jnp.sum(swirl_ref(p, q, k, 4) ** 2)  # noqa: E731
        got = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(p, q, jnp.float64(0.2))
        close(self, got, jax.grad(loss_ref, argnums=(0, 1, 2))(p, q, jnp.float64(0.2)))
        # jax.vjp of the outputs directly, with a cotangent.
        y, vjp = jax.vjp(lambda p: self.swirl(p, q, 0.2, 4), p)
        w = points(37, 13)
        close(self, vjp(w), jax.vjp(lambda p: swirl_ref(p, q, 0.2, 4), p)[1](w))

    def test_hessian_of_loop_kernels(self) -> None:
        # jax.hessian = jacfwd(jacrev): the tangent of the adjoint is the tangent kernel's adjoint.
        p, q = points(3, 14), points(3, 15)
        loss = lambda p, k: jnp.sum(jnp.sin(self.swirl(p, q, k, 3)))  # noqa: E731
        loss_ref = lambda p, k: jnp.sum(jnp.sin(swirl_ref(p, q, k, 3)))  # noqa: E731
        h = jax.jit(jax.hessian(loss, argnums=(0, 1)))(p, jnp.float64(0.3))
        close(self, h, jax.hessian(loss_ref, argnums=(0, 1))(p, jnp.float64(0.3)), rtol=1e-8)
        # A scalar's second derivative against finite differences of its gradient.
        d2 = jax.hessian(loss, argnums=1)(p, jnp.float64(0.3))
        fd = central(lambda k: float(jax.grad(loss, argnums=1)(p, jnp.float64(k))), 0.3, 1e-4)
        close(self, d2, fd, rtol=1e-6, atol=1e-8)
        # An array loop (demo::iterate): the Hessian of sum(out) is diagonal.
        x = jnp.linspace(-1, 1, 5)
        c = jnp.linspace(0.5, 0.9, 5)
        hi = jax.hessian(lambda x, c: jnp.sum(self.iterate(x, c, 3)), argnums=(0, 1))(x, c)
        close(self, hi, jax.hessian(lambda x, c: jnp.sum(iterate_ref(x, c, 3)), argnums=(0, 1))(x, c), rtol=1e-8)

    def test_mixed_static_and_traced_values(self) -> None:
        x = jnp.sin(jnp.arange(37, dtype=jnp.float64))
        # k static (a Python float: an attribute, its tangent zero), n static.
        f = lambda x: self.decay(x, 0.9, 3)  # noqa: E731
        r = lambda x: decay_jnp(x, 0.9, 3)  # noqa: E731
        close(self, jax.jvp(f, (x,), (jnp.cos(x),)), jax.jvp(r, (x,), (jnp.cos(x),)))
        # k traced, n static; then both traced (n an integer: no tangent).
        g = jax.jvp(lambda x, k: self.decay(x, k, 3), (x, jnp.float64(0.9)), (jnp.cos(x), jnp.float64(0.5)))
        close(self, g, jax.jvp(lambda x, k: decay_jnp(x, k, 3), (x, jnp.float64(0.9)), (jnp.cos(x), jnp.float64(0.5))))
        h = jax.jit(lambda x, k, n: jax.jvp(lambda x, k: self.decay(x, k, n), (x, k), (jnp.cos(x), jnp.float64(0.5))))
        close(self, h(x, jnp.float64(0.9), jnp.int32(3)), g)
        gk = jax.grad(lambda k, n: jnp.sum(self.decay(x, k, n)))(jnp.float64(0.9), jnp.int32(3))
        close(self, gk, jax.grad(lambda k: jnp.sum(decay_jnp(x, k, 3)))(jnp.float64(0.9)))

    def test_vmap_of_jvp_and_grad_and_grad_of_vmap(self) -> None:
        p, q = points(37, 16), points(37, 17)
        ps = jnp.stack([p, 2 * p, -p])
        ks = jnp.array([0.1, 0.2, 0.3])
        dp = points(37, 18)
        f = lambda p, k: jax.jvp(lambda p, k: self.swirl(p, q, k, 2), (p, k), (dp, jnp.float64(1.0)))  # noqa: E731
        r = lambda p, k: jax.jvp(lambda p, k: swirl_ref(p, q, k, 2), (p, k), (dp, jnp.float64(1.0)))  # noqa: E731
        close(self, jax.jit(jax.vmap(f))(ps, ks), jax.vmap(r)(ps, ks))
        loss = lambda p, k: jnp.sum(jnp.cos(self.swirl(p, q, k, 2)))  # noqa: E731
        loss_ref = lambda p, k: jnp.sum(jnp.cos(swirl_ref(p, q, k, 2)))  # noqa: E731
        close(self, jax.vmap(jax.grad(loss, argnums=(0, 1)))(ps, ks),
              jax.vmap(jax.grad(loss_ref, argnums=(0, 1)))(ps, ks))
        # grad of a vmapped call: the tangent launch batched, then transposed.
        batched = lambda ps, ks: jnp.sum(jnp.cos(jax.vmap(lambda p, k: self.swirl(p, q, k, 2))(ps, ks)))  # noqa: E731
        batched_ref = lambda ps, ks: jnp.sum(jnp.cos(jax.vmap(lambda p, k: swirl_ref(p, q, k, 2))(ps, ks)))  # noqa: E731
        close(self, jax.jit(jax.grad(batched, argnums=(0, 1)))(ps, ks), jax.grad(batched_ref, argnums=(0, 1))(ps, ks))
        # One k for the whole batch: its gradient sums over the batch.
        one_k = lambda ps, k: jnp.sum(jnp.cos(jax.vmap(lambda p: self.swirl(p, q, k, 2))(ps)))  # noqa: E731
        one_k_ref = lambda ps, k: jnp.sum(jnp.cos(jax.vmap(lambda p: swirl_ref(p, q, k, 2))(ps)))  # noqa: E731
        close(self, jax.grad(one_k, argnums=1)(ps, jnp.float64(0.2)), jax.grad(one_k_ref, argnums=1)(ps, jnp.float64(0.2)))

    def test_lane_blocks_and_tails_of_an_elementwise_kernel(self) -> None:
        for n in (1, 16, 37, 1003):
            x, y = jnp.sin(jnp.arange(n, dtype=jnp.float64)), jnp.cos(jnp.arange(n, dtype=jnp.float64))
            dx, dy = jnp.cos(x), jnp.sin(y)
            out, t = jax.jvp(lambda x, y, a: self.daxpy(x, y, a), (x, y, jnp.float64(1.5)), (dx, dy, jnp.float64(2.0)))
            close(self, out, 1.5 * x + y, msg=f"n={n}")
            close(self, t, 2.0 * x + 1.5 * dx + dy, msg=f"n={n}")

    def test_kernels_forward_mode_does_not_take_are_reverse_mode_only(self) -> None:
        # An in/out array: reverse mode only, and the kernel says why (test_jax_compositions has
        # every message in full).
        springs = kj.jax_kernel("demo::springs", num_outputs=1, in_out_argnames=("f",), enable_backward=True,
                                launch_dims=2)
        xs = jnp.arange(9.0, dtype=jnp.float32).reshape(3, 3)
        pairs, rest, f0 = jnp.array([0, 1, 1, 2], jnp.int32), jnp.ones(2, jnp.float32), jnp.zeros((3, 3), jnp.float32)
        g = jax.grad(lambda xs: jnp.sum(springs(xs, pairs, rest, 1.0, f0) ** 2))(xs)
        self.assertEqual(g.shape, (3, 3))
        self.assertIn("has in/out arguments (f)", springs.forward_mode_error)
        with self.assertRaisesRegex(kj.TransformError, "kjit kernel 'demo::springs' has no forward mode and no second "
                                                       "derivatives: kernel 'demo::springs' has in/out arguments"):
            jax.jvp(lambda xs: springs(xs, pairs, rest, 1.0, f0), (xs,), (xs,))
        self.assertEqual(self.swirl.forward_mode_error, "")
        # Forward over forward has no launch: kjit's error naming the kernel. Reverse over
        # reverse is the tangent kernel's adjoint (the Hessian is symmetric).
        x, c = jnp.linspace(-1, 1, 5), jnp.linspace(0.5, 0.9, 5)
        f = lambda x: jnp.sum(jnp.sin(self.iterate(x, c, 3)))  # noqa: E731
        with self.assertRaisesRegex(kj.TransformError, "kjit kernel 'demo::iterate': forward over forward mode"):
            jax.jacfwd(jax.jacfwd(f))(x)
        close(self, jax.jacrev(jax.jacrev(f))(x), jax.hessian(lambda x: jnp.sum(jnp.sin(iterate_ref(x, c, 3))))(x),
              rtol=1e-8)


if __name__ == "__main__":
    unittest.main(verbosity=2)
