"""kjit.torch — kjit kernels as torch operators, launched on the tensors' own memory.

Pure Python over libkjit.so (ctypes), as kjit.jax is; kernel descriptions come from the
library, so no kernel needs Python code::

    import kjit.torch as kt
    kt.load("build/lib/libdemo_kernels.so")
    daxpy = kt.kernel("demo::daxpy")
    out = daxpy(x, y, 2.0)        # differentiable in x, y (and a, given as a tensor)

See docs/TORCH.md.
"""

from .._libkjit import KjitError
from ._kernel import KernelOp, kernel
from ._library import cpu_threads, kernels, load

__all__ = ["KernelOp", "KjitError", "cpu_threads", "kernel", "kernels", "load"]
