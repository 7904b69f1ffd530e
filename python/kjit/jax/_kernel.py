"""jax_kernel: a kjit kernel as a JAX function through the kjit_launch FFI target, with
optional differentiation: forward and reverse mode through the tangent kernel and the
kjit_adjoint target (jax.custom_jvp, _forward.py), or reverse mode only (jax.custom_vjp) for
kernels forward mode does not take.

A call's operands are its input arrays, then its traced values (value parameters given JAX
values, which travel as buffers: ``kjit_traced`` names them); static values are attributes.
``_Operands`` says which operands are differentiable and turns one result per differentiable
operand back into one per operand: the adjoint uses it, and a tangent target can too."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import _forward, _library
from ._compat import typed_as, typed_like, vary_together
from ._options import ModulePreloadMode, option, preload
from ._signature import (Layout, Param, Signature, array_dims, check_array, is_traced, kernel_signature,
                         make_layout, output_type, static_attribute, traced_value)

Dims = int | Sequence[int]


class KernelFunction:
    """A kjit kernel callable from JAX: ``f(*inputs)`` returns the outputs (one array when
    ``num_outputs == 1``, else a list) and works under jit, vmap, shard_map and, with
    ``enable_backward``, grad, jvp and hessian."""

    def __init__(self, sig: Signature, layout: Layout, vmap_method: str | None, launch_dims: Dims | None,
                 output_dims: Dims | Mapping[str, Dims] | None, preload_mode: ModulePreloadMode,
                 enable_backward: bool, has_side_effect: bool, block_dim: int | None) -> None:
        self.signature = sig
        self.layout = layout
        self.vmap_method = vmap_method
        self.launch_dims = launch_dims
        self.output_dims = output_dims
        self.preload_mode = preload_mode
        self.enable_backward = enable_backward
        self.has_side_effect = has_side_effect
        self.block_dim = block_dim
        self._vjp_cache: dict[Any, Any] = {}
        #: Why jax.jvp cannot differentiate this kernel (it is then a custom_vjp), or "".
        self.forward_mode_error = ""
        self._lock = threading.Lock()
        if enable_backward:
            _check_differentiable(sig, layout)

    @property
    def name(self) -> str:
        return self.signature.name

    @property
    def num_inputs(self) -> int:
        return len(self.layout.inputs)

    def __call__(self, *args: Any, output_dims: Dims | Mapping[str, Dims] | None = None,
                 launch_dims: Dims | None = None, vmap_method: str | None = None) -> Any:
        if len(args) != self.num_inputs:
            names = ", ".join(p.name for p in self.layout.inputs)
            raise ValueError(f"kernel '{self.name}': expected {self.num_inputs} inputs ({names}), got {len(args)}")
        launch_dims = self.launch_dims if launch_dims is None else launch_dims
        output_dims = self.output_dims if output_dims is None else output_dims
        vmap_method = self.vmap_method if vmap_method is None else vmap_method
        preload(self.name, self.preload_mode)
        call = _Call(self, args, launch_dims, output_dims, vmap_method)
        operands = vary_together(call.operands)
        if not self.enable_backward:
            return call.finish(call.forward(operands))
        return call.finish(self._differentiable(call)(*operands))

    def _differentiable(self, call: "_Call") -> Any:
        """The differentiable function for this call's static configuration (cached): a
        custom_jvp over the tangent kernel (forward and reverse mode, second order), or, for
        kernels forward mode cannot take (in/out arrays, a refused tangent), the custom_vjp."""
        key = (call.static_key, call.launch_key, call.out_key, call.vmap_method)
        with self._lock:
            fn = self._vjp_cache.get(key)
            if fn is None:
                tsig, self.forward_mode_error = self._tangent_signature()
                fn = _forward.make_jvp(self, call, tsig) if tsig is not None else _make_vjp(self, call)
                self._vjp_cache[key] = fn
        return fn

    def _tangent_signature(self) -> tuple[Any, str]:
        """The tangent kernel's signature, or None and why this kernel has no forward mode."""
        if self.layout.in_out:
            return None, (f"kernel '{self.name}' has in/out arguments "
                          f"({', '.join(p.name for p in self.layout.in_out)}), which forward mode from JAX does not "
                          "take: it is differentiated in reverse mode only (jax.custom_vjp)")
        return _forward.tangent_signature(self.name)


