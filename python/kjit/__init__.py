"""kjit: differentiable kernels written in C++. The Python side is the JAX shim, ``kjit.jax``."""
