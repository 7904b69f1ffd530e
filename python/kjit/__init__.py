"""kjit: differentiable kernels written in C++. The Python side is the JAX shim, ``kjit.jax``."""

#: The package version, written only here (pyproject.toml reads it from this line).
__version__ = "0.2.0"
