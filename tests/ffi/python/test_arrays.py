"""kjit.arrays: kernels launched in place on NumPy arrays (and on any object with the array
interfaces), as wp.launch takes them: values against NumPy, every element kind, every scalar and
vector value dtype, in/out and pure-output arrays, 1-D and 2-D launches, launches from several
threads, and every refusal with its message (nothing launched, nothing written)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import unittest

import numpy as np

import kjit.arrays as ka

_expected = os.environ.get("KJIT_EXPECT_PACKAGE_DIR")
if _expected and os.path.dirname(os.path.abspath(ka.__file__)) != os.path.abspath(_expected):
    raise SystemExit(f"kjit.arrays was imported from {ka.__file__}, not from the installed {_expected}")

ka.load(os.environ["KJIT_DEMO_LIBRARY"])
ka.load(os.environ["KJIT_TEST_LIBRARY"])

KINDS = {"f": (), "v": (3,), "m": (3, 3), "q": (4,), "t": (7,)}


def data(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


class FakeCudaArray:
    """An object that says its memory is on a CUDA device (as CuPy's arrays do), pointing at host
    memory that no launch may touch on this machine."""

    def __init__(self, host: np.ndarray, device_id: int = 0) -> None:
        self.host = host
        self.device = type("Device", (), {"id": device_id})()
        self.__cuda_array_interface__ = {"shape": host.shape, "typestr": host.dtype.str, "strides": None,
                                         "data": (host.ctypes.data, False), "version": 3, "stream": None}


class Launches(unittest.TestCase):
    def test_saxpy_in_place_every_size(self) -> None:
        for n in (1, 2, 17, 1000, (1 << 20) + 3):
            for a in (1.0, np.float32(-2.5), 3):
                with self.subTest(n=n, a=a):
                    x, y, out = data(n, 1), data(n, 2), np.full(n, np.nan, np.float32)
                    x0, y0 = x.copy(), y.copy()
                    ka.launch("demo::saxpy", dim=n, inputs=[x, y, a], outputs=[out])
                    np.testing.assert_array_equal(out, np.float32(a) * x0 + y0)
                    np.testing.assert_array_equal(x, x0)  # read-only arguments untouched
                    np.testing.assert_array_equal(y, y0)

    def test_the_split_of_inputs_and_outputs_is_only_for_reading(self) -> None:
        x, y = data(64, 3, np.float64), data(64, 4, np.float64)
        a, b = np.zeros(64), np.zeros(64)
        ka.launch("demo::daxpy", 64, inputs=[x, y, 0.5, a])
        ka.launch("demo::daxpy", 64, inputs=[x], outputs=[y, 0.5, b])
        np.testing.assert_array_equal(a, 0.5 * x + y)
        np.testing.assert_array_equal(a, b)

    def test_every_element_kind(self) -> None:
        n = 33
        for kind, inner in KINDS.items():
            with self.subTest(kind=kind):
                x, y = data((n,) + inner, 5), data((n,) + inner, 6)
                out = np.zeros((n,) + inner, np.float32)
                ka.launch(f"tests::robust::axpy_{kind}", n, inputs=[x, y, 1.5, out])
                np.testing.assert_allclose(out, np.float32(1.5) * x + y, rtol=1e-6, atol=1e-6)

    def test_an_in_out_array_is_updated_where_it_lies(self) -> None:
        x, acc = data((50, 3), 7), data((50, 3), 8)
        want = acc + np.float32(2.0) * x
        view = acc  # the same memory: a launch writes no copy
        ka.launch("tests::robust::accumulate_v", 50, inputs=[x, 2.0, acc])
        np.testing.assert_allclose(view, want, rtol=1e-6)

    def test_vector_and_matrix_values_and_a_launch_without_input_arrays(self) -> None:
        v, out = data((20, 3), 9, np.float64), np.zeros((20, 3))
        d, m, s = [1.0, -2.0, 0.5], np.arange(9.0).reshape(3, 3) / 7, 1.25
        ka.launch("tests::values::affine", 20, inputs=[v, d, m, s, out])
        np.testing.assert_allclose(out, s * (v + d) @ m.T, rtol=1e-12)
        ramp = np.zeros(12, np.float32)
        ka.launch("tests::values::ramp", 12, inputs=[0.25], outputs=[ramp])
        np.testing.assert_array_equal(ramp, np.float32(0.25) * np.arange(12, dtype=np.float32))

    def test_every_scalar_value_dtype_at_its_limits(self) -> None:
        import ml_dtypes

        types = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                 np.float16, ml_dtypes.bfloat16, np.float32, np.float64]
        for pick in ("max", "min"):
            values = []
            for t in types:
                if t is np.bool_:
                    values.append(pick == "max")
                elif np.issubdtype(np.dtype(t), np.integer):
                    info = np.iinfo(t)
                    values.append(int(info.max if pick == "max" else info.min))
                else:
                    values.append(np.asarray(1.5 if pick == "max" else -0.25, dtype=t).item())
            outs = [np.zeros(1, t) for t in types]
            ka.launch("tests::robust::echo_scalars", 1, inputs=[*values, *outs])
            for t, v, o in zip(types, values, outs):
                with self.subTest(pick=pick, dtype=np.dtype(t).name):
                    self.assertEqual(o[0], np.asarray(v, dtype=t))

    def test_any_object_with_the_array_interface(self) -> None:
        class Wrapped:  # not an ndarray: the interface is all kjit.arrays reads
            def __init__(self, a: np.ndarray) -> None:
                self.a = a

            @property
            def __array_interface__(self) -> dict:
                return self.a.__array_interface__

        x, y = data(100, 11), data(100, 12)
        frozen = x.copy()
        frozen.flags.writeable = False  # read-only, and only read: taken
        out, wrapped_out = np.zeros(100, np.float32), Wrapped(np.zeros(100, np.float32))
        ka.launch("demo::saxpy", 100, inputs=[frozen, Wrapped(y), 3.0, out])
        ka.launch("demo::saxpy", 100, inputs=[Wrapped(x), y, 3.0, wrapped_out])
        np.testing.assert_array_equal(out, np.float32(3.0) * x + y)
        np.testing.assert_array_equal(wrapped_out.a, out)

    def test_a_two_dimensional_launch(self) -> None:
        x = data((6, 5), 10)
        out = np.zeros(30, np.float32)
        ka.launch("demo::saxpy", 30, inputs=[x.reshape(-1), x.reshape(-1), 2.0, out])
        np.testing.assert_array_equal(out.reshape(6, 5), np.float32(2.0) * x + x)

    def test_launches_from_several_threads_keep_their_own_values(self) -> None:
        n, errors = 4096, []

        def work(k: int) -> None:
            try:
                x = np.full(n, k, np.float32)
                for r in range(50):
                    out = np.zeros(n, np.float32)
                    ka.launch("demo::saxpy", n, inputs=[x, x, float(r), out])
                    if not np.array_equal(out, np.float32(r) * x + x):
                        errors.append((k, r))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


class Refusals(unittest.TestCase):
    """Each refusal names the kernel and the argument, and nothing is written."""

    def refused(self, error, pattern, *args, **kwargs) -> None:
        out = kwargs.pop("out")
        before = out.copy()
        with self.assertRaisesRegex(error, pattern):
            ka.launch(*args, **kwargs)
        np.testing.assert_array_equal(out, before)

    def test_wrong_arguments(self) -> None:
        x, out = np.ones(8, np.float32), np.full(8, 7.0, np.float32)
        k = r"kjit\.arrays\.launch\('demo::saxpy'\): "
        self.refused(TypeError, k + r"the kernel takes 4 arguments \(x, y, a, out\), got 3", "demo::saxpy", 8,
                     inputs=[x, x, 1.0], out=out)
        self.refused(TypeError, k + r"argument 'x' \(array1d<float32>\): expected elements of float32, got float64",
                     "demo::saxpy", 8, inputs=[np.ones(8), x, 1.0, out], out=out)
        self.refused(ValueError, k + r"argument 'y' \(array1d<float32>\): expected shape of 1 array dims, got \(8, 1\)",
                     "demo::saxpy", 8, inputs=[x, x.reshape(8, 1), 1.0, out], out=out)
        self.refused(TypeError, k + r"argument 'y' \(array1d<float32>\): a list is no array",
                     "demo::saxpy", 8, inputs=[x, [1.0] * 8, 1.0, out], out=out)
        self.refused(ValueError, k + r"argument 'x' \(array1d<float32>\): its memory is not row-major and contiguous "
                     r"\(strides \(8,\)\)", "demo::saxpy", 8, inputs=[np.ones(16, np.float32)[::2], x, 1.0, out],
                     out=out)
        frozen = np.zeros(8, np.float32)
        frozen.flags.writeable = False
        self.refused(ValueError, k + r"argument 'out' \(array1d<float32>\): the array is read-only, and the kernel "
                     "writes it", "demo::saxpy", 8, inputs=[x, x, 1.0, frozen], out=frozen)
        self.refused(ValueError, r"argument 'a' is not exactly|Invalid value for static argument 'a'",
                     "demo::saxpy", 8, inputs=[x, x, 1e39, out], out=out)
        self.refused(ValueError, k + r"argument 'y' is on cuda:0, the launch on cpu \(the first array's device\)",
                     "demo::saxpy", 8, inputs=[x, FakeCudaArray(x.copy()), 1.0, out], out=out)
        self.refused(ValueError, k + r"argument 'x' is on cpu, the launch on cuda:1 \(device=\)",
                     "demo::saxpy", 8, inputs=[x, x, 1.0, out], device="cuda:1", out=out)

    def test_values_of_the_wrong_shape_and_range(self) -> None:
        v, out = np.zeros((4, 3)), np.full((4, 3), 5.0)
        self.refused(ValueError, r"argument 'd' \(vec3d\): expected \(3,\) values, got shape \(2,\)",
                     "tests::values::affine", 4, inputs=[v, [1.0, 2.0], np.eye(3), 1.0, out], out=out)
        import ml_dtypes

        types = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                 np.float16, ml_dtypes.bfloat16, np.float32, np.float64]
        outs = [np.full(1, 1, t) for t in types]
        for place, bad, message in ((1, 128, r"'i8': 128 is out of range for int8"),
                                    (2, -1, r"'u8': -1 is out of range for uint8"),
                                    (8, 2**64, r"'u64': 18446744073709551616 is out of range for uint64"),
                                    (5, 2.5, r"'i32', 2\.5 is not exactly a int32"),
                                    (9, 1e6, r"'f16': 1000000\.0 is out of range for float16")):
            values = [True, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0]
            values[place] = bad
            with self.subTest(place=place):
                with self.assertRaisesRegex((TypeError, ValueError), "static argument " + message):
                    ka.launch("tests::robust::echo_scalars", 1, inputs=[*values, *outs])
                for o in outs:
                    self.assertEqual(o[0], 1)  # nothing written

    def test_kernel_errors_come_from_kjit(self) -> None:
        out = np.full(8, 3.0, np.float32)
        self.refused(ka.KjitError, "no kernel named 'demo::nope'|demo::nope", "demo::nope", 8, inputs=[], out=out)
        x = np.ones(4, np.float32)
        self.refused(ka.KjitError, r"array argument 'x' has extent 4 in dimension 0, but the launch \(8,\) "
                     r"\(launch_dims\) needs at least 8", "demo::saxpy", 8, inputs=[x, out, 1.0, out], out=out)

    def test_an_empty_array(self) -> None:
        out = np.zeros(0, np.float32)
        with self.assertRaisesRegex(ka.KjitError, r"array argument 'x' is empty \(shape \(0,\)\) but the launch has 1 threads"):
            ka.launch("demo::saxpy", 1, inputs=[np.zeros(0, np.float32), out, 1.0, out])

    def test_a_cuda_array_on_a_machine_without_a_driver(self) -> None:
        x = np.ones(8, np.float32)
        cuda = [FakeCudaArray(x.copy()) for _ in range(3)]
        try:
            ka.launch("demo::saxpy", 8, inputs=[cuda[0], cuda[1], 2.0, cuda[2]])
        except ka.KjitError as e:
            self.assertRegex(str(e), r"cuda:0 is not available: no CUDA driver found")
        else:
            self.skipTest("a CUDA driver is present: the fake array would be read there")  # pragma: no cover
        np.testing.assert_array_equal(cuda[2].host, x)  # host memory untouched by a failed CUDA launch

    def test_structs_are_refused_by_name(self) -> None:
        with self.assertRaisesRegex(TypeError, r"kjit\.arrays\.launch\('tests::effects::pair_sum'\): parameter "
                                               r"'pairs' .* structs are not supported from kjit\.arrays"):
            ka.launch("tests::effects::pair_sum", 1, inputs=[np.zeros(1), np.zeros(1, np.float32)])

    def test_nothing_loaded(self) -> None:
        code = ("import kjit.arrays as ka, numpy as np\n"
                "try:\n  ka.launch('demo::saxpy', 1, inputs=[])\n"
                "except ka.KjitError as e: print(e)\n")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        self.assertIn("kjit.arrays: no kernel library is loaded; call kjit.arrays.load('path/to/libkernels.so') "
                      "first", r.stdout)


class Docs(unittest.TestCase):
    def test_the_example_in_docs_arrays_md_runs_as_written(self) -> None:
        root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
        with open(os.path.join(root, "docs", "ARRAYS.md"), encoding="utf-8") as f:
            text = f.read()
        block = text.split("```python\n", 1)[1].split("```", 1)[0]
        r = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
