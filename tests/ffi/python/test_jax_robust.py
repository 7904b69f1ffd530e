"""kjit kernels from JAX under the inputs issue 13 found broken: vmap of every element kind with
every vmap_method and batched and unbatched operands, jax.jacrev, expand_dims with an unbatched
in/out operand, static values over the full range of every dtype, and launches longer than an
unguarded array."""

from __future__ import annotations

import os
import re
import unittest

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

from _common import kj, load_libraries  # noqa: E402

load_libraries()

KINDS = {"f": (), "v": (3,), "m": (3, 3), "q": (4,), "t": (7,)}
METHODS = ("broadcast_all", "sequential", "expand_dims")


def data(shape: tuple[int, ...], seed: int) -> jax.Array:
    return jnp.asarray(np.random.default_rng(seed).normal(size=shape), jnp.float32)


class VmapTests(unittest.TestCase):
    def test_every_kind_method_and_batching(self) -> None:
        B, n, a = 3, 5, 1.5
        for kind, inner in KINDS.items():
            for method in METHODS:
                f = kj.jax_kernel(f"tests::robust::axpy_{kind}", vmap_method=method)
                xs, ys = data((B, n) + inner, 1), data((B, n) + inner, 2)
                x1, y1 = xs[0], ys[0]
                cases = {
                    "both batched": (jax.vmap(lambda x, y: f(x, y, a))(xs, ys), a * xs + ys),
                    "y unbatched": (jax.vmap(lambda x: f(x, y1, a))(xs), a * xs + y1),
                    "x unbatched": (jax.vmap(lambda y: f(x1, y, a))(ys), a * x1 + ys),
                    "under jit": (jax.jit(jax.vmap(lambda x, y: f(x, y, a)))(xs, ys), a * xs + ys),
                }
                for what, (got, want) in cases.items():
                    with self.subTest(kind=kind, method=method, case=what):
                        self.assertEqual(got.shape, want.shape)
                        for b in range(B):  # every batch item, not just the first
                            np.testing.assert_allclose(got[b], want[b], rtol=1e-6, atol=1e-6)

    def test_nested_vmap(self) -> None:
        f = kj.jax_kernel("tests::robust::axpy_m")
        xs, ys = data((2, 3, 4, 3, 3), 3), data((3, 4, 3, 3), 4)
        got = jax.vmap(jax.vmap(lambda x, y: f(x, y, 2.0)), in_axes=(0, None))(xs, ys)
        np.testing.assert_allclose(got, 2.0 * xs + ys, rtol=1e-6)

    def test_jacrev_of_vector_kernels(self) -> None:
        n, a = 4, -0.5
        for kind in ("v", "m", "t"):
            inner = KINDS[kind]
            for method in METHODS:
                with self.subTest(kind=kind, method=method):
                    f = kj.jax_kernel(f"tests::robust::axpy_{kind}", vmap_method=method, enable_backward=True)
                    x, y = data((n,) + inner, 5), data((n,) + inner, 6)
                    jx, jy = jax.jacrev(lambda x, y: f(x, y, a), argnums=(0, 1))(x, y)
                    eye = np.eye(x.size, dtype=np.float32).reshape(x.shape + x.shape)
                    np.testing.assert_allclose(jx, a * eye, atol=1e-6)
                    np.testing.assert_allclose(jy, eye, atol=1e-6)

    def test_grad_of_vmap_of_matrices(self) -> None:
        f = kj.jax_kernel("tests::robust::axpy_m", enable_backward=True)
        xs, y = data((3, 4, 3, 3), 7), data((4, 3, 3), 8)
        w = data((3, 4, 3, 3), 9)
        g = jax.grad(lambda xs, y: jnp.sum(w * jax.vmap(lambda x: f(x, y, 3.0))(xs)), argnums=(0, 1))(xs, y)
        np.testing.assert_allclose(g[0], 3.0 * w, rtol=1e-6)
        np.testing.assert_allclose(g[1], jnp.sum(w, 0), rtol=1e-5)

    def test_expand_dims_with_an_unbatched_in_out_operand(self) -> None:
        B, n = 3, 6
        acc0 = data((n, 3), 10)
        xs = data((B, n, 3), 11)
        for method in METHODS:
            with self.subTest(method=method):
                f = kj.jax_kernel("tests::robust::accumulate_v", in_out_argnames=("acc",), vmap_method=method)
                got = jax.jit(jax.vmap(lambda x: f(x, 2.0, acc0)))(xs)  # acc unbatched
                np.testing.assert_allclose(got, acc0 + 2.0 * xs, rtol=1e-6)
                both = jax.vmap(lambda x, acc: f(x, 2.0, acc))(xs, xs)  # acc batched too
                np.testing.assert_allclose(both, 3.0 * xs, rtol=1e-6)
                np.testing.assert_allclose(f(xs[1], 2.0, acc0), acc0 + 2.0 * xs[1], rtol=1e-6)


