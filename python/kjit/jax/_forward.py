"""A jax_kernel call and its derivatives as JAX primitives (docs/JAX.md, *Forward mode and
second order*).

Every call of a kernel is the primitive ``kjit_call``; its derivatives are four more, each one
FFI launch (or none) over the call's operands ``x`` (input arrays, then traced values) and its
results ``y`` (in/out arrays, then pure outputs):

- ``kjit_call``: y = F(x), the kernel (``kjit_launch``);
- ``kjit_tangent``: J v, linear in v, the tangent kernel ``"<kernel>.tangent"``;
- ``kjit_vjp``: J^T c, linear in c, the adjoint (``kjit_adjoint``);
- ``kjit_tangent_vjp``: J^T e + sum_k c_k H_k d, linear in (d, e), the tangent kernel's adjoint
  (seeded with e on the outputs and c on their tangents);
- ``kjit_hvp``: H[v, d] per output, linear in d: no launch (forward over forward, kjit's error).

(``H_k`` is the Hessian of output element k over every differentiable operand, a symmetric
matrix.) Their rules close the set: the jvp of ``kjit_call`` is ``kjit_tangent``, whose
transpose is ``kjit_vjp``; the jvp of ``kjit_vjp`` is ``kjit_tangent_vjp`` (reverse over
forward: jax.hessian), the jvp of ``kjit_tangent`` in its primal is ``kjit_hvp`` (grad of jvp),
whose transpose is ``kjit_tangent_vjp`` again, and ``kjit_tangent_vjp``'s transpose is itself
(by the Hessian's symmetry) and ``kjit_tangent`` (reverse over reverse). What no launch
computes — forward over forward, third derivatives, derivatives of a kernel made without
``enable_backward`` or without a tangent kernel, vmap without a vmap_method — raises
:class:`TransformError` naming the kernel, what is missing and what to do.

Being primitives (not ``jax.custom_jvp`` / ``custom_vjp`` functions), the rules survive every
JAX transformation that re-traces them: partial evaluation of ``lax.scan`` and ``fori_loop``
bodies (on JAX 0.7 a custom_jvp's rule is dropped there, and hessians through a scan end in
"The FFI call to `kjit_launch` cannot be differentiated"), ``jax.checkpoint``, user
``custom_vjp`` / ``custom_jvp`` wrappers.

Batching is kjit's own too: an operand's dims before its parameter's are batch dims, aligned
to the call's trailing batch dims (size 1 or absent broadcasts), as the handlers take them.
vmap puts its new dim first and pads a batched operand's older batch dims with size-1 dims, so
every operand's batch dims line up with the right axes of the call's, however deeply nested.
The FFI calls themselves are made only when a primitive is evaluated or lowered: with
"broadcast_all" and "expand_dims" one call over the batch, with "sequential" one per item.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from . import _library
from ._compat import aval_like, typed_as, typed_like
from ._signature import Param, Signature, kernel_signature, static_attribute

TANGENT_SUFFIX = ".tangent"


class TransformError(_library.KjitError, NotImplementedError):
    """A JAX transformation of a kjit call that kjit cannot give (a derivative the kernel has
    no launch for, vmap without a vmap_method): the message names the kernel, what is missing
    and what to do. A ``KjitError`` and a ``NotImplementedError``."""


_SEQUENTIAL = ("sequential", "sequential_unrolled")

try:  # what jax.ffi.ffi_call(has_side_effect=True) gives its equation, so that it is kept
    from jax._src.ffi import _FfiEffect as _SIDE_EFFECT
except ImportError:  # pragma: no cover - a JAX without it: XLA still keeps the custom call
    _SIDE_EFFECT = None


def tangent_signature(name: str) -> tuple[Signature | None, str]:
    """The signature of kernel ``name``'s tangent kernel, or None and why forward mode refuses it."""
    try:
        return kernel_signature(name + TANGENT_SUFFIX), ""
    except _library.KjitError as e:
        return None, str(e)


def _batch_shape(shapes: Sequence[Sequence[int]], ranks: Sequence[int], name: str) -> tuple[int, ...]:
    """The call's batch dims as the handlers derive them: each operand's leading dims beyond its
    parameter's rank, aligned to the trailing batch dims; size 1 or absent broadcasts."""
    extra = [tuple(s[: len(s) - r]) for s, r in zip(shapes, ranks)]
    n = max((len(e) for e in extra), default=0)
    out = [1] * n
    for e in extra:
        for d, size in enumerate(e):
            i = n - len(e) + d
            if size != 1:
                if out[i] not in (1, size):
                    raise _library.KjitError(f"kjit kernel '{name}': batch dims {e} do not broadcast to {tuple(out)} "
                                             "(a kjit.jax bug: please report it)")
                out[i] = size
    return tuple(out)


