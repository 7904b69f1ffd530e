"""jax_kernel: a kjit kernel as a JAX function. Every call is the primitive ``kjit_call``
(_forward.py), which launches the kernel through the kjit_launch FFI target; with
``enable_backward`` its jvp, transpose and batching rules give forward and reverse mode and
second derivatives through the tangent kernel and the kjit_adjoint target (reverse mode only
for kernels forward mode does not take), and every combination they cannot give is kjit's own
error (``TransformError``) naming the kernel, what is missing and what to do.

A call's operands are its input arrays, then its traced values (value parameters given JAX
values, which travel as buffers: ``kjit_traced`` names them); static values are attributes."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np

from . import _forward
from ._compat import vary_together
from ._options import ModulePreloadMode, option, preload
from ._signature import (Layout, Param, Signature, array_dims, check_array, input_groups, is_traced,
                         kernel_signature, make_layout, output_type, static_attribute, struct_fields, traced_value)

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
        #: The inputs as a caller passes them: a value struct (kjit::dsl::Mesh) is one, given as
        #: a dict of its fields, which travel as operands and attributes of their own.
        self.groups = input_groups(layout.inputs)
        self._structures: dict[Any, _forward.Structure] = {}
        #: Why forward mode cannot differentiate this kernel (it is then reverse mode only), or "";
        #: known after the first call.
        self.forward_mode_error = ""
        self._lock = threading.Lock()
        if enable_backward:
            _check_differentiable(sig, layout)

    @property
    def name(self) -> str:
        return self.signature.name

    @property
    def num_inputs(self) -> int:
        return len(self.groups)

    def __call__(self, *args: Any, output_dims: Dims | Mapping[str, Dims] | None = None,
                 launch_dims: Dims | None = None, vmap_method: str | None = None) -> Any:
        if len(args) != self.num_inputs:
            names = ", ".join(g.name for g in self.groups)
            raise ValueError(f"kernel '{self.name}': expected {self.num_inputs} inputs ({names}), got {len(args)}")
        if len(self.groups) != len(self.layout.inputs):  # a struct's fields are inputs of their own
            args = tuple(v for g, a in zip(self.groups, args)
                         for v in (struct_fields(self.name, g, a) if g.struct is not None else (a,)))
        launch_dims = self.launch_dims if launch_dims is None else launch_dims
        output_dims = self.output_dims if output_dims is None else output_dims
        vmap_method = self.vmap_method if vmap_method is None else vmap_method
        preload(self.name, self.preload_mode)
        call = _Call(self, args, launch_dims, output_dims, vmap_method)
        operands = vary_together(call.operands)
        return call.finish(_forward.call(self._structure(call), operands))

    def _structure(self, call: "_Call") -> _forward.Structure:
        """The primitives' view of this call's static configuration (cached: one per set of
        statics, traced parameters, launch and output dims and vmap method, so that jit sees
        the same primitive parameters every time)."""
        key = (call.static_key, call.launch_key, call.out_key, call.vmap_method,
               tuple((t.shape, str(t.dtype)) for t in call.out_types))
        with self._lock:
            st = self._structures.get(key)
            if st is None:
                tsig, why = None, ""
                if self.enable_backward:
                    tsig, why = self._tangent_signature()
                    self.forward_mode_error = why
                st = _forward.Structure(self, call, tsig, why)
                self._structures[key] = st
        return st

    def _tangent_signature(self) -> tuple[Any, str]:
        """The tangent kernel's signature, or None and why this kernel has no forward mode."""
        if self.layout.in_out:
            return None, (f"kernel '{self.name}' has in/out arguments "
                          f"({', '.join(p.name for p in self.layout.in_out)}), which forward mode from JAX does not "
                          "take: it is differentiated in reverse mode only")
        return _forward.tangent_signature(self.name)


class _Call:
    """One call's decoded arguments, attributes and output types."""

    def __init__(self, k: KernelFunction, args: Sequence[Any], launch_dims: Dims | None,
                 output_dims: Any, vmap_method: str | None) -> None:
        lay = k.layout
        self.k = k
        self.vmap_method = vmap_method
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
        first = next((i for i, p in enumerate(lay.array_inputs) if p.field_of is None), None)
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