class _Call:
    """One call's decoded arguments, attributes and output types."""

    def __init__(self, k: KernelFunction, args: Sequence[Any], launch_dims: Dims | None,
                 output_dims: Any, vmap_method: str | None) -> None:
        lay = k.layout
        self.k = k
        self.vmap_method = vmap_method
        # expand_dims gives an unbatched operand a size-1 batch dim, and XLA cannot alias a
        # (1, n) in/out operand to its (b, n) result: kernels with in/out arrays broadcast
        # their unbatched operands instead (broadcast_all), which the handler launches alike.
        self.forward_vmap_method = "broadcast_all" if vmap_method == "expand_dims" and lay.in_out else vmap_method
        self.arrays: list[Any] = []
        self.traced: list[Any] = []  # JAX values of value parameters: buffer operands
        self.traced_params: list[Param] = []
        self.attrs: dict[str, Any] = {"kjit_kernel": k.name}
        statics = []
        for p, v in zip(lay.inputs, args):
            if p.is_array:
                check_array(p, v)
                self.arrays.append(v)
            elif is_traced(v):
                self.traced.append(traced_value(p, v))
                self.traced_params.append(p)
            else:
                a = static_attribute(p, v)
                self.attrs[p.name] = a
                statics.append((p.name, a.tobytes()))
        # Which values are traced is part of the call's structure; their values are not.
        self.static_key = (tuple(statics), tuple(p.index for p in self.traced_params))
        if self.traced_params:
            self.attrs["kjit_traced"] = np.array([p.index for p in self.traced_params], dtype=np.int64)
        if lay.in_out:
            self.attrs["kjit_in_out"] = np.array([p.index for p in lay.in_out], dtype=np.int64)
        if k.block_dim is not None:
            self.attrs["kjit_block_dim"] = np.int64(k.block_dim)
        # Launch dims: explicit, else the handler derives them from the first input array.
        first = next((i for i, p in enumerate(lay.array_inputs)), None)
        if launch_dims is not None:
            dims = (int(launch_dims),) if isinstance(launch_dims, (int, np.integer)) else tuple(int(d) for d in launch_dims)
            self.attrs["kjit_launch_dims"] = np.array(dims, dtype=np.int64)
        elif first is not None:
            dims = array_dims(lay.array_inputs[first], self.arrays[first].shape)
        else:
            raise ValueError(f"kernel '{k.name}': cannot determine the launch dimensions (no input array); pass "
                             "launch_dims")
        self.launch_key = dims if launch_dims is not None else None
        # Output types: in/out arrays keep their input's type; pure outputs from output_dims.
        self.out_types = [jax.ShapeDtypeStruct(self.arrays[lay.array_inputs.index(p)].shape, p.dtype)
                          for p in lay.in_out]
        if isinstance(output_dims, Mapping):
            for p in lay.outputs:
                if p.name not in output_dims:
                    raise ValueError(f"kernel '{k.name}': missing output dimensions for argument '{p.name}'")
                self.out_types.append(output_type(p, output_dims[p.name]))
            self.out_key = tuple(sorted((n, str(v)) for n, v in output_dims.items()))
        else:
            od = dims if output_dims is None else output_dims
            self.out_types += [output_type(p, od) for p in lay.outputs]
            self.out_key = str(od)

    @property
    def operands(self) -> list[Any]:
        """The forward call's operands: the input arrays, then the traced values."""
        return [*self.arrays, *self.traced]

    def forward(self, operands: Sequence[Any]) -> list[Any]:
        """The forward FFI call; returns every result (in/out first)."""
        lay = self.k.layout
        # Arrays come first, so the aliases' operand indices are the array inputs' indices.
        fn = jax.ffi.ffi_call(_library.LAUNCH_TARGET, typed_like(self.out_types, operands),
                              vmap_method=self.forward_vmap_method,
                              input_output_aliases=lay.input_output_aliases or None,
                              has_side_effect=self.k.has_side_effect)
        return list(fn(*operands, **self.attrs))

    def finish(self, results: Sequence[Any]) -> Any:
        results = list(results)
        return results[0] if len(results) == 1 else results


def _check_differentiable(sig: Signature, lay: Layout) -> None:
    """Rejects, with the reason, kernels whose gradient the adjoint handler cannot give."""
    what = f"jax_kernel('{sig.name}', enable_backward=True)"
    if not sig.has_adjoint:
        raise ValueError(f"{what}: {sig.adjoint_error}")
    for p in lay.in_out:
        if p.stores or p.other_atomics:
            raise ValueError(f"{what}: in/out argument '{p.name}' is overwritten by the kernel (a store or a "
                             "non-additive atomic), so its in-place gradient is undefined; only arrays the kernel "
                             "accumulates into (atomic add/sub) can be in/out with enable_backward. Pass it as a "
                             "separate input and output instead")
    for p in lay.outputs:
        if p.loads and p.differentiable:
            raise ValueError(f"{what}: the kernel reads its output '{p.name}', so the adjoint would write into the "
                             f"output's cotangent, which XLA owns read-only; pass '{p.name}' through in_out_argnames")


class _Operands:
    """The operands of one call structure (input arrays, then traced values) as derivatives
    see them: which are differentiable, and per-operand results from per-differentiable ones
    (the rest get float0 zeros, which JAX expects for integers)."""

    def __init__(self, lay: Layout, traced: Sequence[Param]) -> None:
        self.params: tuple[Param, ...] = (*lay.array_inputs, *traced)
        self.n_arrays = len(lay.array_inputs)
        self.differentiable = [i for i, p in enumerate(self.params) if p.differentiable]

    def split(self, operands: Sequence[Any]) -> tuple[Sequence[Any], Sequence[Any]]:
        """(arrays, traced values)."""
        return operands[: self.n_arrays], operands[self.n_arrays:]

    def types(self, operands: Sequence[Any]) -> list[jax.ShapeDtypeStruct]:
        """One result type per differentiable operand: its shape and its parameter's dtype."""
        prim = [operands[i] for i in self.differentiable]
        return typed_as([jax.ShapeDtypeStruct(a.shape, self.params[i].dtype) for i, a in zip(self.differentiable, prim)],
                        prim)

    def per_operand(self, operands: Sequence[Any], results: Sequence[Any]) -> tuple[Any, ...]:
        out, it = [], iter(results)
        for i, a in enumerate(operands):
            out.append(next(it) if i in self.differentiable else np.zeros(np.shape(a), dtype=jax.dtypes.float0))
        return tuple(out)