def _core(shape: Sequence[int], rank: int) -> tuple[int, ...]:
    return tuple(shape[len(shape) - rank:]) if rank else ()


def _sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    """``g`` summed down to ``shape`` (the gradient of an operand the call broadcast)."""
    if tuple(g.shape) == tuple(shape):
        return g
    lead = g.ndim - len(shape)
    if lead:
        g = jnp.sum(g, axis=tuple(range(lead)))
    axes = tuple(d for d, (a, b) in enumerate(zip(g.shape, shape)) if a != b)
    return jnp.sum(g, axis=axes, keepdims=True) if axes else g


def _sequential(call: Callable[[list[Any]], list[Any]], operands: Sequence[Any], ranks: Sequence[int],
                batch: tuple[int, ...]) -> list[Any]:
    """``call`` (one unbatched FFI call) once per batch item: a jax.vmap per batch dim over the
    unbatched call, whose vmap_method ("sequential") makes JAX loop. A size-1 batch dim of an
    operand is not mapped (every item sees it)."""
    nb = len(batch)
    ops = [jnp.reshape(a, (1,) * (nb - (np.ndim(a) - r)) + tuple(np.shape(a))) for a, r in zip(operands, ranks)]

    def level(ops: list[Any], d: int) -> list[Any]:
        if d == nb:
            return call(ops)
        axes, cur = [], []
        for a in ops:
            if batch[d] == 1 or a.shape[0] != 1:
                axes.append(0)
                cur.append(a)
            else:
                axes.append(None)
                cur.append(jnp.reshape(a, a.shape[1:]))
        return jax.vmap(lambda *o: level(list(o), d + 1), in_axes=axes)(*cur)

    return list(level(ops, 0))


def _is_zero(t: Any) -> bool:
    return type(t) is ad.Zero


def _zero(x: Any) -> Any:
    """A symbolic zero tangent for primal ``x``."""
    return ad.Zero(jax.typeof(x).to_tangent_aval())


def _value(t: Any) -> Any:
    """A tangent or cotangent as an array: a symbolic zero becomes zeros of its type."""
    if _is_zero(t):
        return jnp.zeros(t.aval.shape, t.aval.dtype)
    return t


def _aval(x: Any) -> Any:
    """The type of an operand in a transpose rule (an undefined primal has only its aval)."""
    return x.aval if ad.is_undefined_primal(x) else jax.typeof(x)


def _zeros_like(x: Any) -> Any:
    a = _aval(x)
    return jnp.zeros(a.shape, a.dtype)


