"""Traced plain struct fields from JAX on the CPU platform: a struct's scalar and vector fields
given JAX values at every depth of tests::structs::scene_force's Scene (offset, body.scale,
body.spring.k, pull.k) and tests::structs::affine's Affine (scale, shift, an int stride) are
operands, as a value parameter of its own is: the static call's bits, one compilation under jit
for every value, their gradients against float64 central differences, jvp against float64
forward differences, a Hessian against second differences, vmap over a batched field against a
loop bit for bit, static and traced fields mixed, and the errors for a traced field of the wrong
dtype or shape, naming its path."""

from __future__ import annotations

import os
import re
import unittest

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _common import kj, load_libraries  # noqa: E402

load_libraries()

N = 13
PLAIN = {"offset": np.array([0.25, -0.5, 1.0]), "scale": 0.75, "k": 1.5, "pull_k": -0.625}
NAMES = tuple(PLAIN)


def arrays(seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": rng.uniform(-1, 1, (N, 3)).astype(np.float32), "rest": rng.uniform(-1, 1, (N, 3)).astype(np.float32),
            "weights": rng.uniform(0.5, 2, N).astype(np.float32), "pull": rng.uniform(-1, 1, (N, 3)).astype(np.float32)}


def scene(a: dict, offset, scale, k, pull_k):  # noqa: ANN001, ANN201
    """The struct as nested dicts: the plain fields as given (numbers or JAX values)."""
    return {"offset": offset, "body": {"scale": scale, "spring": {"rest": a["rest"], "k": k}, "weights": a["weights"]},
            "pull": {"rest": a["pull"], "k": pull_k}}


def force_ref(a: dict, offset, scale, k, pull_k) -> np.ndarray:  # noqa: ANN001
    """scene_force in float64."""
    x, rest, weights, pull = (np.asarray(a[n], np.float64) for n in ("x", "rest", "weights", "pull"))
    d = x - rest
    p2 = np.sum(pull * pull, -1)
    return (d * (scale * k * weights * np.sum(d * d, -1))[:, None] + pull * (pull_k * np.sin(p2))[:, None]
            + np.asarray(offset, np.float64))


def f32(v):  # noqa: ANN001, ANN201
    return jnp.asarray(v, jnp.float32)


class TracedFieldTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.force = kj.jax_kernel("tests::structs::scene_force", enable_backward=True)
        cls.a = arrays()

    def call(self, offset, scale, k, pull_k):  # noqa: ANN001, ANN201
        return self.force(self.a["x"], scene(self.a, offset, scale, k, pull_k))

    def test_traced_fields_give_the_static_call_bit_for_bit_and_jit_compiles_once(self) -> None:
        static = self.call(PLAIN["offset"].astype(np.float32), *(PLAIN[n] for n in NAMES[1:]))
        np.testing.assert_allclose(np.asarray(static), force_ref(self.a, **PLAIN), rtol=2e-6, atol=2e-6)
        traced = self.call(*(f32(PLAIN[n]) for n in NAMES))
        np.testing.assert_array_equal(np.asarray(traced), np.asarray(static))
        # Mixed: the vector and the deepest field traced, the others numbers.
        mixed = self.call(f32(PLAIN["offset"]), PLAIN["scale"], f32(PLAIN["k"]), PLAIN["pull_k"])
        np.testing.assert_array_equal(np.asarray(mixed), np.asarray(static))
        # Under jit, one compilation serves every value (Python floats become weak-typed operands).
        traces = []

        def f(k, pull_k):  # noqa: ANN001, ANN202
            traces.append(1)
            return self.call(f32(PLAIN["offset"]), PLAIN["scale"], k, pull_k)

        jf = jax.jit(f)
        for k, pk in ((1.5, -0.625), (2.0, 0.5), (-1.0, 3.0)):
            out = jf(k, pk)
            np.testing.assert_allclose(np.asarray(out), force_ref(self.a, PLAIN["offset"], PLAIN["scale"], k, pk),
                                       rtol=2e-6, atol=5e-6)
        self.assertEqual(len(traces), 1)

    def test_gradients_of_scalar_and_vector_fields_at_every_depth_against_float64_central_differences(self) -> None:
        cot = np.random.default_rng(5).normal(size=(N, 3))

        def loss(offset, scale, k, pull_k, rest):  # noqa: ANN001, ANN202
            a = {**self.a, "rest": rest}
            return jnp.sum(self.force(a["x"], scene(a, offset, scale, k, pull_k)) * f32(cot))

        args = [f32(PLAIN[n]) for n in NAMES] + [f32(self.a["rest"])]
        grads = jax.jit(jax.grad(loss, argnums=(0, 1, 2, 3, 4)))(*args)
        h = 1e-6
        base = {**{n: np.asarray(PLAIN[n], np.float64) for n in NAMES}, "rest": np.asarray(self.a["rest"], np.float64)}

        def ref(v: dict) -> float:
            return float(np.sum(force_ref({**self.a, "rest": v["rest"]}, *(v[n] for n in NAMES)) * cot))

        for i, name in enumerate((*NAMES, "rest")):
            g = np.asarray(grads[i], np.float64)
            self.assertEqual(g.shape, base[name].shape, name)
            self.assertGreater(np.abs(g).sum(), 0.1, name)
            want = np.zeros_like(base[name])
            for j in np.ndindex(base[name].shape):
                up = {n: np.array(v, copy=True) for n, v in base.items()}
                dn = {n: np.array(v, copy=True) for n, v in base.items()}
                up[name][j] += h
                dn[name][j] -= h
                want[j] = (ref(up) - ref(dn)) / (2 * h)
            np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-4, err_msg=name)

    def test_jvp_in_the_fields_against_float64_forward_differences(self) -> None:
        primals = tuple(f32(PLAIN[n]) for n in NAMES)
        dirs = (f32([0.5, -1.0, 2.0]), f32(-0.75), f32(1.25), f32(0.5))
        out, tangent = jax.jvp(self.call, primals, dirs)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(self.call(*primals)))
        h = 1e-7
        base = [np.asarray(PLAIN[n], np.float64) for n in NAMES]
        moved = [b + h * np.asarray(d, np.float64) for b, d in zip(base, dirs)]
        want = (force_ref(self.a, *moved) - force_ref(self.a, *base)) / h
        self.assertGreater(np.abs(want).sum(), 1.0)
        np.testing.assert_allclose(np.asarray(tangent, np.float64), want, rtol=1e-4, atol=1e-5)
        # One field's direction alone (the others symbolic zeros), under jit.
        _, t_k = jax.jit(lambda k: jax.jvp(lambda k: self.call(f32(PLAIN["offset"]), 0.75, k, -0.625),
                                           (k,), (f32(1.0),)))(f32(1.5))
        d = np.asarray(self.a["x"], np.float64) - np.asarray(self.a["rest"], np.float64)
        want_k = d * (0.75 * np.asarray(self.a["weights"], np.float64) * np.sum(d * d, -1))[:, None]
        np.testing.assert_allclose(np.asarray(t_k, np.float64), want_k, rtol=1e-5, atol=1e-6)

    def test_hessian_in_two_fields_against_float64_second_differences(self) -> None:
        # Reverse over forward through the tangent kernel's adjoint: both structs' traced leaves.
        cot = np.random.default_rng(11).normal(size=(N, 3))

        def loss(v):  # noqa: ANN001, ANN202
            return jnp.sum(self.call(f32(PLAIN["offset"]), v[0], v[1], PLAIN["pull_k"]) * f32(cot))

        v0 = np.array([PLAIN["scale"], PLAIN["k"]])
        hess = np.asarray(jax.hessian(loss)(f32(v0)), np.float64)

        def ref(v: np.ndarray) -> float:
            return float(np.sum(force_ref(self.a, PLAIN["offset"], v[0], v[1], PLAIN["pull_k"]) * cot))

        h = 1e-4
        want = np.zeros((2, 2))
        for i in range(2):
            for j in range(2):
                e_i, e_j = np.eye(2)[i] * h, np.eye(2)[j] * h
                want[i, j] = (ref(v0 + e_i + e_j) - ref(v0 + e_i - e_j) - ref(v0 - e_i + e_j)
                              + ref(v0 - e_i - e_j)) / (4 * h * h)
        self.assertGreater(abs(want[0, 1]), 0.1)
        np.testing.assert_allclose(hess, want, rtol=1e-4, atol=1e-4)

    def test_vmap_over_a_batched_field_matches_a_loop_bit_for_bit(self) -> None:
        ks = f32([1.5, -2.0, 0.25])
        offsets = f32([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [-0.5, 0.5, 0.0]])
        for method in ("broadcast_all", "sequential"):
            f = lambda k, off: self.force(self.a["x"], scene(self.a, off, 0.75, k, -0.625),  # noqa: E731
                                          vmap_method=method)
            batched = jax.jit(jax.vmap(f))(ks, offsets)
            only_k = jax.vmap(f, in_axes=(0, None))(ks, offsets[1])
            for b in range(3):
                np.testing.assert_array_equal(np.asarray(batched[b]), np.asarray(f(ks[b], offsets[b])), method)
                np.testing.assert_array_equal(np.asarray(only_k[b]), np.asarray(f(ks[b], offsets[1])), method)
            # The gradient per item: vmap of grad in the batched fields, against one grad per item.
            g = jax.vmap(jax.grad(lambda k, off: jnp.sum(f(k, off) ** 2), argnums=(0, 1)))(ks, offsets)
            for b in range(3):
                gk, goff = jax.grad(lambda k, off: jnp.sum(f(k, off) ** 2), argnums=(0, 1))(ks[b], offsets[b])
                np.testing.assert_array_equal(np.asarray(g[0][b]), np.asarray(gk), method)
                np.testing.assert_array_equal(np.asarray(g[1][b]), np.asarray(goff), method)
        # An unbatched traced field under a batched call: its gradient sums the items'.
        xs = jnp.stack([f32(self.a["x"]), -f32(self.a["x"])])
        gk = jax.grad(lambda k: jnp.sum(jax.vmap(lambda x: self.force(x, scene(self.a, PLAIN["offset"], 0.75, k,
                                                                                  -0.625)))(xs)))(f32(1.5))
        g0 = sum(float(jax.grad(lambda k: jnp.sum(self.force(x, scene(self.a, PLAIN["offset"], 0.75, k, -0.625))))(
            f32(1.5))) for x in xs)
        self.assertAlmostEqual(float(gk), g0, delta=1e-5 * max(1.0, abs(g0)))

    def test_an_int_field_traced_and_a_float_field_differentiated_in_a_flat_struct(self) -> None:
        affine = kj.jax_kernel("tests::structs::affine", enable_backward=True)
        x = jnp.asarray(np.random.default_rng(8).normal(size=(6, 3)), jnp.float32)
        w = jnp.linspace(1, 2, 12, dtype=jnp.float32)
        shift = np.array([1, 2, 3], np.float32)

        def f(scale, shift, stride):  # noqa: ANN001, ANN202
            return affine(x, {"scale": scale, "shift": shift, "weights": w, "stride": stride})

        static = f(0.5, shift, 2)
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(f32(0.5), f32(shift), jnp.int32(2))), np.asarray(static))
        np.testing.assert_array_equal(np.asarray(f(0.5, shift, jnp.int32(1))), np.asarray(f(0.5, shift, 1)))
        gs, gsh = jax.grad(lambda s, sh: jnp.sum(f(s, sh, 2) ** 2), argnums=(0, 1))(f32(0.5), f32(shift))
        out64 = np.asarray(x, np.float64) * (0.5 * np.asarray(w, np.float64)[::2, None]) + shift
        np.testing.assert_allclose(float(gs), np.sum(2 * out64 * np.asarray(x, np.float64) *
                                                     np.asarray(w, np.float64)[::2, None]), rtol=1e-5)
        np.testing.assert_allclose(np.asarray(gsh), np.sum(2 * out64, 0), rtol=1e-5)

    def test_a_traced_field_of_the_wrong_dtype_or_shape_names_its_path(self) -> None:
        pre = "kernel 'tests::structs::scene_force': parameter 's' (struct tests::structs::Scene)"
        with self.assertRaisesRegex(TypeError, re.escape(
                f"{pre}, field 'body.spring.k': Invalid data type for traced argument 's.body.spring.k', expected "
                "float32, got float64")):
            self.call(PLAIN["offset"], 0.75, jnp.asarray(1.5, jnp.float64), -0.625)
        with self.assertRaisesRegex(TypeError, re.escape(
                f"{pre}, field 'offset': Invalid shape for traced argument 's.offset', expected (3,) for vec3f, "
                "got (2,)")):
            self.call(f32([1.0, 2.0]), 0.75, 1.5, -0.625)
        with self.assertRaisesRegex(TypeError, re.escape(
                f"{pre}, field 'pull.k': Invalid shape for traced argument 's.pull.k', expected () for float32, "
                "got (1,)")):
            jax.jit(lambda k: self.call(PLAIN["offset"], 0.75, 1.5, k))(f32([1.0]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
