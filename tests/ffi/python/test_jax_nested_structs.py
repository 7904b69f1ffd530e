"""Nested value structs from JAX on the CPU platform: tests::structs::scene_force takes a struct
three deep (Scene{offset, Body{scale, Spring{rest, k}, weights}, Spring pull}) passed as nested
dicts (or tuples); its values against a float64 restatement, the gradients of every array leaf
against float64 central differences, jvp against the vjp, a Hessian-vector product against
float64 differences of differences, jit and vmap bit for bit; a
kjit.jax.mesh inside a struct against the mesh kernel taking it directly, bit for bit; and the
errors for a missing, extra or misnested field and a wrong dtype or shape at depth, each naming
the full path of the field."""

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

N = 11
OFFSET = np.array([0.25, -0.5, 1.0], np.float32)
SCALE, K, PULL_K = 0.75, 1.5, -0.625


def arrays(seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": rng.uniform(-1, 1, (N, 3)).astype(np.float32), "rest": rng.uniform(-1, 1, (N, 3)).astype(np.float32),
            "weights": rng.uniform(0.5, 2, N).astype(np.float32), "pull": rng.uniform(-1, 1, (N, 3)).astype(np.float32)}


def scene(rest, weights, pull, offset=OFFSET):  # noqa: ANN001, ANN201
    """The struct as nested dicts (the plain fields static)."""
    return {"offset": offset, "body": {"scale": SCALE, "spring": {"rest": rest, "k": K}, "weights": weights},
            "pull": {"rest": pull, "k": PULL_K}}


def force_ref(x: np.ndarray, rest: np.ndarray, weights: np.ndarray, pull: np.ndarray) -> np.ndarray:
    """scene_force in float64."""
    x, rest, weights, pull = (np.asarray(a, np.float64) for a in (x, rest, weights, pull))
    d = x - rest
    p2 = np.sum(pull * pull, -1)
    return (d * (SCALE * K * weights * np.sum(d * d, -1))[:, None] + pull * (PULL_K * np.sin(p2))[:, None]
            + OFFSET.astype(np.float64))


class NestedStructTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.force = kj.jax_kernel("tests::structs::scene_force", enable_backward=True)
        cls.a = arrays()

    def call(self, x, rest, weights, pull):  # noqa: ANN001, ANN201
        return self.force(x, scene(rest, weights, pull))

    def test_values_jit_and_a_tuple_against_float64(self) -> None:
        a = self.a
        out = self.call(a["x"], a["rest"], a["weights"], a["pull"])
        np.testing.assert_allclose(np.asarray(out), force_ref(a["x"], a["rest"], a["weights"], a["pull"]),
                                   rtol=2e-6, atol=2e-6)
        jitted = jax.jit(self.call)(a["x"], a["rest"], a["weights"], a["pull"])
        np.testing.assert_array_equal(np.asarray(jitted), np.asarray(out))
        # The same struct as nested tuples in field order.
        t = (OFFSET, (SCALE, (a["rest"], K), a["weights"]), (a["pull"], PULL_K))
        np.testing.assert_array_equal(np.asarray(self.force(a["x"], t)), np.asarray(out))

    def test_gradients_of_every_array_leaf_against_float64_central_differences(self) -> None:
        a = self.a
        cot = np.random.default_rng(5).normal(size=(N, 3))

        def loss(x, rest, weights, pull):  # noqa: ANN001, ANN202
            return jnp.sum(self.call(x, rest, weights, pull) * cot.astype(np.float32))

        names = ("x", "rest", "weights", "pull")
        grads = jax.jit(jax.grad(loss, argnums=(0, 1, 2, 3)))(*(jnp.asarray(a[n]) for n in names))
        h = 1e-6
        for i, name in enumerate(names):
            g = np.asarray(grads[i], np.float64)
            self.assertGreater(np.abs(g).sum(), 0.1, name)
            base = [np.asarray(a[n], np.float64) for n in names]
            want = np.zeros_like(base[i])
            for j in np.ndindex(base[i].shape):
                up = [b.copy() for b in base]
                dn = [b.copy() for b in base]
                up[i][j] += h
                dn[i][j] -= h
                want[j] = np.sum((force_ref(*up) - force_ref(*dn)) * cot) / (2 * h)
            np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5, err_msg=name)

    def test_jvp_matches_the_vjp_and_vmap_matches_a_loop_bit_for_bit(self) -> None:
        a = self.a
        x, rest, w, pull = (jnp.asarray(a[n]) for n in ("x", "rest", "weights", "pull"))
        f = lambda rest, w: self.call(x, rest, w, pull)  # noqa: E731
        d_rest = jnp.asarray(np.random.default_rng(6).normal(size=(N, 3)), jnp.float32)
        d_w = jnp.linspace(-1, 1, N, dtype=jnp.float32)
        _, tangent = jax.jvp(f, (rest, w), (d_rest, d_w))
        _, vjp = jax.vjp(f, rest, w)
        ct = jnp.asarray(np.random.default_rng(7).normal(size=(N, 3)), jnp.float32)
        g_rest, g_w = vjp(ct)
        # <ct, J d> == <J^T ct, d>
        lhs = float(jnp.sum(ct.astype(jnp.float64) * tangent))
        rhs = float(jnp.sum(g_rest.astype(jnp.float64) * d_rest) + jnp.sum(g_w.astype(jnp.float64) * d_w))
        self.assertAlmostEqual(lhs, rhs, delta=1e-4 * max(1.0, abs(lhs)))
        # vmap over a leaf two levels down (the weights) and over x, against one call per item.
        ws = jnp.stack([w, 2 * w, w[::-1]])
        batched = jax.jit(jax.vmap(lambda w: self.call(x, rest, w, pull)))(ws)
        for b in range(3):
            np.testing.assert_array_equal(np.asarray(batched[b]), np.asarray(self.call(x, rest, ws[b], pull)))
        xs = jnp.stack([x, -x])
        bx = jax.vmap(lambda x: self.call(x, rest, w, pull))(xs)
        np.testing.assert_array_equal(np.asarray(bx[1]), np.asarray(self.call(-x, rest, w, pull)))
        # grad under vmap: per item, the same bits as alone.
        gl = jax.vmap(jax.grad(lambda w: jnp.sum(self.call(x, rest, w, pull))))(ws)
        g1 = jax.grad(lambda w: jnp.sum(self.call(x, rest, w, pull)))(ws[1])
        np.testing.assert_array_equal(np.asarray(gl[1]), np.asarray(g1))

    def test_second_order_through_a_nested_leaf_against_float64_differences(self) -> None:
        # jax.jvp of jax.grad in body.spring.rest: the tangent kernel's adjoint over the struct.
        a = self.a
        cot = np.random.default_rng(9).normal(size=(N, 3))
        v = np.random.default_rng(10).normal(size=(N, 3))

        def loss(rest):  # noqa: ANN001, ANN202
            return jnp.sum(self.call(a["x"], rest, a["weights"], a["pull"]) * cot.astype(np.float32))

        _, hv = jax.jvp(jax.grad(loss), (jnp.asarray(a["rest"]),), (jnp.asarray(v, jnp.float32),))

        def grad_ref(rest: np.ndarray) -> np.ndarray:
            g = np.zeros_like(rest)
            for j in np.ndindex(rest.shape):
                up, dn = rest.copy(), rest.copy()
                up[j] += 1e-5
                dn[j] -= 1e-5
                g[j] = np.sum((force_ref(a["x"], up, a["weights"], a["pull"]) -
                               force_ref(a["x"], dn, a["weights"], a["pull"])) * cot) / 2e-5
            return g

        r = np.asarray(a["rest"], np.float64)
        want = (grad_ref(r + 1e-3 * v) - grad_ref(r - 1e-3 * v)) / 2e-3
        self.assertGreater(np.abs(want).sum(), 0.1)
        np.testing.assert_allclose(np.asarray(hv, np.float64), want, rtol=1e-4, atol=1e-4)


class MeshInStructTests(unittest.TestCase):
    def test_a_mesh_inside_a_struct_matches_the_mesh_kernel_bit_for_bit(self) -> None:
        g = 6
        xg, yg = np.meshgrid(np.linspace(0, 1, g), np.linspace(0, 1, g))
        points = np.stack([xg, yg, 0.2 * np.sin(5 * xg) * np.cos(4 * yg)], -1).reshape(-1, 3).astype(np.float32)
        faces = [v for j in range(g - 1) for i in range(g - 1)
                 for v in (j * g + i, j * g + i + 1, j * g + i + g + 1, j * g + i, j * g + i + g + 1, j * g + i + g)]
        indices = np.array(faces, np.int32)
        q = jnp.asarray(np.random.default_rng(2).uniform([0, 0, -0.2], [1, 1, 0.2], (40, 3)), jnp.float32)
        target = kj.jax_kernel("tests::structs::target_loss", enable_backward=True)
        direct = kj.jax_kernel("meshk::closest_loss", enable_backward=True)

        def nested(p):  # noqa: ANN001, ANN202
            return target({"weight": 2.0, "mesh": kj.mesh(p, indices)}, q)

        def plain(p):  # noqa: ANN001, ANN202
            return 2.0 * direct(kj.mesh(p, indices), q)

        pts = jnp.asarray(points)
        np.testing.assert_array_equal(np.asarray(nested(pts)), np.asarray(plain(pts)))
        gn = jax.grad(lambda p: jnp.sum(nested(p)))(pts)
        gp = jax.grad(lambda p: jnp.sum(plain(p)))(pts)
        self.assertGreater(float(jnp.abs(gn).sum()), 0.1)
        np.testing.assert_array_equal(np.asarray(gn), np.asarray(gp))


