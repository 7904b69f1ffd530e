"""Shared set-up of the JAX tests: float64 on, the kernel libraries loaded once."""

from __future__ import annotations

import os

import jax

jax.config.update("jax_enable_x64", True)

import kjit.jax as kj  # noqa: E402

# ctest points each venv's tests at the package pip installed for it: make sure that copy, not
# the source tree's, is the one under test.
_expected = os.environ.get("KJIT_EXPECT_PACKAGE_DIR")
if _expected and os.path.dirname(os.path.abspath(kj.__file__)) != os.path.join(os.path.abspath(_expected), "jax"):
    raise SystemExit(f"kjit.jax was imported from {kj.__file__}, not from the installed {_expected}")
print(f"kjit.jax from {os.path.dirname(kj.__file__)}, JAX {jax.__version__}", flush=True)

_loaded = False


def load_libraries() -> None:
    """Loads the demo kernels and the test library (paths from ctest's environment)."""
    global _loaded
    if _loaded:
        return
    kj.load(os.environ["KJIT_DEMO_LIBRARY"])
    kj.load(os.environ["KJIT_TEST_LIBRARY"])
    _loaded = True
