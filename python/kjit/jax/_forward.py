"""Forward mode for jax_kernel(..., enable_backward=True): the kernel call as a jax.custom_jvp.

The jvp rule launches the kernel's tangent kernel ("<kernel>.tangent", one launch computing the
outputs and J v) through the primitive ``kjit_tangent``, which is linear in the tangents and
whose transpose is the kernel's adjoint: JAX derives jax.grad / vjp / jacrev by linearizing
and transposing, jax.jvp / jacfwd run the tangent kernel. The transpose is itself a
custom_jvp, whose tangent is the adjoint of the tangent kernel (reverse over forward), so that
jax.hessian = jacfwd(jacrev) works. docs/JAX.md, *Forward mode*, gives the rules and the cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from . import _library
from ._compat import typed_as, typed_like
from ._signature import Param, Signature, kernel_signature, static_attribute

TANGENT_SUFFIX = ".tangent"


def tangent_signature(name: str) -> tuple[Signature | None, str]:
    """The signature of kernel ``name``'s tangent kernel, or None and why forward mode refuses it."""
    try:
        return kernel_signature(name + TANGENT_SUFFIX), ""
    except _library.KjitError as e:
        return None, str(e)


def _batch_shape(operands: Sequence[Any], ranks: Sequence[int]) -> tuple[int, ...]:
    """The call's batch dims as the handlers derive them: each operand's leading dims beyond its
    parameter's rank, aligned to the trailing batch dims; size 1 or absent broadcasts."""
    extra = [tuple(np.shape(a)[: len(np.shape(a)) - r]) for a, r in zip(operands, ranks)]
    n = max((len(e) for e in extra), default=0)
    out = [1] * n
    for e in extra:
        for d, size in enumerate(e):
            i = n - len(e) + d
            if size != 1:
                if out[i] not in (1, size):
                    raise ValueError(f"kjit forward mode: batch dims {e} do not broadcast to {tuple(out)}")
                out[i] = size
    return tuple(out)


def _sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    """``g`` summed down to ``shape`` (the gradient of an operand the call broadcast)."""
    lead = g.ndim - len(shape)
    if lead:
        g = jnp.sum(g, axis=tuple(range(lead)))
    axes = tuple(d for d, (a, b) in enumerate(zip(g.shape, shape)) if a != b)
    return jnp.sum(g, axis=axes, keepdims=True) if axes else g


