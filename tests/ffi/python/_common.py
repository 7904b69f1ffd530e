"""Shared set-up of the JAX tests: float64 on, the kernel libraries loaded once, shared references."""

from __future__ import annotations

import os

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
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


def decay_jnp(x, k, n):
    """tests::values::decay in jax.numpy."""
    y = x
    for _ in range(n):
        y = y * k + jnp.sin(y)
    return jnp.where(y > 0, y, y * k)


def iterate_ref(x, c, n):
    """demo::iterate in jax.numpy: n steps of x <- x c + sin(x)."""
    y = x
    for _ in range(n):
        y = y * c + jnp.sin(y)
    return y


def swirl_ref(p, q, k, n):
    """tests::values::swirl in jax.numpy."""
    qi = jnp.roll(q, -1, axis=0)
    w = p
    for _ in range(n):
        w = w * jnp.cos(k * jnp.sum(w * qi, axis=-1, keepdims=True)) + jnp.cross(w, qi) * k
    return w


def central(f, a, h):
    """Richardson-extrapolated central difference of scalar f at a."""
    d1 = (f(a + h) - f(a - h)) / (2 * h)
    d2 = (f(a + h / 2) - f(a - h / 2)) / h
    return (4 * d2 - d1) / 3
