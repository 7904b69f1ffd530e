"""kjit: differentiable kernels written in C++. The Python side: ``kjit.jax`` (JAX), ``kjit.torch``
(PyTorch) and ``kjit.arrays`` (launches on NumPy and CuPy arrays in place)."""

#: The package version, written only here (pyproject.toml reads it from this line).
__version__ = "0.2.0"