class Structure:
    """One call structure of a kernel (which values are traced, the statics, launch and output
    dims, the vmap method): the FFI calls of the primitives over its operands, and the errors
    for what it cannot do."""

    def __init__(self, k: Any, proto: Any, tsig: Signature | None, why_no_tangent: str) -> None:
        lay = k.layout
        self.name: str = k.name
        self.vmap_method: str | None = proto.vmap_method
        self.has_side_effect: bool = k.has_side_effect
        self.enable_backward: bool = k.enable_backward
        self.why_no_tangent = why_no_tangent
        self.n = len(k.signature.params)
        self.arrays: tuple[Param, ...] = lay.array_inputs
        self.traced: tuple[Param, ...] = tuple(proto.traced_params)
        self.n_in_out = len(lay.in_out)
        self.results: tuple[Param, ...] = (*lay.in_out, *lay.outputs)
        self.aliases: dict[int, int] = dict(lay.input_output_aliases)
        self.out_types = list(proto.out_types)  # the results' unbatched types, in/out first
        self.attrs = dict(proto.attrs)
        self.params = (*self.arrays, *self.traced)
        self.diff = [i for i, p in enumerate(self.params) if p.differentiable]
        self.diff_results = [i for i, p in enumerate(self.results) if p.differentiable]
        self.ranks = [p.jax_ndim if p.is_array else len(p.inner) for p in self.params]
        self.result_ranks = [len(t.shape) for t in self.out_types]
        self.tangent_attrs: dict[str, Any] | None = None
        #: Why the tangent kernel has no adjoint (a builtin evaluated by duals, docs/AUTODIFF.md), or "".
        self.why_no_second_order = ""
        if tsig is not None:
            self.tangent_attrs = self._tangent_attrs(lay, tsig)
            self.why_no_second_order = "" if tsig.has_adjoint else tsig.adjoint_error

    def _tangent_attrs(self, lay: Any, tsig: Signature) -> dict[str, Any]:
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
        outs = self.results
        order = ([p.index for p in self.arrays] + [n + p.index for p in self.arrays] + [p.index for p in outs] +
                 [n + p.index for p in outs])
        t["kjit_array_order"] = np.array(order, dtype=np.int64)
        return t

    # -- operand groups of the primitives -------------------------------------------------------

    def groups(self, prim: Primitive) -> list[list[int]]:
        """The ranks of ``prim``'s operands, group by group."""
        ops, res = self.ranks, self.result_ranks
        dirs = [ops[i] for i in self.diff]
        cts = [res[i] for i in self.diff_results]
        return {call_p: [ops], tangent_p: [ops, res, dirs], vjp_p: [ops, res, cts],
                tangent_vjp_p: [ops, res, cts, dirs, cts], hvp_p: [ops, res, dirs, dirs]}[prim]

    def split(self, prim: Primitive, args: Sequence[Any]) -> list[list[Any]]:
        out, i = [], 0
        for g in self.groups(prim):
            out.append(list(args[i:i + len(g)]))
            i += len(g)
        return out

    def flat_ranks(self, prim: Primitive) -> list[int]:
        return [r for g in self.groups(prim) for r in g]

    # -- errors ---------------------------------------------------------------------------------

    def _fix(self) -> str:
        if self.n_in_out:
            return ("; for forward mode and second derivatives, pass the in/out arrays as separate inputs and "
                    "outputs (jax_kernel without in_out_argnames)")
        return ""

    def require_backward(self) -> None:
        if not self.enable_backward:
            raise TransformError(
                f"kjit kernel '{self.name}' cannot be differentiated: it was made without enable_backward=True, so "
                "kjit gave JAX no derivative rule for it. Make it with kjit.jax.jax_kernel("
                f"'{self.name}', enable_backward=True) (reverse and forward mode, second derivatives), or keep its "
                "inputs out of the differentiation (jax.lax.stop_gradient)")

    def require_tangent(self) -> None:
        """Forward mode and second derivatives need the tangent kernel."""
        self.require_backward()
        if self.tangent_attrs is not None:
            return
        raise TransformError(
            f"kjit kernel '{self.name}' has no forward mode and no second derivatives: {self.why_no_tangent}. "
            "Forward-mode derivatives (jax.jvp, jax.jacfwd, jax.linearize) and second derivatives (jax.hessian, "
            "jax.jvp of jax.grad, jax.grad of jax.jvp, jax.jacrev of jax.jacrev) need its tangent kernel "
            f"'{self.name}{TANGENT_SUFFIX}'. Use reverse mode (jax.grad, jax.vjp, jax.jacrev){self._fix()}")

    def require_second_order(self) -> None:
        """Second derivatives need the tangent kernel's adjoint."""
        self.require_tangent()
        if self.why_no_second_order:
            raise TransformError(
                f"kjit kernel '{self.name}' has no second derivatives: {self.why_no_second_order}. jax.hessian, "
                "jax.jvp of jax.grad, jax.grad of jax.jvp and jax.jacrev of jax.jacrev need the adjoint of its tangent "
                f"kernel '{self.name}{TANGENT_SUFFIX}'. First derivatives work in both modes (jax.grad, jax.vjp, "
                "jax.jacrev, jax.jvp, jax.jacfwd)")

    def forward_over_forward(self) -> TransformError:
        return TransformError(
            f"kjit kernel '{self.name}': forward over forward mode (jax.jacfwd of jax.jacfwd, jax.jvp of jax.jvp, "
            "or evaluating jax.linearize of a jvp) needs second-order tangents of the kernel, which kjit does not "
            "generate (it has the tangent kernel and the adjoints). Take second derivatives with reverse mode on "
            "one side: jax.hessian (jax.jacfwd of jax.jacrev), jax.jacrev of jax.jacfwd, jax.jacrev of jax.jacrev, "
            "jax.jvp of jax.grad or jax.grad of jax.jvp")

    def third_order(self) -> TransformError:
        return TransformError(
            f"kjit kernel '{self.name}': third and higher derivatives are not available: kjit generates the "
            "kernel's first derivatives (its tangent kernel and adjoint) and second derivatives (the adjoint of the "
            "tangent kernel) only. Differentiate it at most twice (jax.hessian, jax.jvp of jax.grad, ...)")

    def no_vmap(self) -> TransformError:
        return TransformError(
            f"kjit kernel '{self.name}' cannot be batched by jax.vmap: it was made with vmap_method=None. Pass "
            "vmap_method='broadcast_all' (the default: one launch over the batch), 'expand_dims' or 'sequential' to "
            "jax_kernel, or to the call")

    # -- the FFI calls --------------------------------------------------------------------------

    def _ffi(self, target: str, attrs: dict[str, Any], operands: Sequence[Any], ranks: Sequence[int],
             cores: Sequence[tuple[tuple[int, ...], Any]], refs: Sequence[int] | None = None,
             aliases: dict[int, int] | None = None, side_effect: bool = False) -> list[Any]:
        """One FFI call (or one per batch item, "sequential") over ``operands``, whose dims
        before their ``ranks`` are batch dims; results ``cores`` (shape, dtype) at the call's
        batch dims, typed like the operands (or, ``refs``, each like the operand it is the
        gradient of)."""
        batch = _batch_shape([np.shape(a) for a in operands], ranks, self.name)
        if batch and self.vmap_method in _SEQUENTIAL:
            return _sequential(lambda ops: self._ffi(target, attrs, ops, ranks, cores, refs, aliases, side_effect),
                               operands, ranks, batch)
        types = [jax.ShapeDtypeStruct(batch + tuple(c), d) for c, d in cores]
        types = typed_like(types, operands) if refs is None else typed_as(types, [operands[i] for i in refs])
        ops = list(operands)
        for i in aliases or {}:  # XLA aliases an in/out operand to its result: it needs the full batch
            full = batch + _core(np.shape(ops[i]), ranks[i])
            if tuple(np.shape(ops[i])) != full:
                ops[i] = jnp.broadcast_to(ops[i], full)
        fn = jax.ffi.ffi_call(target, types, vmap_method=self.vmap_method, input_output_aliases=aliases or None,
                              has_side_effect=side_effect)
        return list(fn(*ops, **attrs))

    def forward(self, ops: Sequence[Any]) -> list[Any]:
        """The kernel's launch: every result, in/out first."""
        return self._ffi(_library.LAUNCH_TARGET, self.attrs, ops, self.ranks,
                         [(t.shape, t.dtype) for t in self.out_types], aliases=self.aliases,
                         side_effect=self.has_side_effect)

    def _tangent_operands(self, ops: Sequence[Any], dirs: Sequence[Any]) -> tuple[list[Any], list[int]]:
        """The tangent kernel's operands and their ranks: arrays, their tangents (an integer
        array's own buffer, which the tangent kernel never reads), traced values, their
        differentiable tangents."""
        a = len(self.arrays)
        arrays, traced = list(ops[:a]), list(ops[a:])
        d = dict(zip(self.diff, dirs))
        darrays = [d.get(i, arrays[i]) for i in range(a)]
        dtraced = [d[a + j] for j, p in enumerate(self.traced) if p.differentiable]
        r = self.ranks
        ranks = [*r[:a], *r[:a], *r[a:], *(r[a + j] for j, p in enumerate(self.traced) if p.differentiable)]
        return [*arrays, *darrays, *traced, *dtraced], ranks

    def _cotangents(self, cts: Sequence[Any], res: Sequence[Any]) -> list[Any]:
        """One cotangent per result: the differentiable results' as given, zeros for the others
        (integers: the adjoint ignores them but wants a buffer)."""
        c = dict(zip(self.diff_results, cts))
        return [c[i] if i in c else jnp.zeros(np.shape(r), self.out_types[i].dtype) for i, r in enumerate(res)]

    def _grad_cores(self, ops: Sequence[Any]) -> list[tuple[tuple[int, ...], Any]]:
        return [(_core(np.shape(ops[i]), self.ranks[i]), self.params[i].dtype) for i in self.diff]

    def tangent(self, ops: Sequence[Any], res: Sequence[Any], dirs: Sequence[Any]) -> list[Any]:
        """J v: one tangent launch (it recomputes the outputs, which are dropped)."""
        self.require_tangent()
        tops, ranks = self._tangent_operands(ops, dirs)
        cores = [(_core(np.shape(r), rr), t.dtype) for r, rr, t in zip(res, self.result_ranks, self.out_types)]
        out = self._ffi(_library.LAUNCH_TARGET, self.tangent_attrs, tops, ranks, cores + cores)
        return [out[len(cores) + i] for i in self.diff_results]

    def adjoint(self, ops: Sequence[Any], res: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        """J^T c: the adjoint launch, one gradient per differentiable operand, at the call's batch
        dims (kjit_adjoint's frame: input arrays, pure outputs, a cotangent per result, traced values)."""
        self.require_backward()
        a = len(self.arrays)
        pure = list(res[self.n_in_out:])
        cots = self._cotangents(cts, res)
        operands = [*ops[:a], *pure, *cots, *ops[a:]]
        r, rr = self.ranks, self.result_ranks
        ranks = [*r[:a], *rr[self.n_in_out:], *rr, *r[a:]]
        shift = len(pure) + len(cots)
        refs = [i if i < a else i + shift for i in self.diff]
        return self._ffi(_library.ADJOINT_TARGET, self.attrs, operands, ranks, self._grad_cores(ops), refs=refs)

    def tangent_adjoint(self, ops: Sequence[Any], res: Sequence[Any], cts: Sequence[Any], dirs: Sequence[Any],
                        dcts: Sequence[Any]) -> list[Any]:
        """J^T dcts + sum_k cts_k H_k dirs: the adjoint of the tangent kernel seeded with ``dcts``
        on the outputs and ``cts`` on their tangents, one gradient per differentiable operand."""
        self.require_second_order()
        a = len(self.arrays)
        tops, tranks = self._tangent_operands(ops, dirs)
        t_arrays, t_traced = tops[: 2 * a], tops[2 * a:]
        ct_y, ct_dy = self._cotangents(dcts, res), self._cotangents(cts, res)
        rr = self.result_ranks
        # The outputs' tangents are not read (a differentiable output the kernel reads is
        # refused): the outputs' buffers stand in for them.
        operands = [*t_arrays, *res, *res, *ct_y, *ct_dy, *t_traced]
        ranks = [*tranks[: 2 * a], *rr, *rr, *rr, *rr, *tranks[2 * a:]]
        # Results: the tangent kernel's differentiable input arrays (the arrays', then their
        # tangents'), then its differentiable traced values (the values', then their tangents').
        g = self._grad_cores(ops)
        na = sum(1 for i in self.diff if i < a)
        shift = 4 * len(res)
        refs = [i if i < a else i + a + shift for i in self.diff]
        out = self._ffi(_library.ADJOINT_TARGET, self.tangent_attrs, operands, ranks,
                        g[:na] + g[:na] + g[na:] + g[na:], refs=refs[:na] + refs[:na] + refs[na:] + refs[na:])
        nt = len(g) - na
        return [*out[:na], *out[2 * na:2 * na + nt]]


# -- the primitives ------------------------------------------------------------------------------

def _primitive(name: str) -> Primitive:
    p = Primitive(name)
    p.multiple_results = True
    return p


call_p = _primitive("kjit_call")
tangent_p = _primitive("kjit_tangent")
vjp_p = _primitive("kjit_vjp")
tangent_vjp_p = _primitive("kjit_tangent_vjp")
hvp_p = _primitive("kjit_hvp")


def _call_impl(*args: Any, structure: Structure) -> list[Any]:
    return structure.forward(args)


def _tangent_impl(*args: Any, structure: Structure) -> list[Any]:
    ops, res, dirs = structure.split(tangent_p, args)
    return structure.tangent(ops, res, dirs)


def _vjp_impl(*args: Any, structure: Structure) -> list[Any]:
    ops, res, cts = structure.split(vjp_p, args)
    return structure.adjoint(ops, res, cts)


def _tangent_vjp_impl(*args: Any, structure: Structure) -> list[Any]:
    ops, res, cts, dirs, dcts = structure.split(tangent_vjp_p, args)
    return structure.tangent_adjoint(ops, res, cts, dirs, dcts)


def _hvp_impl(*args: Any, structure: Structure) -> list[Any]:
    structure.require_tangent()
    raise structure.forward_over_forward()


# Abstract evaluation: results at the call's batch dims, typed like the operands (inside
# shard_map: varying over every mesh axis an operand varies over; vary_together made them agree).

def _batch_of(prim: Primitive, avals: Sequence[Any], st: Structure) -> tuple[int, ...]:
    return _batch_shape([a.shape for a in avals], st.flat_ranks(prim), st.name)


def _call_abstract(*avals: Any, structure: Structure) -> tuple[list[Any], Any]:
    st = structure
    batch = _batch_of(call_p, avals, st)
    outs = [aval_like(avals, batch + tuple(t.shape), t.dtype) for t in st.out_types]
    effects = {_SIDE_EFFECT} if st.has_side_effect and _SIDE_EFFECT is not None else set()
    return outs, effects


def _result_tangents(prim: Primitive, avals: Sequence[Any], st: Structure) -> list[Any]:
    """One per differentiable result: its core type at the call's batch dims."""
    batch = _batch_of(prim, avals, st)
    res = st.split(prim, avals)[1]
    return [aval_like(avals, batch + _core(res[i].shape, st.result_ranks[i]), st.out_types[i].dtype)
            for i in st.diff_results]


def _operand_grads(prim: Primitive, avals: Sequence[Any], st: Structure) -> list[Any]:
    """One per differentiable operand: its core type at the call's batch dims, typed as it."""
    batch = _batch_of(prim, avals, st)
    ops = st.split(prim, avals)[0]
    return [aval_like([ops[i]], batch + _core(ops[i].shape, st.ranks[i]), st.params[i].dtype) for i in st.diff]


call_p.def_impl(_call_impl)
call_p.def_effectful_abstract_eval(_call_abstract)
for _p, _impl in ((tangent_p, _tangent_impl), (vjp_p, _vjp_impl), (tangent_vjp_p, _tangent_vjp_impl),
                  (hvp_p, _hvp_impl)):
    _p.def_impl(_impl)
tangent_p.def_abstract_eval(lambda *avals, structure: _result_tangents(tangent_p, avals, structure))
hvp_p.def_abstract_eval(lambda *avals, structure: _result_tangents(hvp_p, avals, structure))
vjp_p.def_abstract_eval(lambda *avals, structure: _operand_grads(vjp_p, avals, structure))
tangent_vjp_p.def_abstract_eval(lambda *avals, structure: _operand_grads(tangent_vjp_p, avals, structure))
for _p, _impl in ((call_p, _call_impl), (tangent_p, _tangent_impl), (vjp_p, _vjp_impl),
                  (tangent_vjp_p, _tangent_vjp_impl), (hvp_p, _hvp_impl)):
    mlir.register_lowering(_p, mlir.lower_fun(_impl, multiple_results=True))


# -- vmap --------------------------------------------------------------------------------------

def _batcher(prim: Primitive) -> Callable[..., Any]:
    def rule(args: Sequence[Any], dims: Sequence[Any], *, structure: Structure) -> tuple[list[Any], list[int]]:
        """The new batch dim goes first; a batched operand gets every batch dim (size 1 where it
        had none, so that its older batch dims stay aligned to the call's trailing ones), an
        unbatched one broadcasts (the handlers' rule)."""
        st = structure
        if st.vmap_method is None:
            raise st.no_vmap()
        ranks = st.flat_ranks(prim)
        mapped = [d is not None for d in dims]
        extra = [np.ndim(a) - r - m for a, r, m in zip(args, ranks, mapped)]  # batch dims it had
        depth = max(extra, default=0)
        size = next(np.shape(a)[d] for a, d, m in zip(args, dims, mapped) if m)
        moved = []
        for a, d, e, m in zip(args, dims, extra, mapped):
            if m:
                a = jnp.moveaxis(a, d, 0)
                a = jnp.reshape(a, (size,) + (1,) * (depth - e) + tuple(a.shape[1:]))
            moved.append(a)
        out = prim.bind(*moved, structure=st)
        return out, [0] * len(out)

    return rule


for _p in (call_p, tangent_p, vjp_p, tangent_vjp_p, hvp_p):
    batching.primitive_batchers[_p] = _batcher(_p)


# -- jvp rules ---------------------------------------------------------------------------------

def _tangents_of(st: Structure, ts: Sequence[Any]) -> list[Any]:
    """The tangents of the differentiable operands."""
    return [ts[i] for i in st.diff]


def _add(terms: list[list[Any]], like: Sequence[Any]) -> list[Any]:
    if not terms:
        return [_zero(x) for x in like]
    out = terms[0]
    for t in terms[1:]:
        out = [a + b for a, b in zip(out, t)]
    return out


def _call_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, structure: Structure) -> tuple[Any, Any]:
    st = structure
    outs = call_p.bind(*primals, structure=st)
    zeros = [_zero(o) for o in outs]
    dirs = _tangents_of(st, tangents)
    if all(_is_zero(d) for d in dirs):
        return outs, zeros
    st.require_backward()
    douts = tangent_p.bind(*primals, *outs, *map(_value, dirs), structure=st)
    for i, d in zip(st.diff_results, douts):
        zeros[i] = d
    return outs, zeros


