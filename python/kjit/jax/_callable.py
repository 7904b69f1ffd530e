"""jax_callable (a registered C++ function launching several kernels) and
register_ffi_callback (a registered C++ callback made an FFI target)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np

from . import _library
from ._compat import typed_like
from ._forward import TransformError
from ._options import GraphMode, ModulePreloadMode, option, preload
from ._signature import Layout, Signature, array_dims, callable_signature, check_array, make_layout, output_type, static_attribute

Dims = int | Sequence[int]

class _KeepBound:
    """jax_callable's default graph-cache bound: each callable keeps the bound it has in libkjit
    (the CallableOptions::graph_cache_max it was registered with, unless changed since)."""

    def __repr__(self) -> str:
        return "kjit.jax.KEEP_BOUND"


#: jax_callable's default graph_cache_max: keep the callable's bound (see _KeepBound).
KEEP_BOUND = _KeepBound()

#: What jax_callable(graph_cache_max=None) applies: KEEP_BOUND, or a bound set with
#: set_jax_callable_default_graph_cache_max (an int, or None for unbounded).
_default_graph_cache_max: int | None | _KeepBound = KEEP_BOUND


class CallableFunction:
    """A C++ callable (kjit::ffi::register_callable) as a JAX function."""

    def __init__(self, sig: Signature, layout: Layout, graph_mode: GraphMode, vmap_method: str | None,
                 output_dims: Any, preload_kernels: Sequence[str], preload_mode: ModulePreloadMode,
                 has_side_effect: bool) -> None:
        self.signature = sig
        self.layout = layout
        self.graph_mode = graph_mode
        self.vmap_method = vmap_method
        self.output_dims = output_dims
        self.preload_kernels = tuple(preload_kernels)
        self.preload_mode = preload_mode
        self.has_side_effect = has_side_effect
        self.target = f"kjit_callable:{sig.name}:{graph_mode.c_name}"
        for platform in _library.PLATFORMS:
            addr = _library.lib().kjit_ffi_callable_handler(sig.name.encode(), graph_mode.c_name.encode(),
                                                             platform.encode())
            _library.register_target(self.target, _library.check(addr), platform)

    @property
    def name(self) -> str:
        return self.signature.name

    def __call__(self, *args: Any, output_dims: Any = None, vmap_method: str | None = None) -> Any:
        lay = self.layout
        if len(args) != len(lay.inputs):
            names = ", ".join(p.name for p in lay.inputs)
            raise ValueError(f"callable '{self.name}': expected {len(lay.inputs)} inputs ({names}), got {len(args)}")
        for k in self.preload_kernels:
            preload(k, self.preload_mode)
        arrays, attrs = [], {}
        for p, v in zip(lay.inputs, args):
            if p.is_array:
                check_array(p, v)
                arrays.append(v)
            else:
                attrs[p.name] = static_attribute(p, v)
        if lay.in_out:
            attrs["kjit_in_out"] = np.array([p.index for p in lay.in_out], dtype=np.int64)
        output_dims = self.output_dims if output_dims is None else output_dims
        out_types = [jax.ShapeDtypeStruct(arrays[lay.array_inputs.index(p)].shape, p.dtype) for p in lay.in_out]
        if isinstance(output_dims, Mapping):
            for p in lay.outputs:
                if p.name not in output_dims:
                    raise ValueError(f"callable '{self.name}': missing output dimensions for argument '{p.name}'")
                out_types.append(output_type(p, output_dims[p.name]))
        else:
            if output_dims is None:
                if not arrays:
                    raise ValueError(f"callable '{self.name}': unable to determine output dimensions; pass output_dims")
                output_dims = array_dims(lay.array_inputs[0], arrays[0].shape)
            out_types += [output_type(p, output_dims) for p in lay.outputs]
        fn = jax.ffi.ffi_call(self.target, typed_like(out_types, arrays), vmap_method=self.vmap_method if vmap_method is None else vmap_method,
                              input_output_aliases=lay.input_output_aliases or None,
                              has_side_effect=self.has_side_effect)
        call = lambda *arrays: list(fn(*arrays, **attrs))  # noqa: E731
        # Differentiating it is kjit's error (a custom_jvp whose rule says so), not JAX's about an
        # FFI call; a call with a side effect stays bare (custom_jvp takes no effects on JAX 0.7).
        if not self.has_side_effect:
            call = _not_differentiable(self.name, call)
        results = call(*arrays)
        return results[0] if len(results) == 1 else results

    @property
    def graph_cache_size(self) -> int:
        """Graphs kjit cached for this callable (GraphMode.KJIT), over all devices."""
        return int(_library.check(_library.lib().kjit_ffi_graph_cache_size(self.name.encode())))

    @property
    def graph_cache_max(self) -> int | None:
        """Graphs kept per device in the KJIT* graph modes (None: unbounded), as libkjit has it now."""
        m = int(callable_signature(self.name).raw["graph_cache_max"])
        return None if m == 0 else m

    @graph_cache_max.setter
    def graph_cache_max(self, value: int | None) -> None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0):
            raise ValueError(f"callable '{self.name}': graph_cache_max must be a non-negative int or None "
                             f"(unbounded), got {value!r}")
        _library.check(_library.lib().kjit_ffi_set_graph_cache_max(self.name.encode(), 0 if value is None else int(value)))


def _not_differentiable(name: str, call: Any) -> Any:
    f = jax.custom_jvp(call)

    @f.defjvp
    def jvp(primals: Any, tangents: Any) -> Any:
        raise TransformError(
            f"kjit callable '{name}' cannot be differentiated: a jax_callable runs C++ code of which kjit has no "
            "derivative. Differentiate the kernels it launches instead (jax_kernel(..., enable_backward=True)), give "
            "it a derivative with jax.custom_vjp or jax.custom_jvp, or keep its inputs out of the differentiation "
            "(jax.lax.stop_gradient)")

    return f


def jax_callable(name: str, num_outputs: int = 1, graph_mode: GraphMode | None = None,
                 vmap_method: str | None = "sequential", output_dims: Any = None,
                 in_out_argnames: Sequence[str] = (), graph_cache_max: int | None = None,
                 module_preload_mode: ModulePreloadMode = ModulePreloadMode.CURRENT_DEVICE,
                 preload_kernels: Sequence[str] = (), has_side_effect: bool = False) -> CallableFunction:
    """A C++ callable registered with ``kjit::ffi::register_callable`` as a JAX function.

    Args:
        name: the callable's registered name.
        num_outputs: outputs (the last parameters), in/out arguments included.
        graph_mode: CUDA graph mode, a GraphMode, its value or its name (default: the one it
            was registered with; Warp's WARP, WARP_STAGED, WARP_STAGED_EX are aliases).
        vmap_method: default "sequential": the callable sees one batch item per call.
        output_dims: dims of the pure outputs (one shape, or by name); default: the array
            dims of the first input array.
        in_out_argnames: arrays that are inputs and outputs (aliased buffers).
        graph_cache_max: graphs kept per device in the KJIT* modes (0: unbounded). None (the
            default) keeps the bound the callable has in libkjit (the one it was registered
            with, CallableOptions::graph_cache_max, unless changed since), or applies the
            default set with set_jax_callable_default_graph_cache_max.
        module_preload_mode, preload_kernels: kernels whose modules to load when JAX traces a
            call, after those the callable was registered with (CallableOptions::preload_kernels,
            which Warp's counterpart is: it preloads the wrapped function's module).
        has_side_effect: keep the call even when its outputs are unused.
    """
    sig = callable_signature(name)
    lay = make_layout(sig, num_outputs, in_out_argnames, f"jax_callable('{name}')")
    what = f"jax_callable('{name}')"
    mode = (GraphMode[str(sig.raw.get("graph_mode", "xla")).upper()] if graph_mode is None
            else option(GraphMode, graph_mode, what, "graph_mode"))
    registered = [str(k) for k in sig.raw.get("preload_kernels", ())]
    preload_kernels = tuple(dict.fromkeys([*registered, *preload_kernels]))  # in order, once each
    f = CallableFunction(sig, lay, mode, vmap_method, output_dims, preload_kernels,
                         option(ModulePreloadMode, module_preload_mode, what, "module_preload_mode"), has_side_effect)
    cache_max = _default_graph_cache_max if graph_cache_max is None else graph_cache_max
    if cache_max is not KEEP_BOUND:
        f.graph_cache_max = cache_max
    return f


def get_jax_callable_default_graph_cache_max() -> int | None | _KeepBound:
    """What jax_callable(graph_cache_max=None) applies: KEEP_BOUND (the default: each
    callable keeps the bound it has), or the bound set with
    set_jax_callable_default_graph_cache_max (None: unbounded)."""
    return _default_graph_cache_max


def set_jax_callable_default_graph_cache_max(cache_max: int | None | _KeepBound) -> None:
    """Sets the bound jax_callable applies to callables created afterwards without an explicit
    graph_cache_max: an int (0 or None: unbounded), or KEEP_BOUND to keep each callable's
    bound again."""
    global _default_graph_cache_max
    if cache_max is not KEEP_BOUND and cache_max is not None and (
            isinstance(cache_max, bool) or not isinstance(cache_max, (int, np.integer)) or cache_max < 0):
        raise ValueError("set_jax_callable_default_graph_cache_max: expected a non-negative int, None (unbounded) "
                         f"or kjit.jax.KEEP_BOUND, got {cache_max!r}")
    _default_graph_cache_max = cache_max


def clear_jax_callable_graph_cache(callable: CallableFunction | str | None = None) -> None:
    """Releases the cached graphs of one callable, or of all when None."""
    name = "" if callable is None else (callable if isinstance(callable, str) else callable.name)
    _library.check(_library.lib().kjit_ffi_clear_graph_cache(name.encode()))


def register_ffi_callback(name: str) -> str:
    """Makes the C++ callback ``name`` (kjit::ffi::register_callback) an FFI target of the
    same name on cpu and CUDA; call it with ``jax.ffi.ffi_call(name, ...)``. Returns the name."""
    for platform in _library.PLATFORMS:
        addr = _library.lib().kjit_ffi_callback_handler(name.encode(), platform.encode())
        _library.register_target(name, _library.check(addr), platform)
    return name
