"""kjit.jax — kjit kernels as JAX functions through XLA FFI handlers in libkjit.so.

Pure Python: loads kjit's shared libraries with ctypes and registers its handlers with
``jax.ffi.register_ffi_target``. Kernel signatures come from the library, so no kernel
needs Python code::

    import kjit.jax as kj
    kj.load("build/lib/libdemo_kernels.so")
    saxpy = kj.jax_kernel("demo::saxpy", enable_backward=True)
    out = jax.jit(saxpy)(x, y, 2.0)
"""

from ._callable import (KEEP_BOUND, CallableFunction, clear_jax_callable_graph_cache,
                        get_jax_callable_default_graph_cache_max, jax_callable, register_ffi_callback,
                        set_jax_callable_default_graph_cache_max)
from ._forward import TransformError
from ._kernel import KernelFunction, jax_kernel
from ._library import KjitError, api_version, kernels, load, registered
from ._mesh import mesh
from ._options import GraphMode, ModulePreloadMode

__all__ = [
    "CallableFunction",
    "GraphMode",
    "KernelFunction",
    "KjitError",
    "ModulePreloadMode",
    "KEEP_BOUND",
    "TransformError",
    "api_version",
    "clear_jax_callable_graph_cache",
    "get_jax_callable_default_graph_cache_max",
    "jax_callable",
    "jax_kernel",
    "kernels",
    "load",
    "mesh",
    "register_ffi_callback",
    "registered",
    "set_jax_callable_default_graph_cache_max",
]