def _tangent_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, structure: Structure) -> tuple[Any, Any]:
    """d(J v) = J dv + H[v, dx]: the tangent kernel again, and kjit_hvp (transposable: grad of jvp)."""
    st = structure
    ops, res, v = st.split(tangent_p, primals)
    t_ops, _, t_v = st.split(tangent_p, tangents)  # the outputs' tangents do not enter: J v reads x only
    out = tangent_p.bind(*primals, structure=st)
    dx = _tangents_of(st, t_ops)
    terms = []
    if not all(_is_zero(t) for t in t_v):
        terms.append(tangent_p.bind(*ops, *res, *map(_value, t_v), structure=st))
    if not all(_is_zero(t) for t in dx):
        terms.append(hvp_p.bind(*ops, *res, *v, *map(_value, dx), structure=st))
    return out, _add(terms, out)


def _vjp_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, structure: Structure) -> tuple[Any, Any]:
    """d(J^T c) = J^T dc + sum_k c_k H_k dx: one launch of the tangent kernel's adjoint (the
    adjoint alone when x does not move)."""
    st = structure
    ops, res, cts = st.split(vjp_p, primals)
    t_ops, _, t_cts = st.split(vjp_p, tangents)
    out = vjp_p.bind(*primals, structure=st)
    dx = _tangents_of(st, t_ops)
    if all(_is_zero(t) for t in dx):
        if all(_is_zero(t) for t in t_cts):
            return out, [_zero(o) for o in out]
        return out, vjp_p.bind(*ops, *res, *map(_value, t_cts), structure=st)
    return out, tangent_vjp_p.bind(*ops, *res, *cts, *map(_value, dx), *map(_value, t_cts), structure=st)