class Structure:
    """One call structure of a differentiable kernel (which values are traced, the statics,
    launch and output dims) as forward mode sees it: the forward, tangent, adjoint and
    adjoint-of-tangent FFI calls over its operands (input arrays, then traced values)."""

    def __init__(self, k: Any, proto: Any, tsig: Signature) -> None:
        lay = k.layout
        self.name = k.name
        self.vmap_method = proto.vmap_method
        self.forward_vmap_method = proto.forward_vmap_method
        self.has_side_effect = k.has_side_effect
        self.n = len(k.signature.params)
        self.arrays: tuple[Param, ...] = lay.array_inputs
        self.traced: tuple[Param, ...] = tuple(proto.traced_params)
        self.outs: tuple[Param, ...] = lay.outputs
        self.out_types = proto.out_types  # unbatched
        self.attrs = dict(proto.attrs)
        self.params = (*self.arrays, *self.traced)
        self.diff = [i for i, p in enumerate(self.params) if p.differentiable]
        self.diff_outs = [i for i, p in enumerate(self.outs) if p.differentiable]
        self.ranks = [p.jax_ndim if p.is_array else len(p.inner) for p in self.params]
        self.out_ranks = [p.jax_ndim for p in self.outs]

        # The tangent kernel's call: its inputs are the arrays and their tangents, its outputs
        # the outputs and theirs (kjit_array_order); traced values and their tangents are
        # operands; a static value's tangent is a zero attribute.
        n = self.n
        t = dict(self.attrs)
        t["kjit_kernel"] = self.name + TANGENT_SUFFIX
        for p in lay.statics:
            if p.name in self.attrs:
                tp = tsig.params[n + p.index]
                t[tp.name] = static_attribute(tp, np.zeros(tp.inner, dtype=tp.dtype))
        traced = [p.index for p in self.traced]
        for p in self.traced:
            if p.differentiable:
                traced.append(n + p.index)
            else:
                tp = tsig.params[n + p.index]
                t[tp.name] = static_attribute(tp, np.zeros(tp.inner, dtype=tp.dtype))
        if traced:
            t["kjit_traced"] = np.array(traced, dtype=np.int64)
        order = ([p.index for p in self.arrays] + [n + p.index for p in self.arrays] + [p.index for p in self.outs] +
                 [n + p.index for p in self.outs])
        t["kjit_array_order"] = np.array(order, dtype=np.int64)
        self.tangent_attrs = t
        self.adjoint_fn: Any = None  # adjoint(self), made on first use

    # -- the FFI calls -------------------------------------------------------------------------

    def out_shapes(self, batch: tuple[int, ...]) -> list[jax.ShapeDtypeStruct]:
        return [jax.ShapeDtypeStruct(batch + tuple(o.shape), o.dtype) for o in self.out_types]

    def forward(self, *operands: Any) -> list[Any]:
        """The kernel's forward launch (what the custom_jvp differentiates)."""
        fn = jax.ffi.ffi_call(_library.LAUNCH_TARGET, typed_like(self.out_shapes(()), operands),
                              vmap_method=self.forward_vmap_method, has_side_effect=self.has_side_effect)
        return list(fn(*operands, **self.attrs))

    def split(self, operands: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        a = len(self.arrays)
        return list(operands[:a]), list(operands[a:])

    def tangent_operands(self, primals: Sequence[Any], dirs: Sequence[Any]) -> list[Any]:
        """The tangent kernel's operands: arrays, their tangents (an integer array's own buffer,
        which the tangent kernel never reads), traced values, their differentiable tangents."""
        arrays, traced = self.split(primals)
        d = dict(zip(self.diff, dirs))
        a = len(self.arrays)
        darrays = [d.get(i, arrays[i]) for i in range(a)]
        dtraced = [d[a + j] for j, p in enumerate(self.traced) if p.differentiable]
        return [*arrays, *darrays, *traced, *dtraced]

    def tangent(self, primals: Sequence[Any], dirs: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        """One tangent launch: (outputs, their tangents), at the operands' batch dims."""
        batch = _batch_shape([*primals, *dirs], [*self.ranks, *(self.ranks[i] for i in self.diff)])
        types = self.out_shapes(batch)
        operands = self.tangent_operands(primals, dirs)
        fn = jax.ffi.ffi_call(_library.LAUNCH_TARGET, typed_like(types + types, operands),
                              vmap_method=self.forward_vmap_method, has_side_effect=self.has_side_effect)
        res = list(fn(*operands, **self.tangent_attrs))
        return res[: len(types)], res[len(types):]

    def cotangents(self, cts: Sequence[Any], batch: tuple[int, ...]) -> list[Any]:
        """One cotangent per output: the differentiable outputs' as given, zeros for integers."""
        c = dict(zip(self.diff_outs, cts))
        return [c[i] if i in c else jnp.zeros(batch + tuple(o.shape), o.dtype) for i, o in enumerate(self.out_types)]

    def grad_types(self, primals: Sequence[Any], batch: tuple[int, ...]) -> list[jax.ShapeDtypeStruct]:
        """One gradient per differentiable operand, at the call's batch dims, typed as its primal."""
        types = [jax.ShapeDtypeStruct(batch + tuple(np.shape(primals[i])[len(np.shape(primals[i])) - self.ranks[i]:]),
                                      self.params[i].dtype) for i in self.diff]
        return typed_as(types, [primals[i] for i in self.diff])

    def adjoint_call(self, primals: Sequence[Any], outs: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        """J^T ct: the adjoint launch, one gradient per differentiable operand, at the call's
        batch dims (kjit_adjoint's frame: arrays, outputs, cotangents, traced values)."""
        arrays, traced = self.split(primals)
        batch = _batch_shape([*primals, *outs, *cts], [*self.ranks, *self.out_ranks, *(self.out_ranks[i] for i in
                                                                                     self.diff_outs)])
        cots = self.cotangents(cts, batch)
        fn = jax.ffi.ffi_call(_library.ADJOINT_TARGET, self.grad_types(primals, batch), vmap_method=self.vmap_method)
        return list(fn(*arrays, *outs, *cots, *traced, **self.attrs))

    def tangent_adjoint_call(self, primals: Sequence[Any], dirs: Sequence[Any], outs: Sequence[Any],
                             cts: Sequence[Any], dcts: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        """The adjoint of the tangent kernel seeded with ``dcts`` on the outputs and ``cts`` on
        their tangents: (J^T ct, its derivative along (dirs, dcts): J^T dct + (H dirs)^T ct)."""
        tops = self.tangent_operands(primals, dirs)
        a = len(self.arrays)
        t_arrays, t_traced = tops[: 2 * a], tops[2 * a:]
        batch = _batch_shape([*primals, *dirs, *outs, *cts, *dcts],
                             [*self.ranks, *(self.ranks[i] for i in self.diff), *self.out_ranks,
                              *(self.out_ranks[i] for i in self.diff_outs), *(self.out_ranks[i] for i in self.diff_outs)])
        ct_y, ct_dy = self.cotangents(dcts, batch), self.cotangents(cts, batch)
        # Result order: differentiable input arrays of the tangent kernel (the arrays', then
        # their tangents'), then differentiable traced values (the values', then their tangents').
        g = self.grad_types(primals, batch)
        na = sum(1 for i in self.diff if i < a)
        types = g[:na] + g[:na] + g[na:] + g[na:]
        fn = jax.ffi.ffi_call(_library.ADJOINT_TARGET, types, vmap_method=self.vmap_method)
        # The outputs' tangents are not read (a differentiable output the kernel reads is refused):
        # the outputs' buffers stand in for them.
        res = list(fn(*t_arrays, *outs, *outs, *ct_y, *ct_dy, *t_traced, **self.tangent_attrs))
        nt = len(g) - na
        d_x, d_v = res[:na], res[na:2 * na]
        d_s, d_ds = res[2 * na:2 * na + nt], res[2 * na + nt:]
        return [*d_v, *d_ds], [*d_x, *d_s]


# -- kjit_tangent: the tangent launch as a primitive linear in the tangents ----------------------

tangent_p = Primitive("kjit_tangent")
tangent_p.multiple_results = True


def _split_args(args: Sequence[Any], st: Structure) -> tuple[list[Any], list[Any], list[Any]]:
    """kjit_tangent's operands: the primal operands, the outputs (residuals for the transpose),
    the tangents of the differentiable operands."""
    n, m = len(st.params), len(st.outs)
    return list(args[:n]), list(args[n:n + m]), list(args[n + m:])


def _tangent_impl(*args: Any, structure: Structure) -> list[Any]:
    primals, _, dirs = _split_args(args, structure)
    _, douts = structure.tangent(primals, dirs)
    return [douts[i] for i in structure.diff_outs]


def _tangent_abstract(*avals: Any, structure: Structure) -> list[Any]:
    st = structure
    primals, outs, dirs = _split_args(avals, st)
    batch = _batch_shape([*primals, *dirs], [*st.ranks, *(st.ranks[i] for i in st.diff)])
    # The outputs' avals (operands here) carry how they vary over shard_map's mesh axes.
    return [outs[i].update(shape=batch + tuple(st.out_types[i].shape)) for i in st.diff_outs]


def _tangent_batch(args: Sequence[Any], dims: Sequence[Any], *, structure: Structure) -> tuple[list[Any], list[int]]:
    """vmap: the new batch dim goes first; a batched operand gets every batch dim (size 1 where
    it had none), an unbatched one broadcasts (the handlers' rule)."""
    st = structure
    ranks = [*st.ranks, *st.out_ranks, *(st.ranks[i] for i in st.diff)]
    mapped = [d is not None for d in dims]  # None: batching.not_mapped
    extra = [np.ndim(a) - r - m for a, r, m in zip(args, ranks, mapped)]  # batch dims it had
    depth = max(extra, default=0)
    size = next(np.shape(a)[d] for a, d, m in zip(args, dims, mapped) if m)
    moved = []
    for a, d, e, m in zip(args, dims, extra, mapped):
        if m:
            a = jnp.moveaxis(a, d, 0)
            a = a.reshape((size,) + (1,) * (depth - e) + a.shape[1:])
        moved.append(a)
    out = tangent_p.bind(*moved, structure=st)
    return out, [0] * len(out)


def _tangent_transpose(cts: Sequence[Any], *args: Any, structure: Structure) -> list[Any]:
    """The transpose of v -> J v at the (known) primal operands: the adjoint launch."""
    st = structure
    primals, outs, dirs = _split_args(args, st)
    avals = _tangent_abstract(*(getattr(a, "aval", a) for a in args), structure=st)
    cts = [jnp.zeros(av.shape, av.dtype) if type(c) is ad.Zero else c for c, av in zip(cts, avals)]
    grads = adjoint(st)(primals, outs, cts)
    res: list[Any] = [None] * (len(primals) + len(outs))
    for d, g in zip(dirs, grads):
        res.append(_sum_to(g, tuple(d.aval.shape)) if ad.is_undefined_primal(d) else None)
    return res


tangent_p.def_impl(_tangent_impl)
tangent_p.def_abstract_eval(_tangent_abstract)
mlir.register_lowering(tangent_p, mlir.lower_fun(_tangent_impl, multiple_results=True))
batching.primitive_batchers[tangent_p] = _tangent_batch
ad.primitive_transposes[tangent_p] = _tangent_transpose


# -- the adjoint as a custom_jvp (second order) ------------------------------------------------

def adjoint(st: Structure) -> Any:
    """J^T ct as a function of (primal operands, outputs, output cotangents) whose jvp is the
    adjoint of the tangent kernel: reverse over forward, for jacfwd(jacrev(f))."""
    if st.adjoint_fn is not None:
        return st.adjoint_fn

    @jax.custom_jvp
    def adj(primals: list[Any], outs: list[Any], cts: list[Any]) -> list[Any]:
        return st.adjoint_call(primals, outs, cts)

    @adj.defjvp
    def adj_jvp(p: Any, t: Any) -> tuple[list[Any], list[Any]]:
        (primals, outs, cts), (dprimals, _, dcts) = p, t
        dirs = [dprimals[i] for i in st.diff]
        # The outputs' tangents do not enter: the adjoint reads no output value.
        dcts = [jnp.zeros(np.shape(c), c.dtype) if d.dtype == jax.dtypes.float0 else d for c, d in zip(cts, dcts)]
        _, dg = st.tangent_adjoint_call(primals, dirs, outs, cts, dcts)
        # The primal from its own launch: the combined one is batched with the directions
        # (jacfwd's vmap), and JAX wants the primal unbatched.
        return adj(primals, outs, cts), dg

    st.adjoint_fn = adj
    return adj


def make_jvp(k: Any, proto: Any, tsig: Signature) -> Any:
    """The custom_jvp function of one call structure over its operands."""
    st = Structure(k, proto, tsig)
    f = jax.custom_jvp(st.forward)

    @f.defjvp
    def jvp(primals: Any, tangents: Any) -> tuple[list[Any], list[Any]]:
        primals = list(primals)
        # f, not the bare forward call: under an outer jvp (jacfwd of jacrev) the outputs are
        # differentiated too.
        outs = f(*primals)
        dirs = [tangents[i] for i in st.diff]
        douts = tangent_p.bind(*primals, *outs, *dirs, structure=st)
        d = dict(zip(st.diff_outs, douts))
        return outs, [d[i] if i in d else np.zeros(np.shape(o), jax.dtypes.float0) for i, o in enumerate(outs)]

    return f
