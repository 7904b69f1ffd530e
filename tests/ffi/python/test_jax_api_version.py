"""The XLA FFI API version kjit's handlers declare, settled when kjit.jax.load registers them:
the running jaxlib's own (read from the c_api.h it ships) when kjit mirrors it, so jaxlib 0.7.2
gets exactly 0.1 and jaxlib 0.12 gets 0.5; XLA then accepts every target (a call runs), and a
jaxlib whose API kjit cannot speak gets kjit's own error, not XLA's at backend start-up."""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import unittest

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402

from _common import kj, load_libraries  # noqa: E402


def header_version() -> tuple[int, int]:
    """XLA_FFI_API_MAJOR/MINOR of the jaxlib under test, read independently of kjit.jax."""
    (path,) = glob.glob(os.path.join(os.path.dirname(jaxlib.__file__), "include/xla/ffi/api/c_api.h"))
    text = open(path, encoding="utf-8").read()
    return (int(re.search(r"XLA_FFI_API_MAJOR (\d+)", text).group(1)),
            int(re.search(r"XLA_FFI_API_MINOR (\d+)", text).group(1)))


class ApiVersionTest(unittest.TestCase):
    def test_declares_the_running_jaxlibs_version(self) -> None:
        self.assertIsNone(kj.api_version())  # nothing negotiated before load
        load_libraries()
        major, minor = header_version()
        self.assertEqual(kj.api_version(), (0, min(minor, 5)))
        jaxlib_version = tuple(int(p) for p in jaxlib.__version__.split(".")[:2])
        if jaxlib_version == (0, 7):
            self.assertEqual(kj.api_version(), (0, 1))
        if jaxlib_version >= (0, 12):
            self.assertEqual(kj.api_version(), (0, 5))
        # XLA accepted the registration: a jitted call and its gradient run.
        saxpy = kj.jax_kernel("demo::saxpy", enable_backward=True)
        x = jnp.arange(16, dtype=jnp.float32)
        out = jax.jit(lambda x: saxpy(x, x, 3.0))(x)
        self.assertTrue(bool(jnp.all(out == 4 * x)))
        g = jax.grad(lambda x: saxpy(x, x, 3.0).sum())(x)
        self.assertTrue(bool(jnp.all(g == 4)))

    def test_a_jaxlib_kjit_cannot_speak_is_refused_by_kjit(self) -> None:
        # A fresh process whose jaxlib claims API 1.0: kjit's error at load, naming the versions.
        code = (
            "import os, kjit.jax as kj\n"
            "from kjit.jax import _library\n"
            "_library._xla_ffi_api_version = lambda: (1, 0)\n"
            "try:\n"
            "    kj.load(os.environ['KJIT_DEMO_LIBRARY'])\n"
            "except kj.KjitError as e:\n"
            "    print('REFUSED', e)\n")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"REFUSED kjit.jax: jaxlib {jaxlib.__version__} speaks XLA FFI API 1.0; kjit's handlers can "
                      "declare 0.1 to 0.5. Use a kjit built for this jaxlib", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