def _tangent_vjp_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, structure: Structure) -> tuple[Any, Any]:
    """Linear in (d, e) and in c; its derivative in x would be a third derivative."""
    st = structure
    ops, res, cts, d, e = st.split(tangent_vjp_p, primals)
    t_ops, _, t_cts, t_d, t_e = st.split(tangent_vjp_p, tangents)
    if not all(_is_zero(t) for t in _tangents_of(st, t_ops)):
        raise st.third_order()
    out = tangent_vjp_p.bind(*primals, structure=st)
    terms = []
    if not all(_is_zero(t) for t in (*t_d, *t_e)):
        terms.append(tangent_vjp_p.bind(*ops, *res, *cts, *map(_value, t_d), *map(_value, t_e), structure=st))
    if not all(_is_zero(t) for t in t_cts):
        terms.append(tangent_vjp_p.bind(*ops, *res, *map(_value, t_cts), *d, *map(_zeros_like, e), structure=st))
    return out, _add(terms, out)


def _hvp_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, structure: Structure) -> tuple[Any, Any]:
    """Bilinear in (v, d); its derivative in x would be a third derivative."""
    st = structure
    ops, res, v, d = st.split(hvp_p, primals)
    t_ops, _, t_v, t_d = st.split(hvp_p, tangents)
    if not all(_is_zero(t) for t in _tangents_of(st, t_ops)):
        raise st.third_order()
    out = hvp_p.bind(*primals, structure=st)
    terms = []
    if not all(_is_zero(t) for t in t_v):
        terms.append(hvp_p.bind(*ops, *res, *map(_value, t_v), *d, structure=st))
    if not all(_is_zero(t) for t in t_d):
        terms.append(hvp_p.bind(*ops, *res, *v, *map(_value, t_d), structure=st))
    return out, _add(terms, out)


