"""kjit kernels from JAX on the CPU platform: jit, grad against the same math in jax.numpy,
vmap, shard_map over 4 host devices, in/out arguments, output and launch dims, a C++
callable, a C++ callback, the options (has_side_effect, block_dim, module_preload_mode, graph
modes and graph cache bounds), struct parameters, and our error messages."""

from __future__ import annotations

import os
import re
import unittest
from unittest import mock

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _common import kj, load_libraries  # noqa: E402

load_libraries()


def springs_jnp(x: jax.Array, pairs: jax.Array, rest: jax.Array, k: float) -> jax.Array:
    """demo::springs in jax.numpy."""
    a, b = pairs[0::2], pairs[1::2]
    d = x[a] - x[b]
    length = jnp.linalg.norm(d, axis=1)
    force = d * (k * (length - rest) / length)[:, None]
    f = jnp.zeros_like(x)
    return f.at[a].add(-force).at[b].add(force)


def iterate_jnp(x: jax.Array, c: jax.Array, n: int) -> jax.Array:
    y = x
    for _ in range(n):
        y = y * c + jnp.sin(y)
    return y


def spring_data(n_points: int = 12, n_springs: int = 20, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.normal(size=(n_points, 3)), jnp.float32)
    a = np.arange(n_springs) % n_points
    b = (a + 1 + np.arange(n_springs) // n_points) % n_points
    pairs = jnp.asarray(np.stack([a, b], 1).reshape(-1), jnp.int32)
    rest = jnp.asarray(rng.uniform(0.5, 1.5, n_springs), jnp.float32)
    return x, pairs, rest



def check_output_and_launch_dims(tc: unittest.TestCase) -> None:
    """output_dims and launch_dims, for one output and by name (also run by the GPU tests)."""
    daxpy = kj.jax_kernel("demo::daxpy", launch_dims=6, output_dims=6)
    x = jnp.arange(10, dtype=jnp.float64)
    out = daxpy(x, x, 2.0)
    tc.assertEqual(out.shape, (6,))
    np.testing.assert_allclose(out, 3.0 * x[:6])
    damp = kj.jax_kernel("demo::damp")
    v = jnp.ones((5, 3), jnp.float32)
    out = damp(v, 0.5, 2, output_dims={"out": (5,)})
    tc.assertEqual(out.shape, (5, 3))
    np.testing.assert_allclose(out, 0.25 * v)


def check_dtype_mismatch_messages(tc: unittest.TestCase) -> None:
    """A dtype mismatch is refused by the shim and, past it, by the handler, with one message."""
    saxpy = kj.jax_kernel("demo::saxpy")
    with tc.assertRaisesRegex(TypeError, "Invalid data type for array argument 'x', expected float32, got int32"):
        saxpy(jnp.ones(4, jnp.int32), jnp.ones(4, jnp.float32), 1.0)
    call = jax.ffi.ffi_call("kjit_launch", jax.ShapeDtypeStruct((4,), jnp.float32))
    with tc.assertRaisesRegex(Exception, "kjit kernel 'demo::saxpy': Invalid data type for array argument "
                                         "'x', expected float32, got int32"):
        jax.block_until_ready(call(jnp.ones(4, jnp.int32), jnp.ones(4, jnp.float32), kjit_kernel="demo::saxpy",
                                   a=np.float32(1)))

class KernelTests(unittest.TestCase):
    def test_forward_under_jit(self) -> None:
        saxpy = kj.jax_kernel("demo::saxpy")
        x = jnp.linspace(0, 1, 1000, dtype=jnp.float32)
        y = jnp.cos(x)
        out = jax.jit(lambda x, y: saxpy(x, y, 3.0))(x, y)
        np.testing.assert_allclose(out, 3.0 * x + y, rtol=1e-6)

    def test_grad_saxpy_matches_jnp(self) -> None:
        saxpy = kj.jax_kernel("demo::saxpy", enable_backward=True)
        x = jnp.linspace(-1, 1, 257, dtype=jnp.float32)
        y = jnp.sin(x)
        w = jnp.arange(257, dtype=jnp.float32) / 257

        def loss(x, y):
            return jnp.sum(w * saxpy(x, y, 2.5))

        def loss_ref(x, y):
            return jnp.sum(w * (2.5 * x + y))

        gx, gy = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, y)
        rx, ry = jax.grad(loss_ref, argnums=(0, 1))(x, y)
        np.testing.assert_allclose(gx, rx, rtol=1e-6)
        np.testing.assert_allclose(gy, ry, rtol=1e-6)

    def test_grad_springs_with_atomics_matches_jnp(self) -> None:
        springs = kj.jax_kernel("demo::springs", enable_backward=True, launch_dims=20,
                                output_dims={"f": (12,)})
        x, pairs, rest = spring_data()
        w = jnp.asarray(np.random.default_rng(1).normal(size=(12, 3)), jnp.float32)
        f = springs(x, pairs, rest, 40.0)
        np.testing.assert_allclose(f, springs_jnp(x, pairs, rest, 40.0), rtol=1e-4, atol=1e-4)

        def loss(x, rest):
            return jnp.sum(w * springs(x, pairs, rest, 40.0))

        def loss_ref(x, rest):
            return jnp.sum(w * springs_jnp(x, pairs, rest, 40.0))

        g = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, rest)
        r = jax.grad(loss_ref, argnums=(0, 1))(x, rest)
        np.testing.assert_allclose(g[0], r[0], rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(g[1], r[1], rtol=1e-3, atol=1e-3)

    def test_grad_through_a_dynamic_loop_matches_jnp(self) -> None:
        iterate = kj.jax_kernel("demo::iterate", enable_backward=True)
        x = jnp.linspace(0.1, 1.0, 64, dtype=jnp.float64)
        c = jnp.linspace(0.5, 0.9, 64, dtype=jnp.float64)

        def loss(x, c):
            return jnp.sum(jnp.cos(iterate(x, c, 9)))

        def loss_ref(x, c):
            return jnp.sum(jnp.cos(iterate_jnp(x, c, 9)))

        np.testing.assert_allclose(iterate(x, c, 9), iterate_jnp(x, c, 9), rtol=1e-12)
        g = jax.grad(loss, argnums=(0, 1))(x, c)
        r = jax.grad(loss_ref, argnums=(0, 1))(x, c)
        np.testing.assert_allclose(g[0], r[0], rtol=1e-10)
        np.testing.assert_allclose(g[1], r[1], rtol=1e-10)

    def test_vmap_broadcast_all_and_grad_of_vmap(self) -> None:
        saxpy = kj.jax_kernel("demo::saxpy", enable_backward=True)
        xs = jnp.arange(4 * 100, dtype=jnp.float32).reshape(4, 100)
        y = jnp.ones(100, jnp.float32)
        out = jax.vmap(lambda x: saxpy(x, y, 2.0))(xs)
        np.testing.assert_allclose(out, 2.0 * xs + y)
        g = jax.grad(lambda xs: jnp.sum(jax.vmap(lambda x: saxpy(x, y, 2.0))(xs) ** 2))(xs)
        np.testing.assert_allclose(g, 2 * (2.0 * xs + y) * 2.0, rtol=1e-6)
        seq = kj.jax_kernel("demo::saxpy", vmap_method="sequential")
        np.testing.assert_allclose(jax.vmap(lambda x: seq(x, y, 2.0))(xs), out)

    def test_shard_map_over_four_host_devices(self) -> None:
        from jax.sharding import Mesh, PartitionSpec as P

        try:
            from jax import shard_map
        except ImportError:  # older jax
            from jax.experimental.shard_map import shard_map
        self.assertEqual(len(jax.devices()), 4)
        mesh = Mesh(np.array(jax.devices()), ("d",))
        saxpy = kj.jax_kernel("demo::saxpy", enable_backward=True)
        x = jnp.arange(4 * 2048, dtype=jnp.float32)
        y = jnp.full(4 * 2048, 0.5, jnp.float32)
        f = shard_map(lambda x, y: saxpy(x, y, 3.0), mesh=mesh, in_specs=(P("d"), P("d")), out_specs=P("d"))
        out = jax.jit(f)(x, y)
        np.testing.assert_allclose(out, 3.0 * x + y)
        g = jax.jit(jax.grad(lambda x: jnp.sum(f(x, y))))(x)
        np.testing.assert_allclose(g, np.full(x.shape, 3.0))

    def test_in_out_argument_accumulates_and_differentiates(self) -> None:
        springs = kj.jax_kernel("demo::springs", num_outputs=1, in_out_argnames=("f",), enable_backward=True,
                                launch_dims=20)
        x, pairs, rest = spring_data()
        f0 = jnp.ones((12, 3), jnp.float32)
        f = jax.jit(lambda x, f0: springs(x, pairs, rest, 10.0, f0))(x, f0)
        np.testing.assert_allclose(f, f0 + springs_jnp(x, pairs, rest, 10.0), rtol=1e-4, atol=1e-4)
        w = jnp.asarray(np.random.default_rng(3).normal(size=(12, 3)), jnp.float32)
        g = jax.grad(lambda x, f0: jnp.sum(w * springs(x, pairs, rest, 10.0, f0)), argnums=(0, 1))(x, f0)
        r = jax.grad(lambda x, f0: jnp.sum(w * (f0 + springs_jnp(x, pairs, rest, 10.0))), argnums=(0, 1))(x, f0)
        np.testing.assert_allclose(g[0], r[0], rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(g[1], r[1], rtol=1e-6)

    def test_output_dims_and_launch_dims(self) -> None:
        check_output_and_launch_dims(self)

    def test_static_arguments_are_typed_and_traced_ones_are_operands(self) -> None:
        saxpy = kj.jax_kernel("demo::saxpy")
        x = jnp.ones(4, jnp.float32)
        # A traced value is an operand (test_jax_traced.py has the rest).
        np.testing.assert_allclose(jax.jit(lambda x, a: saxpy(x, x, a))(x, 2.0), 3.0 * x)
        iterate = kj.jax_kernel("demo::iterate")
        with self.assertRaisesRegex(TypeError, "is not exactly a int32"):
            iterate(jnp.ones(4), jnp.ones(4), 2.5)

    def test_dtype_mismatch_raises_our_message(self) -> None:
        check_dtype_mismatch_messages(self)

    def test_a_call_without_operands_is_sized_by_launch_dims(self) -> None:
        # Only a static value and an output: the call has no operand to type its results like.
        ramp = kj.jax_kernel("tests::values::ramp")
        want = np.arange(5, dtype=np.float32) * np.float32(0.5)
        np.testing.assert_array_equal(ramp(0.5, launch_dims=5), want)
        np.testing.assert_array_equal(jax.jit(lambda: ramp(0.5, launch_dims=5) + 1.0)(), want + 1)
        with self.assertRaisesRegex(ValueError, re.escape(
                "kernel 'tests::values::ramp': cannot determine the launch dimensions (no input array); pass "
                "launch_dims")):
            ramp(0.5)

    def test_backward_rejects_what_has_no_gradient(self) -> None:
        with self.assertRaisesRegex(ValueError, "in/out argument 'out' is overwritten by the kernel"):
            kj.jax_kernel("demo::saxpy", num_outputs=1, in_out_argnames=("out",), enable_backward=True)
        with self.assertRaisesRegex(ValueError, "expected an output-only argument"):
            kj.jax_kernel("demo::saxpy", num_outputs=2, in_out_argnames=("out",))


class KernelOptionTests(unittest.TestCase):
    def test_has_side_effect_keeps_a_call_whose_output_is_unused(self) -> None:
        # tests::effects::mark also writes 2 x through a raw address (a NumPy buffer: the cpu is
        # the device), the one effect of a kernel visible outside its results. Its result is unused.
        x = jnp.arange(8, dtype=jnp.float32)
        for side_effect in (True, False):
            with self.subTest(has_side_effect=side_effect):
                buf = np.zeros(8, np.float32)
                mark = kj.jax_kernel("tests::effects::mark", has_side_effect=side_effect)

                def f(x):
                    mark(x, buf.ctypes.data, 8)
                    return x + 1

                lowered = jax.jit(f).lower(x)
                compiled = lowered.compile().as_text()
                np.testing.assert_allclose(jax.jit(f)(x), x + 1)
                if side_effect:
                    self.assertRegex(lowered.as_text(), r"custom_call @kjit_launch\(.*has_side_effect = true")
                    self.assertIn("kjit_launch", compiled)
                    np.testing.assert_allclose(buf, 2 * np.arange(8))  # the kernel ran
                else:
                    self.assertNotIn("has_side_effect = true", lowered.as_text())
                    self.assertNotIn("kjit_launch", compiled)  # XLA removed the unused call
                    np.testing.assert_array_equal(buf, 0)  # so the kernel never ran

    def test_block_dim_is_passed_to_the_handler_which_checks_it(self) -> None:
        saxpy = kj.jax_kernel("demo::saxpy", block_dim=64)
        x = jnp.ones(300, jnp.float32)
        self.assertRegex(jax.jit(lambda x: saxpy(x, x, 2.0)).lower(x).as_text(), r"kjit_block_dim = 64 : i64")
        np.testing.assert_allclose(saxpy(x, x, 2.0), np.full(300, 3.0))  # the cpu has no blocks
        self.assertNotIn("kjit_block_dim", jax.jit(lambda x: kj.jax_kernel("demo::saxpy")(x, x, 2.0)).lower(x).as_text())
        for bad in (0, 2048, 1.5, True):
            with self.subTest(block_dim=bad):
                with self.assertRaisesRegex(ValueError, re.escape(f"jax_kernel('demo::saxpy'): block_dim must be an "
                                                                  f"int in 1..1024, got {bad!r}")):
                    kj.jax_kernel("demo::saxpy", block_dim=bad)
        # Past the shim, the handler's own check, as an XLA error with our message.
        call = jax.ffi.ffi_call("kjit_launch", jax.ShapeDtypeStruct((4,), jnp.float32))
        x4 = jnp.ones(4, jnp.float32)
        for bad in (0, 2048):
            with self.assertRaisesRegex(Exception, re.escape(f"kjit kernel 'demo::saxpy': block_dim must be 1..1024, "
                                                             f"got {bad}")):
                jax.block_until_ready(call(x4, x4, kjit_kernel="demo::saxpy", a=np.float32(1),
                                           kjit_block_dim=np.int64(bad)))

    def test_module_preload_modes(self) -> None:
        import kjit.jax._library as library

        real = library.lib()
        preloads: list[tuple[bytes, bytes]] = []

        class Spy:  # libkjit, recording kjit_ffi_preload
            def __getattr__(self, name: str):
                return getattr(real, name)

            def kjit_ffi_preload(self, name: bytes, device: bytes) -> int:
                preloads.append((name, device))
                return real.kjit_ffi_preload(name, device)

        x = jnp.arange(5, dtype=jnp.float64)
        expected = {kj.ModulePreloadMode.NONE: [], kj.ModulePreloadMode.CURRENT_DEVICE: [(b"demo::daxpy", b"cpu")],
                    kj.ModulePreloadMode.ALL_DEVICES: [(b"demo::daxpy", b"cpu")]}  # the cpu is every device here
        for mode, by in ((kj.ModulePreloadMode.NONE, "member"), (kj.ModulePreloadMode.ALL_DEVICES, "member"),
                         (kj.ModulePreloadMode.CURRENT_DEVICE, "member"), (kj.ModulePreloadMode.ALL_DEVICES, "name"),
                         (kj.ModulePreloadMode.NONE, "int")):
            with self.subTest(mode=mode.name, by=by):
                arg = {"member": mode, "name": mode.name.lower(), "int": int(mode)}[by]
                daxpy = kj.jax_kernel("demo::daxpy", module_preload_mode=arg)
                self.assertIs(daxpy.preload_mode, mode)
                preloads.clear()
                with mock.patch.object(library, "lib", lambda: Spy()):
                    out = jax.jit(lambda x: daxpy(x, x, 0.5))(x)
                np.testing.assert_allclose(out, 1.5 * x)
                self.assertEqual(preloads, expected[mode])
        # A callable preloads the kernels it was registered with (CallableOptions::preload_kernels),
        # then those jax_callable names, each once, when JAX traces a call; NONE preloads nothing.
        y = jnp.ones(5, jnp.float32)
        for extra, mode, kernels, want in (
                ((), "current_device", ("demo::saxpy",), [b"demo::saxpy"]),
                (("demo::daxpy", "demo::saxpy"), "current_device", ("demo::saxpy", "demo::daxpy"),
                 [b"demo::saxpy", b"demo::daxpy"]),
                (("demo::daxpy",), "none", ("demo::saxpy", "demo::daxpy"), [])):
            with self.subTest(callable_preload=extra, mode=mode):
                f = kj.jax_callable("tests::saxpy_twice_bounded", preload_kernels=extra, module_preload_mode=mode)
                self.assertEqual(f.preload_kernels, kernels)
                preloads.clear()
                with mock.patch.object(library, "lib", lambda: Spy()):
                    out = jax.jit(lambda y: f(y, y, 2.0))(y)
                np.testing.assert_allclose(out, 3.0 * y)
                self.assertEqual(preloads, [(k, b"cpu") for k in want])
        self.assertEqual(kj.jax_callable("tests::saxpy_twice").preload_kernels, ())
        for bad in (7, "everywhere", None, 1.0):
            with self.subTest(bad=bad):
                with self.assertRaisesRegex(ValueError, re.escape(
                        f"jax_kernel('demo::daxpy'): invalid module_preload_mode {bad!r}; expected a "
                        "kjit.jax.ModulePreloadMode (NONE, CURRENT_DEVICE, ALL_DEVICES)")):
                    kj.jax_kernel("demo::daxpy", module_preload_mode=bad)
                with self.assertRaisesRegex(ValueError, re.escape(
                        f"jax_callable('tests::saxpy_twice'): invalid module_preload_mode {bad!r}")):
                    kj.jax_callable("tests::saxpy_twice", module_preload_mode=bad)

    def test_struct_parameters_are_rejected_naming_them(self) -> None:
        sig = next(k for k in kj.kernels() if k["name"] == "tests::effects::pair_sum")
        layout = sig["params"][0]["struct"]
        self.assertEqual(layout["name"], "tests::effects::Pair")
        self.assertEqual((layout["size"], layout["align"]), (8, 4))
        self.assertEqual([(f["name"], f["type"], f["offset"]) for f in layout["fields"]],
                         [("a", "float32", 0), ("b", "int32", 4)])
        self.assertIsNone(sig["params"][0]["dtype"])
        with self.assertRaisesRegex(TypeError, re.escape(
                "jax_kernel('tests::effects::pair_sum'): parameter 'pairs' (array1d<tests::effects::Pair>) holds "
                "struct tests::effects::Pair: structs are not supported from JAX")):
            kj.jax_kernel("tests::effects::pair_sum")
        # Past the shim, the handler says the same.
        call = jax.ffi.ffi_call("kjit_launch", jax.ShapeDtypeStruct((4,), jnp.float32))
        with self.assertRaisesRegex(Exception, re.escape(
                "kjit kernel 'tests::effects::pair_sum': array argument 'pairs' (array1d<tests::effects::Pair>) holds "
                "struct tests::effects::Pair, which the XLA FFI cannot pass: structs are not supported from JAX")):
            jax.block_until_ready(call(jnp.zeros((4, 8), jnp.uint8), kjit_kernel="tests::effects::pair_sum"))


class CallableTests(unittest.TestCase):
    def test_callable_launches_two_kernels(self) -> None:
        f = kj.jax_callable("tests::saxpy_twice", graph_mode=kj.GraphMode.XLA)
        x = jnp.arange(16, dtype=jnp.float32)
        y = jnp.ones(16, jnp.float32)
        out = jax.jit(lambda x, y: f(x, y, 2.0))(x, y)
        np.testing.assert_allclose(out, 2.0 * (2.0 * x + y) + y)
        np.testing.assert_allclose(jax.vmap(lambda x: f(x, y, 2.0))(jnp.stack([x, x])), jnp.stack([out, out]))
        self.assertEqual(f.graph_cache_size, 0)  # graphs are CUDA only
        kj.clear_jax_callable_graph_cache(f)

    def test_callable_and_kernel_results_vary_like_their_operands_under_shard_map(self) -> None:
        # JAX 0.7 types an ffi_call's results itself, JAX 0.10 takes the type kjit.jax gives.
        from jax.sharding import Mesh, PartitionSpec as P

        try:
            from jax import shard_map
        except ImportError:  # older jax
            from jax.experimental.shard_map import shard_map
        mesh = Mesh(np.array(jax.devices()), ("d",))
        f = kj.jax_callable("tests::saxpy_twice", graph_mode=kj.GraphMode.XLA)
        saxpy = kj.jax_kernel("demo::saxpy")
        types = []

        def body(x, y):
            out = f(x, y, 2.0)
            types.extend(str(jax.typeof(v)) for v in (x, out, saxpy(out, y, 1.0)))
            return out

        x = jnp.arange(64, dtype=jnp.float32)
        y = jnp.ones(64, jnp.float32)
        out = jax.jit(shard_map(body, mesh=mesh, in_specs=(P("d"), P("d")), out_specs=P("d")))(x, y)
        np.testing.assert_allclose(out, 2.0 * (2.0 * x + y) + y)
        self.assertEqual(types, [types[0]] * 3)
        self.assertRegex(types[0], r"^float32\[16\]\{(V:)?d\}$")  # JAX 0.10 writes {V:d}, 0.7 {d}

    def test_graph_modes_run_eagerly_on_cpu(self) -> None:
        # The cpu has no CUDA graphs: every mode runs the function on every call, as NONE does.
        x = jnp.arange(16, dtype=jnp.float32)
        y = jnp.ones(16, jnp.float32)
        for mode in kj.GraphMode:
            with self.subTest(mode=mode.name):
                f = kj.jax_callable("tests::saxpy_twice", graph_mode=mode)
                for a in (2.0, 3.0, 2.0):
                    out = jax.jit(lambda x, y, a: f(x, y, a), static_argnums=2)(x + a, y, a)
                    np.testing.assert_allclose(out, a * (a * (x + a) + y) + y)
                self.assertEqual(f.graph_cache_size, 0)

    def test_warp_graph_mode_names_are_aliases(self) -> None:
        G = kj.GraphMode
        self.assertIs(G.WARP, G.KJIT)
        self.assertIs(G.WARP_STAGED, G.KJIT_STAGED)
        self.assertIs(G.WARP_STAGED_EX, G.KJIT_STAGED_EX)
        self.assertIs(G.JAX, G.XLA)
        x = jnp.arange(16, dtype=jnp.float32)
        y = jnp.ones(16, jnp.float32)
        for given, mode in ((G.WARP, G.KJIT), (G.WARP_STAGED, G.KJIT_STAGED), ("warp_staged_ex", G.KJIT_STAGED_EX),
                            ("WARP", G.KJIT), (3, G.KJIT_STAGED)):
            with self.subTest(given=given):
                f = kj.jax_callable("tests::saxpy_twice", graph_mode=given)
                self.assertIs(f.graph_mode, mode)
                self.assertEqual(f.target, f"kjit_callable:tests::saxpy_twice:{mode.c_name}")
                np.testing.assert_allclose(jax.jit(lambda x, y: f(x, y, 2.0))(x, y), 2.0 * (2.0 * x + y) + y)
        with self.assertRaisesRegex(ValueError, re.escape(
                "jax_callable('tests::saxpy_twice'): invalid graph_mode 'warp_fast'; expected a kjit.jax.GraphMode "
                "(NONE, XLA, JAX, KJIT, KJIT_STAGED, KJIT_STAGED_EX, WARP, WARP_STAGED, WARP_STAGED_EX)")):
            kj.jax_callable("tests::saxpy_twice", graph_mode="warp_fast")

    def test_graph_cache_max_keeps_the_registered_bound_and_reads_back(self) -> None:
        name = "tests::saxpy_twice_bounded"  # registered in C++ with graph_cache_max = 5
        self.assertIs(kj.get_jax_callable_default_graph_cache_max(), kj.KEEP_BOUND)
        f = kj.jax_callable(name, graph_mode=kj.GraphMode.KJIT)
        self.assertEqual(f.graph_cache_max, 5)  # not overridden by a Python default
        f.graph_cache_max = 7
        self.assertEqual(f.graph_cache_max, 7)  # what was set, not the bound at creation
        f.graph_cache_max = None
        self.assertIsNone(f.graph_cache_max)
        f.graph_cache_max = 0
        self.assertIsNone(f.graph_cache_max)
        g = kj.jax_callable(name, graph_cache_max=3)
        self.assertEqual(g.graph_cache_max, 3)
        self.assertEqual(f.graph_cache_max, 3)  # one bound per callable, whichever object set it
        h = kj.jax_callable(name)  # keeps the bound the callable has now
        self.assertEqual(h.graph_cache_max, 3)
        for bad in (-1, 2.5, "8"):
            with self.assertRaisesRegex(ValueError, re.escape(
                    f"callable '{name}': graph_cache_max must be a non-negative int or None (unbounded), "
                    f"got {bad!r}")):
                f.graph_cache_max = bad
        try:
            kj.set_jax_callable_default_graph_cache_max(9)
            self.assertEqual(kj.get_jax_callable_default_graph_cache_max(), 9)
            self.assertEqual(kj.jax_callable(name).graph_cache_max, 9)
            self.assertEqual(kj.jax_callable(name, graph_cache_max=4).graph_cache_max, 4)
            kj.set_jax_callable_default_graph_cache_max(None)
            self.assertIsNone(kj.jax_callable(name).graph_cache_max)
            with self.assertRaisesRegex(ValueError, "set_jax_callable_default_graph_cache_max: expected a "
                                                    "non-negative int"):
                kj.set_jax_callable_default_graph_cache_max(-2)
        finally:
            kj.set_jax_callable_default_graph_cache_max(kj.KEEP_BOUND)
        f.graph_cache_max = 5
        self.assertEqual(kj.jax_callable(name).graph_cache_max, 5)
        self.assertEqual(kj.jax_callable("tests::saxpy_twice").graph_cache_max, 32)  # CallableOptions' default

    def test_callback(self) -> None:
        name = kj.register_ffi_callback("tests::scale")
        x = jnp.arange(6, dtype=jnp.float32)
        call = jax.ffi.ffi_call(name, jax.ShapeDtypeStruct(x.shape, x.dtype))
        out = jax.jit(lambda x: call(x, scale=np.float32(4.0)))(x)
        np.testing.assert_allclose(out, 4.0 * x)
        with self.assertRaisesRegex(Exception, "tests::scale takes one float32 array"):
            jax.block_until_ready(call(jnp.arange(6, dtype=jnp.int32).astype(jnp.float64), scale=np.float32(1)))


if __name__ == "__main__":
    unittest.main(verbosity=2)
