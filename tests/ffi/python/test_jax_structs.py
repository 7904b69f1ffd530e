"""Value struct parameters from JAX on the CPU platform: a kernel taking a kjit::dsl::Mesh called
with kjit.jax.mesh's dict (its BVH built by kjit's host builder through an FFI target), values
against a float64 brute force, gradients with respect to the mesh's points and the queries
against float64 central differences, under jit and vmap; a struct of plain values and an array;
and the errors for a wrong, missing or extra field, each naming the parameter and the field."""

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


def grid(g: int) -> tuple[np.ndarray, np.ndarray]:
    """A bumpy height field over [0, 1]^2, g x g vertices, 2 (g - 1)^2 triangles."""
    x, y = np.meshgrid(np.linspace(0, 1, g), np.linspace(0, 1, g))
    pts = np.stack([x, y, 0.2 * np.sin(5 * x) * np.cos(4 * y)], -1).reshape(-1, 3).astype(np.float32)
    faces = []
    for j in range(g - 1):
        for i in range(g - 1):
            a = j * g + i
            faces += [a, a + 1, a + g + 1, a, a + g + 1, a + g]
    return pts, np.array(faces, np.int32)


def tri_dist(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Distance (float64) from p to every triangle (a, b, c): the plane's inside, else the edges'."""
    n = np.cross(b - a, c - a)
    nn = np.sum(n * n, -1)
    x = p - (np.sum((p - a) * n, -1) / nn)[:, None] * n
    inside = np.ones(len(a), bool)
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= np.sum(np.cross(v - u, x - u) * n, -1) >= 0
    d = np.where(inside, np.linalg.norm(p - x, axis=-1), np.inf)
    for u, v in ((a, b), (b, c), (c, a)):
        t = np.clip(np.sum((p - u) * (v - u), -1) / np.sum((v - u) ** 2, -1), 0, 1)
        d = np.minimum(d, np.linalg.norm(p - (u + t[:, None] * (v - u)), axis=-1))
    return d


def loss_ref(points: np.ndarray, idx: np.ndarray, q: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """meshk::closest_loss in float64 for queries whose closest point is inside face
    faces[i]: the projection onto its plane, u and v its barycentrics of the first two vertices."""
    tri = points.astype(np.float64)[idx.reshape(-1, 3)[faces]]
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    n = np.cross(b - a, c - a)
    nn = np.sum(n * n, -1)
    x = q - (np.sum((q - a) * n, -1) / nn)[:, None] * n
    u = np.sum(np.cross(b - x, c - x) * n, -1) / nn
    v = np.sum(np.cross(c - x, a - x) * n, -1) / nn
    return np.sum((x - q) ** 2, -1) + 0.3 * u - 0.7 * v + 0.25 * x[:, 0]


def stable_queries(points: np.ndarray, idx: np.ndarray, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Queries just off the surface, each closest to the inside of one face by a clear margin."""
    rng = np.random.default_rng(seed)
    tri = points.astype(np.float64)[idx.reshape(-1, 3)]
    qs, fs = [], []
    while len(qs) < count:
        f = int(rng.integers(len(tri)))
        w = rng.dirichlet([4, 4, 4])
        if w.min() < 0.1:
            continue
        a, b, c = tri[f]
        n = np.cross(b - a, c - a)
        q = w @ tri[f] + rng.uniform(-0.04, 0.04) * n / np.linalg.norm(n)
        d = tri_dist(q[None], tri[:, 0], tri[:, 1], tri[:, 2])
        order = np.argsort(d)
        if order[0] == f and d[order[1]] - d[f] > 2e-3:
            qs.append(q)
            fs.append(f)
    return np.array(qs), np.array(fs)


class MeshTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.points, cls.indices = grid(9)
        cls.closest = kj.jax_kernel("meshk::closest", num_outputs=2)
        cls.loss = kj.jax_kernel("meshk::closest_loss", enable_backward=True)

    def test_mesh_dict_and_bvh_sizes(self) -> None:
        m = kj.mesh(self.points, self.indices)
        self.assertEqual(sorted(m), ["bvh_bounds", "bvh_nodes", "bvh_rays", "bvh_winding", "indices", "points", "velocities"])
        faces = len(self.indices) // 3
        self.assertEqual(m["bvh_bounds"].shape, (2 * (2 * faces - 1), 3))
        self.assertEqual(m["bvh_nodes"].shape, (2 * (2 * faces - 1) + faces,))
        self.assertEqual(m["velocities"].shape, (0, 3))
        nodes = np.asarray(m["bvh_nodes"])
        # The root's box holds every point; the leaves' items are a permutation of the faces.
        lo, hi = np.asarray(m["bvh_bounds"])[:2]
        np.testing.assert_array_equal(lo, self.points.min(0))
        np.testing.assert_array_equal(hi, self.points.max(0))
        items, stack = [], [0]
        while stack:  # the traversal's walk: from the root through the links to the leaves
            n = stack.pop()
            left, right = int(nodes[2 * n]), int(nodes[2 * n + 1])
            if left < 0:
                items += list(nodes[-left - 1:-left - 1 + right])
            else:
                stack += [left, right]
        self.assertEqual(sorted(items), list(range(faces)))

    def test_closest_point_values_against_a_float64_brute_force(self) -> None:
        q, faces = stable_queries(self.points, self.indices, 40, 1)
        far = np.array([[0.5, 0.5, 3.0], [4.0, 4.0, 4.0]])  # beyond max_dist: misses
        qq = jnp.asarray(np.concatenate([q, far]), jnp.float32)
        face, uvr = self.closest(kj.mesh(self.points, self.indices), qq, 0.5)
        np.testing.assert_array_equal(np.asarray(face), np.concatenate([faces, [-1, -1]]))
        np.testing.assert_array_equal(np.asarray(uvr)[-2:], 0)
        tri = self.points.astype(np.float64)[self.indices.reshape(-1, 3)[faces]]
        uv = np.asarray(uvr, np.float64)[:-2, :2]
        x = uv[:, :1] * tri[:, 0] + uv[:, 1:2] * tri[:, 1] + (1 - uv.sum(1, keepdims=True)) * tri[:, 2]
        d = tri_dist(np.asarray(qq, np.float64)[:-2], tri[:, 0], tri[:, 1], tri[:, 2])
        np.testing.assert_allclose(np.linalg.norm(x - np.asarray(qq, np.float64)[:-2], axis=1), d, atol=2e-6)
        # jit gives the same bits; vmap over query batches (the mesh unbatched) too.
        jf, ju = jax.jit(lambda m, p: self.closest(m, p, 0.5))(kj.mesh(self.points, self.indices), qq)
        np.testing.assert_array_equal(np.asarray(jf), np.asarray(face))
        np.testing.assert_array_equal(np.asarray(ju), np.asarray(uvr))
        m = kj.mesh(self.points, self.indices)
        vf, vu = jax.vmap(lambda p: self.closest(m, p, 0.5))(qq.reshape(2, -1, 3))
        np.testing.assert_array_equal(np.asarray(vf).reshape(-1), np.asarray(face))
        np.testing.assert_array_equal(np.asarray(vu).reshape(-1, 3), np.asarray(uvr))

    def test_vmap_over_meshes_builds_one_bvh_per_item(self) -> None:
        q, faces = stable_queries(self.points, self.indices, 12, 2)
        qq = jnp.asarray(q, jnp.float32)
        shift = np.array([0.0, 0.0, 0.5], np.float32)
        batch = jnp.stack([self.points, self.points + shift])

        def run(p):
            return self.closest(kj.mesh(p, self.indices), qq, 10.0)

        bf, bu = jax.jit(jax.vmap(run))(batch)
        for k in range(2):
            f, u = run(batch[k])
            np.testing.assert_array_equal(np.asarray(bf[k]), np.asarray(f))
            np.testing.assert_array_equal(np.asarray(bu[k]), np.asarray(u))
        np.testing.assert_array_equal(np.asarray(bf[0]), faces)

    def test_gradients_in_the_points_and_the_queries_against_float64_central_differences(self) -> None:
        q, faces = stable_queries(self.points, self.indices, 20, 3)
        w = 1.0 + 0.01 * np.arange(len(q))
        qq = jnp.asarray(q, jnp.float32)

        def total(points, queries):
            return jnp.sum(self.loss(kj.mesh(points, self.indices), queries) * w)

        for fn in (jax.grad(total, argnums=(0, 1)), jax.jit(jax.grad(total, argnums=(0, 1)))):
            gp, gq = fn(jnp.asarray(self.points), qq)
            qf = np.asarray(qq, np.float64)
            h = 1e-5
            ref_q = np.zeros_like(qf)
            for k in range(3):
                e = np.zeros(3)
                e[k] = h
                ref_q[:, k] = w * (loss_ref(self.points, self.indices, qf + e, faces) -
                                   loss_ref(self.points, self.indices, qf - e, faces)) / (2 * h)
            np.testing.assert_allclose(np.asarray(gq), ref_q, rtol=2e-3, atol=2e-3)
            base = self.points.astype(np.float64)
            ref_p = np.zeros_like(base)
            for j in range(len(base)):
                for k in range(3):
                    up, dn = base.copy(), base.copy()
                    up[j, k] += h
                    dn[j, k] -= h
                    ref_p[j, k] = np.sum(w * (loss_ref(up, self.indices, qf, faces) -
                                              loss_ref(dn, self.indices, qf, faces))) / (2 * h)
            np.testing.assert_allclose(np.asarray(gp), ref_p, rtol=5e-3, atol=5e-3)
            self.assertGreater(np.abs(ref_p).sum(), 1.0)

    def test_jvp_in_the_points_matches_the_gradient(self) -> None:
        q, _ = stable_queries(self.points, self.indices, 10, 4)
        qq = jnp.asarray(q, jnp.float32)
        d = jnp.asarray(np.random.default_rng(5).normal(size=self.points.shape), jnp.float32)

        def f(points):
            return self.loss(kj.mesh(points, self.indices), qq)

        _, tangent = jax.jvp(f, (jnp.asarray(self.points),), (d,))
        jac_rows = jax.vmap(lambda e: jax.vjp(f, jnp.asarray(self.points))[1](e)[0])(jnp.eye(len(q), dtype=jnp.float32))
        np.testing.assert_allclose(np.asarray(tangent), np.einsum("qpk,pk->q", np.asarray(jac_rows), np.asarray(d)),
                                   rtol=1e-4, atol=1e-5)

    def test_velocities(self) -> None:
        vel = kj.jax_kernel("tests::structs::closest_velocity", enable_backward=True)
        q, faces = stable_queries(self.points, self.indices, 8, 6)
        v = np.random.default_rng(7).normal(size=self.points.shape).astype(np.float32)
        out = vel(kj.mesh(self.points, self.indices, v), jnp.asarray(q, jnp.float32))
        _, uvr = self.closest(kj.mesh(self.points, self.indices), jnp.asarray(q, jnp.float32), 1.0)
        tri = v.astype(np.float64)[self.indices.reshape(-1, 3)[faces]]
        uv = np.asarray(uvr, np.float64)[:, :2]
        want = uv[:, :1] * tri[:, 0] + uv[:, 1:2] * tri[:, 1] + (1 - uv.sum(1, keepdims=True)) * tri[:, 2]
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-6)
        g = jax.grad(lambda vv: jnp.sum(vel(kj.mesh(self.points, self.indices, vv), jnp.asarray(q, jnp.float32))))(v)
        want_g = np.zeros_like(v, np.float64)
        for i, f in enumerate(faces):
            a, b, c = self.indices[3 * f:3 * f + 3]
            want_g[a] += uv[i, 0]
            want_g[b] += uv[i, 1]
            want_g[c] += 1 - uv[i, 0] - uv[i, 1]
        np.testing.assert_allclose(np.asarray(g), want_g, rtol=1e-5, atol=1e-6)