ad.primitive_jvps[call_p] = _call_jvp
ad.primitive_jvps[tangent_p] = _tangent_jvp
ad.primitive_jvps[vjp_p] = _vjp_jvp
ad.primitive_jvps[tangent_vjp_p] = _tangent_vjp_jvp
ad.primitive_jvps[hvp_p] = _hvp_jvp


# -- transpose rules ---------------------------------------------------------------------------

def _undefined(xs: Sequence[Any]) -> bool:
    return any(ad.is_undefined_primal(x) for x in xs)


def _summed(gs: Sequence[Any], targets: Sequence[Any]) -> list[Any]:
    """Each ``g`` summed to its target's shape where the target is an undefined primal (what the
    transpose gives), None where it is known."""
    return [_sum_to(g, tuple(t.aval.shape)) if ad.is_undefined_primal(t) else None for g, t in zip(gs, targets)]


def _check_linear(st: Structure, *known: Sequence[Any]) -> None:
    for group in known:
        if _undefined(group):
            raise st.forward_over_forward()


def _tangent_transpose(cts: Sequence[Any], *args: Any, structure: Structure) -> list[Any]:
    """v -> J v at known x: the adjoint launch."""
    st = structure
    ops, res, dirs = st.split(tangent_p, args)
    _check_linear(st, ops, res)
    none = [None] * (len(ops) + len(res))
    if all(_is_zero(c) for c in cts):
        return none + [None] * len(dirs)
    grads = vjp_p.bind(*ops, *res, *map(_value, cts), structure=st)
    return none + _summed(grads, dirs)


