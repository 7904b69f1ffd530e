"""Shared set-up of the JAX tests: float64 on, the kernel libraries loaded once."""

from __future__ import annotations

import os

import jax

jax.config.update("jax_enable_x64", True)

import kjit.jax as kj  # noqa: E402

_loaded = False


def load_libraries() -> None:
    """Loads the demo kernels and the test library (paths from ctest's environment)."""
    global _loaded
    if _loaded:
        return
    kj.load(os.environ["KJIT_DEMO_LIBRARY"])
    kj.load(os.environ["KJIT_TEST_LIBRARY"])
    _loaded = True