def _make_vjp(k: KernelFunction, proto: _Call) -> Any:
    """A jax.custom_vjp over the forward and adjoint handlers for one call structure: its
    arguments are the operands (input arrays, then traced values); static values are baked
    into the attributes (and into the cache key), so they carry no cotangent. A traced
    value's cotangent is the adjoint handler's reduction over the launch's threads."""
    lay = k.layout
    ops = _Operands(lay, proto.traced_params)
    attrs = dict(proto.attrs)
    out_types = proto.out_types

    def forward(*operands: Any) -> list[Any]:
        fn = jax.ffi.ffi_call(_library.LAUNCH_TARGET, typed_like(out_types, operands),
                              vmap_method=proto.forward_vmap_method,
                              input_output_aliases=lay.input_output_aliases or None,
                              has_side_effect=k.has_side_effect)
        return list(fn(*operands, **attrs))

    f = jax.custom_vjp(forward)

    def fwd(*operands: Any) -> tuple[list[Any], Any]:
        outs = forward(*operands)
        # In/out inputs are kept as they were before the call: the adjoint replays from them.
        return outs, (tuple(operands), tuple(outs[len(lay.in_out):]))

    def bwd(residuals: Any, cotangents: Sequence[Any]) -> tuple[Any, ...]:
        operands, pure = residuals
        arrays, traced = ops.split(operands)
        cots = []
        for ct, t in zip(cotangents, out_types):
            # Integer outputs have float0 cotangents; the adjoint ignores them but wants a buffer.
            cots.append(jnp.zeros(t.shape, t.dtype) if ct.dtype == jax.dtypes.float0 else ct)
        grads: list[Any] = []
        if ops.differentiable:
            fn = jax.ffi.ffi_call(_library.ADJOINT_TARGET, ops.types(operands), vmap_method=proto.vmap_method)
            grads = list(fn(*arrays, *pure, *cots, *traced, **attrs))
        return ops.per_operand(operands, grads)

    f.defvjp(fwd, bwd)
    return f


def jax_kernel(name: str, num_outputs: int = 1, vmap_method: str | None = "broadcast_all",
               launch_dims: Dims | None = None, output_dims: Dims | Mapping[str, Dims] | None = None,
               in_out_argnames: Sequence[str] = (), module_preload_mode: ModulePreloadMode = ModulePreloadMode.CURRENT_DEVICE,
               enable_backward: bool = False, has_side_effect: bool = False,
               block_dim: int | None = None) -> KernelFunction:
    """A kjit kernel as a JAX function.

    Args:
        name: the kernel's qualified C++ name ("demo::saxpy").
        num_outputs: outputs (the last parameters), in/out arguments included.
        vmap_method: how ``jax.vmap`` batches the call ("broadcast_all": one call whose
            leading batch dims the handler launches over; "sequential", "expand_dims").
        launch_dims: launch extent; default: the array dims of the first input array.
        output_dims: dims of the pure outputs (one shape for all, or by name); default:
            the launch dims.
        in_out_argnames: arrays that are inputs and outputs (XLA aliases the buffers).
        module_preload_mode: where to build and load the module before XLA runs (a
            ModulePreloadMode, its value or its name).
        enable_backward: differentiable with jax.grad / vjp / jacrev (the kernel's adjoint),
            jax.jvp / jacfwd (its tangent kernel) and jax.hessian (docs/JAX.md); kernels
            with in/out arrays are reverse mode only.
        has_side_effect: keep the call even when its outputs are unused.
        block_dim: CUDA threads per block, 1..1024 (default: the module's).

    Value (non-array) parameters given Python or NumPy numbers become typed FFI attributes
    (static: a new value compiles a new call); given JAX values (traced under jit, or
    jax.Array) they travel as buffers, so one compiled call serves every value, and with
    ``enable_backward`` they are differentiable (their gradient sums the kernel's adjoint
    over its threads).
    """
    what = f"jax_kernel('{name}')"
    sig = kernel_signature(name)
    lay = make_layout(sig, num_outputs, in_out_argnames, what)
    if block_dim is not None and (isinstance(block_dim, bool) or not isinstance(block_dim, (int, np.integer))
                                  or not 1 <= block_dim <= 1024):
        raise ValueError(f"{what}: block_dim must be an int in 1..1024, got {block_dim!r}")
    preload_mode = option(ModulePreloadMode, module_preload_mode, what, "module_preload_mode")
    return KernelFunction(sig, lay, vmap_method, launch_dims, output_dims, preload_mode, enable_backward,
                          has_side_effect, None if block_dim is None else int(block_dim))