def _vjp_transpose(gs: Sequence[Any], *args: Any, structure: Structure) -> list[Any]:
    """c -> J^T c at known x: the tangent kernel (reverse over reverse)."""
    st = structure
    ops, res, cts = st.split(vjp_p, args)
    _check_linear(st, ops, res)
    none = [None] * (len(ops) + len(res))
    if all(_is_zero(g) for g in gs):
        return none + [None] * len(cts)
    return none + _summed(tangent_p.bind(*ops, *res, *map(_value, gs), structure=st), cts)


def _tangent_vjp_transpose(gs: Sequence[Any], *args: Any, structure: Structure) -> list[Any]:
    """(d, e) -> J^T e + sum_k c_k H_k d at known x, c: its transpose is u -> (sum_k c_k H_k u, J u)
    (H_k is symmetric): the tangent kernel's adjoint and the tangent kernel."""
    st = structure
    ops, res, cts, d, e = st.split(tangent_vjp_p, args)
    _check_linear(st, ops, res, cts)
    none = [None] * (len(ops) + len(res) + len(cts))
    if all(_is_zero(g) for g in gs):
        return none + [None] * (len(d) + len(e))
    u = list(map(_value, gs))
    out_d: list[Any] = [None] * len(d)
    out_e: list[Any] = [None] * len(e)
    if _undefined(d):
        out_d = _summed(tangent_vjp_p.bind(*ops, *res, *cts, *u, *map(_zeros_like, e), structure=st), d)
    if _undefined(e):
        out_e = _summed(tangent_p.bind(*ops, *res, *u, structure=st), e)
    return none + out_d + out_e