class NestedStructErrorTests(unittest.TestCase):
    def test_bad_input_at_depth_names_the_full_path(self) -> None:
        force = kj.jax_kernel("tests::structs::scene_force")
        a = arrays()
        x = a["x"]
        good = scene(a["rest"], a["weights"], a["pull"])
        pre = "kernel 'tests::structs::scene_force': parameter 's' (struct tests::structs::Scene)"
        body = f"{pre}, field 'body' (struct tests::structs::Body)"
        spring = f"{pre}, field 'body.spring' (struct tests::structs::Spring)"

        def with_spring(**kw):  # noqa: ANN003, ANN202
            return {**good, "body": {**good["body"], "spring": kw}}

        with self.assertRaisesRegex(ValueError, "^" + re.escape(
                f"{spring}: missing field 'body.spring.k' (its fields: rest, k)") + "$"):
            force(x, with_spring(rest=a["rest"]))
        with self.assertRaisesRegex(ValueError, "^" + re.escape(
                f"{spring}: no field named 'body.spring.damping' (its fields: rest, k)") + "$"):
            force(x, with_spring(rest=a["rest"], k=K, damping=0.1))
        with self.assertRaisesRegex(ValueError, "^" + re.escape(
                f"{pre}: missing field 'pull' (its fields: offset, body, pull)") + "$"):
            force(x, {"offset": OFFSET, "body": good["body"]})
        # Wrong nesting: an array where a struct goes, a struct where an array or a plain value goes.
        with self.assertRaisesRegex(TypeError, "^" + re.escape(
                f"{body}: expected a dict of its fields (scale, spring, weights) or a tuple of them in that order, "
                "got ndarray") + "$"):
            force(x, {**good, "body": a["weights"]})
        with self.assertRaisesRegex(TypeError, "^" + re.escape(
                f"{pre}, field 'body.spring.rest': Invalid type for array argument 's.body.spring.rest', expected an "
                "array of float32, got dict") + "$"):
            force(x, with_spring(rest={"rest": a["rest"]}, k=K))
        with self.assertRaisesRegex(TypeError, "^" + re.escape(
                f"{pre}, field 'pull.k': expected a float32 value, got a dict (it is a plain field, not a struct)")):
            force(x, {**good, "pull": {"rest": a["pull"], "k": {"k": 1.0}}})
        with self.assertRaisesRegex(ValueError, "^" + re.escape(
                f"{body}: expected its 3 fields (scale, spring, weights) in order, got 2 values") + "$"):
            force(x, {**good, "body": (SCALE, good["body"]["spring"])})
        # Wrong dtype and shape at depth.
        with self.assertRaisesRegex(TypeError, "^" + re.escape(
                f"{pre}, field 'body.weights': Invalid data type for array argument 's.body.weights', expected "
                "float32, got float64") + "$"):
            force(x, scene(a["rest"], a["weights"].astype(np.float64), a["pull"]))
        with self.assertRaisesRegex(TypeError, "^" + re.escape(
                f"{pre}, field 'body.spring.rest': Invalid inner dimensions for array argument 's.body.spring.rest', "
                "expected (3,), got (2,)") + "$"):
            force(x, scene(a["rest"][:, :2], a["weights"], a["pull"]))
        with self.assertRaisesRegex(TypeError, "^" + re.escape(
                f"{pre}, field 'pull.rest': Invalid dimensionality for array argument 's.pull.rest', expected 2 "
                "dimensions, got 1") + "$"):
            force(x, scene(a["rest"], a["weights"], a["pull"][:, 0]))
        # A plain field at depth may be traced (test_jax_struct_fields.py); a bad one names its path.
        with self.assertRaisesRegex(TypeError, "^" + re.escape(
                f"{pre}, field 'body.spring.k': Invalid shape for traced argument 's.body.spring.k', expected () "
                "for float32, got (2,)") + "$"):
            jax.jit(lambda k: force(x, with_spring(rest=a["rest"], k=k)))(jnp.ones(2, jnp.float32))
        with self.assertRaisesRegex(Exception, re.escape("'s.offset'")):
            force(x, scene(a["rest"], a["weights"], a["pull"], offset=np.zeros(2, np.float32)))


if __name__ == "__main__":
    unittest.main(verbosity=2)