def echo(**values):
    """tests::robust::echo_scalars on `values` (every dtype), as numpy values."""
    f = kj.jax_kernel("tests::robust::echo_scalars", num_outputs=13, launch_dims=1, output_dims=1)
    names = ["b", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32", "f64"]
    outs = f(*[values[n] for n in names])
    return {n: np.asarray(o)[0] for n, o in zip(names, outs)}


class StaticTests(unittest.TestCase):
    DTYPES = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32,
              "i64": np.int64, "u64": np.uint64}

    def base(self) -> dict:
        return {"b": True, "f16": 0.0, "bf16": 0.0, "f32": 0.0, "f64": 0.0, **{n: 0 for n in self.DTYPES}}

    def test_integer_extremes(self) -> None:
        for end in ("min", "max"):
            v = self.base()
            for n, t in self.DTYPES.items():
                v[n] = int(getattr(np.iinfo(t), end))
            v["b"] = end == "max"
            got = echo(**v)
            for n, t in self.DTYPES.items():
                with self.subTest(name=n, end=end):
                    self.assertEqual(int(got[n]), v[n])
                    self.assertEqual(got[n].dtype, np.dtype(t))
            self.assertEqual(bool(got["b"]), end == "max")

    def test_uint64_above_int64_max(self) -> None:
        for u in (2**63, 2**64 - 1, 2**63 + 12345):
            v = self.base()
            v["u64"] = u
            self.assertEqual(int(echo(**v)["u64"]), u)
        v = self.base()
        v["u64"] = np.uint64(2**64 - 2)
        self.assertEqual(int(echo(**v)["u64"]), 2**64 - 2)

    def test_half_and_bfloat16_over_their_range(self) -> None:
        f16 = [65504.0, -65504.0, 6.1035156e-05, 5.9604645e-08, -0.0, 1.0 / 3.0, float("inf"), float("-inf")]
        bf16 = [3.3895314e38, -3.3895314e38, 1.1754944e-38, 9.1835e-41, -0.0, 1.0 / 3.0, float("inf")]
        for h, bf in zip(f16, bf16 + [bf16[-1]]):
            v = self.base()
            v["f16"], v["bf16"] = h, bf
            got = echo(**v)
            with self.subTest(f16=h, bf16=bf):
                self.assertEqual(got["f16"].dtype, np.float16)
                self.assertEqual(np.float16(h).tobytes(), got["f16"].tobytes())
                self.assertEqual(np.array(bf, ml_dtypes.bfloat16).tobytes(), got["bf16"].tobytes())
        v = self.base()
        v["f16"], v["bf16"] = float("nan"), float("nan")
        got = echo(**v)
        self.assertTrue(np.isnan(got["f16"]) and np.isnan(np.float32(got["bf16"])))
        v = self.base()
        v["f16"], v["bf16"] = np.float16(0.5), ml_dtypes.bfloat16(-2.5)
        got = echo(**v)
        self.assertEqual(float(got["f16"]), 0.5)
        self.assertEqual(float(got["bf16"]), -2.5)

    def test_float_extremes(self) -> None:
        v = self.base()
        v["f32"], v["f64"] = float(np.finfo(np.float32).max), float(np.finfo(np.float64).tiny)
        got = echo(**v)
        self.assertEqual(got["f32"], np.finfo(np.float32).max)
        self.assertEqual(got["f64"], np.finfo(np.float64).tiny)

    def test_out_of_range_values_name_the_argument(self) -> None:
        cases = [("i8", 300, "300 is out of range for int8 (-128..127)"),
                 ("i8", -129, "-129 is out of range for int8"),
                 ("u8", -1, "-1 is out of range for uint8 (0..255)"),
                 ("u16", 65536, "65536 is out of range for uint16"),
                 ("i32", 2**31, "2147483648 is out of range for int32"),
                 ("u32", 2**32, "4294967296 is out of range for uint32"),
                 ("i64", 2**63, "9223372036854775808 is out of range for int64"),
                 ("u64", 2**64, "18446744073709551616 is out of range for uint64"),
                 ("u64", -1, "-1 is out of range for uint64"),
                 ("f16", 70000.0, "70000.0 is out of range for float16"),
                 ("f32", 1e39, "1e+39 is out of range for float32"),
                 ("b", 2, "2 is not a bool")]
        for name, value, text in cases:
            v = self.base()
            v[name] = value
            with self.subTest(name=name, value=value):
                with self.assertRaisesRegex(ValueError, re.escape(f"static argument '{name}': {text}")):
                    echo(**v)
        v = self.base()
        v["i16"] = 2.5
        with self.assertRaisesRegex(TypeError, "static argument 'i16', 2.5 is not exactly a int16"):
            echo(**v)

    def test_vector_statics_of_16_bit_floats_and_uint64(self) -> None:
        f = kj.jax_kernel("tests::robust::echo_vectors", num_outputs=3, launch_dims=2, output_dims=2)
        h, bf, ul = f([1.5, -65504.0, 0.25], [3.0e38, -1.0, 0.5], [0, 2**64 - 1, 2**63])
        np.testing.assert_array_equal(np.asarray(h), np.array([[1.5, -65504.0, 0.25]] * 2, np.float16))
        np.testing.assert_array_equal(np.asarray(bf, np.float32),
                                      np.array([[3.0e38, -1.0, 0.5]] * 2, ml_dtypes.bfloat16).astype(np.float32))
        self.assertEqual([int(u) for u in np.asarray(ul)[1]], [0, 2**64 - 1, 2**63])
        with self.assertRaisesRegex(ValueError, "static argument 'ul': -1 is out of range for uint64"):
            f([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [0, -1, 0])


class ExtentTests(unittest.TestCase):
    def test_launch_dims_beyond_an_unguarded_input(self) -> None:
        saxpy = kj.jax_kernel("demo::saxpy", launch_dims=20, output_dims=20)
        x = jnp.ones(10, jnp.float32)
        with self.assertRaisesRegex(Exception, "array argument 'x' has extent 10 in dimension 0, but the launch "
                                               r"\(20,\) \(launch_dims\) needs at least 20"):
            jax.block_until_ready(saxpy(x, jnp.ones(20, jnp.float32), 1.0))

    def test_output_dims_smaller_than_the_launch(self) -> None:
        saxpy = kj.jax_kernel("demo::saxpy", output_dims=4)
        x = jnp.ones(10, jnp.float32)
        with self.assertRaisesRegex(Exception, "output 'out' has extent 4 in dimension 0, but the launch "
                                               r"\(10,\) needs at least 10"):
            jax.block_until_ready(saxpy(x, x, 1.0))

    def test_a_guarded_kernel_launches_past_its_input(self) -> None:
        f = kj.jax_kernel("tests::robust::guarded_double", launch_dims=8, output_dims=8)
        out = f(jnp.arange(1, 4, dtype=jnp.float32))
        np.testing.assert_array_equal(out, [2, 4, 6, 0, 0, 0, 0, 0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