def _hvp_transpose(ws: Sequence[Any], *args: Any, structure: Structure) -> list[Any]:
    """d -> H[v, d] at known x, v: its transpose is w -> sum_k w_k H_k v, the tangent kernel's
    adjoint seeded with w on the outputs' tangents (likewise in v at known d)."""
    st = structure
    ops, res, v, d = st.split(hvp_p, args)
    _check_linear(st, ops, res)
    if _undefined(v) and _undefined(d):
        raise st.forward_over_forward()
    none = [None] * (len(ops) + len(res))
    if all(_is_zero(w) for w in ws):
        return none + [None] * (len(v) + len(d))
    w = list(map(_value, ws))
    zero_e = [jnp.zeros_like(x) for x in w]
    if _undefined(d):
        return none + [None] * len(v) + _summed(tangent_vjp_p.bind(*ops, *res, *w, *v, *zero_e, structure=st), d)
    return none + _summed(tangent_vjp_p.bind(*ops, *res, *w, *d, *zero_e, structure=st), v) + [None] * len(d)


ad.primitive_transposes[tangent_p] = _tangent_transpose
ad.primitive_transposes[vjp_p] = _vjp_transpose
ad.primitive_transposes[tangent_vjp_p] = _tangent_vjp_transpose
ad.primitive_transposes[hvp_p] = _hvp_transpose


def call(st: Structure, operands: Sequence[Any]) -> list[Any]:
    """The kernel call: every result, in/out first."""
    return list(call_p.bind(*operands, structure=st))