class StructErrorTests(unittest.TestCase):
    def test_wrong_missing_and_extra_fields_name_the_parameter_and_the_field(self) -> None:
        points, indices = grid(3)
        closest = kj.jax_kernel("meshk::closest", num_outputs=2)
        m = kj.mesh(points, indices)
        q = jnp.zeros((4, 3), jnp.float32)
        pre = "kernel 'meshk::closest': parameter 'mesh' (struct kjit::dsl::Mesh)"
        with self.assertRaisesRegex(TypeError, "^" + re.escape(
                f"{pre}, field 'indices': Invalid data type for array argument 'mesh.indices', expected int32, got "
                "float32")):
            closest({**m, "indices": m["indices"].astype(jnp.float32)}, q, 1.0)
        with self.assertRaisesRegex(TypeError, re.escape(
                f"{pre}, field 'points': Invalid inner dimensions for array argument 'mesh.points', expected (3,), "
                "got (4,)")):
            closest({**m, "points": jnp.zeros((9, 4), jnp.float32)}, q, 1.0)
        with self.assertRaisesRegex(TypeError, re.escape(
                f"{pre}, field 'bvh_nodes': Invalid dimensionality for array argument 'mesh.bvh_nodes', expected 1 "
                "dimensions, got 2")):
            closest({**m, "bvh_nodes": m["bvh_nodes"][None]}, q, 1.0)
        missing = dict(m)
        del missing["bvh_bounds"]
        with self.assertRaisesRegex(ValueError, re.escape(
                f"{pre}: missing field 'bvh_bounds' (its fields: points, indices, velocities, bvh_bounds, bvh_nodes, "
                "bvh_winding, bvh_rays)")):
            closest(missing, q, 1.0)
        with self.assertRaisesRegex(ValueError, re.escape(f"{pre}: no field named 'normals'")):
            closest({**m, "normals": q}, q, 1.0)
        with self.assertRaisesRegex(ValueError, re.escape(
                f"{pre}: expected its 7 fields (points, indices, velocities, bvh_bounds, bvh_nodes, bvh_winding, bvh_rays) in "
                "order, "
                "got 2")):
            closest((m["points"], m["indices"]), q, 1.0)
        with self.assertRaisesRegex(TypeError, re.escape(f"{pre}: expected a dict of its fields")):
            closest(m["points"], q, 1.0)
        # The tuple in field order works, an absent (None) optional array is empty.
        f1, _ = closest(tuple(m[k] for k in ("points", "indices", "velocities", "bvh_bounds", "bvh_nodes", "bvh_winding",
                                        "bvh_rays")), q, 1.0)
        f2, _ = closest({**m, "velocities": None}, q, 1.0)
        np.testing.assert_array_equal(np.asarray(f1), np.asarray(f2))
        with self.assertRaisesRegex(ValueError, "kjit.jax.mesh: indices has 4 entries"):
            kj.mesh(points, indices[:4])
        with self.assertRaisesRegex(TypeError, "kjit.jax.mesh: points must be float32"):
            kj.mesh(points.astype(np.float64), indices)
        bad = indices.copy()
        bad[5] = 99
        with self.assertRaisesRegex(Exception, re.escape(
                "kjit.jax.mesh: indices[5] = 99 is outside the points array (9 points)")):
            jax.block_until_ready(kj.mesh(points, bad)["bvh_nodes"])

    def test_a_struct_of_plain_values_and_an_array(self) -> None:
        affine = kj.jax_kernel("tests::structs::affine", enable_backward=True)
        x = jnp.asarray(np.random.default_rng(8).normal(size=(6, 3)), jnp.float32)
        w = jnp.linspace(1, 2, 12, dtype=jnp.float32)
        a = {"scale": 0.5, "shift": np.array([1, 2, 3], np.float32), "weights": w, "stride": 2}
        out = affine(x, a)
        np.testing.assert_allclose(np.asarray(out), np.asarray(x) * (0.5 * np.asarray(w)[::2, None]) + [1, 2, 3],
                                   rtol=1e-6)
        gw = jax.grad(lambda w: jnp.sum(affine(x, {**a, "weights": w})))(w)
        want = np.zeros(12)
        want[::2] = 0.5 * np.asarray(x, np.float64).sum(1)
        np.testing.assert_allclose(np.asarray(gw), want, rtol=1e-5, atol=1e-6)
        # Forward mode: the struct's array field carries a tangent (its plain fields a zero one).
        dx, dw = jnp.ones_like(x), jnp.linspace(-1, 1, 12, dtype=jnp.float32)
        _, t = jax.jvp(lambda x, w: affine(x, {**a, "weights": w}), (x, w), (dx, dw))
        np.testing.assert_allclose(np.asarray(t), np.asarray(dx * (0.5 * w[::2, None]) + x * (0.5 * dw[::2, None])),
                                   rtol=1e-6, atol=1e-6)
        # A plain field may be traced too (test_jax_struct_fields.py): one compilation, the same bits.
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda s: affine(x, {**a, "scale": s}))(0.5)), np.asarray(out))
        with self.assertRaisesRegex(Exception, re.escape("'a.stride'")):
            affine(x, {**a, "stride": 2.5})


if __name__ == "__main__":
    unittest.main(verbosity=2)
