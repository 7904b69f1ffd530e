"""kernel(): a kjit kernel as a torch operator. Each kernel object defines three custom ops in the
``kjit`` namespace (torch.library.custom_op): the forward launch, its adjoint and its tangent,
each with a fake (meta) implementation computed from the kernel's description and a batching
rule (vmap: one launch over the batch). The forward op's autograd formula is the adjoint op;
forward mode (torch.func.jvp, torch.autograd.forward_ad) goes through a torch.autograd.Function
whose jvp is the tangent op, because custom ops take no forward-mode formula (docs/TORCH.md)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.autograd.forward_ad as _fwad

from .._launch import static_value
from .._libkjit import KjitError
from .._signature import Layout, Param, Signature, checked_value, make_layout, output_shape
from . import _library
from ._functions import _make_function, _make_reverse_function, _op_function, _saving_all
from ._library import DTYPES, Attrs, Launcher

Dims = int | Sequence[int]
TANGENT_SUFFIX = ".tangent"
_counter = itertools.count()
_CPU = torch.device("cpu")
# What a plain eager call asks of torch's state (KernelOp._eager), bound once: Dynamo knows
# is_compiling by identity, so a compiled call still takes the op.
_is_compiling = torch.compiler.is_compiling
_dispatch_modes = torch._C._len_torch_dispatch_stack
_function_modes = torch._C._is_torch_function_mode_enabled
_grad_enabled = torch._C.is_grad_enabled
_wrapped = torch._C._functorch.is_functorch_wrapped_tensor
_functorch_level = torch._C._functorch.maybe_current_level


def _torch_dtype(p: Param) -> torch.dtype:
    return DTYPES[p.dtype_name][0]


def _core_rank(p: Param) -> int:
    return p.jax_ndim if p.is_array else len(p.inner)


def _batch(tensors: Sequence[torch.Tensor], params: Sequence[Param]) -> tuple:
    """The call's batch dims: every operand's dims before its parameter's, aligned to the right,
    size 1 broadcasting (as the handlers take them)."""
    extra = [tuple(t.shape[: t.dim() - _core_rank(p)]) for t, p in zip(tensors, params)]
    n = max((len(e) for e in extra), default=0)
    out: list = [1] * n
    for e in extra:
        for d, size in enumerate(e):
            i = n - len(e) + d
            if out[i] == 1:
                out[i] = size
    return tuple(out)


def _functorch_wrapped(t: torch.Tensor) -> bool:
    """A tensor of a torch.func transform (vmap, grad, jvp): its strides are logical; the ops'
    implementations see the real tensors (and make internal ones dense)."""
    return torch._C._functorch.is_functorch_wrapped_tensor(t)


class KernelOp:
    """A kjit kernel callable on torch tensors: ``k(*inputs)`` returns the outputs (in/out
    tensors first, then the pure outputs; one tensor when there is one, else a list).

    Inputs in the kernel's order: arrays as tensors (a vec3 element adds a trailing dim of 3, a
    mat33 two), value parameters as Python numbers or tensors of the element's shape (0-d for a
    scalar); a tensor value is differentiable."""

    def __init__(self, sig: Signature, layout: Layout, launch_dims: Dims | None,
                 output_dims: Dims | Mapping[str, Dims] | None, block_dim: int | None) -> None:
        self.signature = sig
        self.layout = layout
        self.name = sig.name
        self.inputs: tuple[Param, ...] = layout.inputs
        self.outputs: tuple[Param, ...] = layout.outputs
        self.in_out: tuple[Param, ...] = layout.in_out
        self.launch_dims = None if launch_dims is None else (
            (int(launch_dims),) if isinstance(launch_dims, int) else tuple(int(d) for d in launch_dims))
        self.output_dims = output_dims
        self._first_array = next((i for i, p in enumerate(self.inputs) if p.is_array), None)
        if self.launch_dims is None and self._first_array is None:
            raise ValueError(f"kernel '{self.name}': cannot determine the launch dimensions (no input array); pass "
                             "launch_dims")
        if isinstance(output_dims, Mapping):
            for p in self.outputs:
                if p.name not in output_dims:
                    raise ValueError(f"kernel '{self.name}': missing output dimensions for argument '{p.name}'")
            self._out_shapes = [output_shape(p, output_dims[p.name]) for p in self.outputs]
        elif output_dims is not None:
            self._out_shapes = [output_shape(p, output_dims) for p in self.outputs]
        elif self.launch_dims is not None:
            self._out_shapes = [output_shape(p, self.launch_dims) for p in self.outputs]
        else:
            self._out_shapes = None  # the first input array's array dims
        #: Why this kernel has no gradient from torch ("" when it has one).
        self.backward_error = ""
        if not sig.has_adjoint:
            self.backward_error = sig.adjoint_error
        elif self.in_out:
            self.backward_error = (f"in/out arguments ({', '.join(p.name for p in self.in_out)}) are mutated in "
                                   "place, and torch takes no autograd formula for an operator that mutates its "
                                   "inputs; pass them as separate inputs and outputs to differentiate")
        else:
            for p in self.outputs:
                if p.loads and p.differentiable:
                    self.backward_error = (f"the kernel reads its output '{p.name}', so its adjoint would write "
                                           "into the output's cotangent")
        self.diff_in = [i for i, p in enumerate(self.inputs) if p.differentiable]
        self.diff_out = [j for j, p in enumerate(self.outputs) if p.differentiable]
        self._tangent_error = ""
        self._tsig: Signature | None = None
        if not self.backward_error:
            try:
                self._tsig = _library.signature(self.name + TANGENT_SUFFIX)
            except KjitError as e:
                self._tangent_error = str(e)
        self._kernel = self.name.encode()
        self._core_ranks = [_core_rank(p) for p in self.inputs]
        self._out_dtypes = [_torch_dtype(p) for p in self.outputs]
        # The forward call's operands (array inputs, then values) and in/out results, by input position.
        self._operand_order = ([i for i, p in enumerate(self.inputs) if p.is_array] +
                               [i for i, p in enumerate(self.inputs) if not p.is_array])
        self._io_pos = [i for i, p in enumerate(self.inputs) if p in self.in_out]
        self._adj_fn = self._tan_fn = self._ta_fn = None
        self._value_cache: dict = {}
        #: The ops of the derivatives (None where the kernel has none from torch).
        self.adjoint_op: Any = None
        self.tangent_op: Any = None
        self.tangent_adjoint_op: Any = None
        self._attrs = self._forward_attrs(block_dim)
        self._tattrs = self._tangent_attrs(block_dim) if self._tsig is not None else None
        tkernel = self._kernel + TANGENT_SUFFIX.encode()
        self._launch_fwd = Launcher(self._kernel, False, self._attrs)
        self._launch_adj = Launcher(self._kernel, True, self._attrs)
        self._launch_tan = None if self._tattrs is None else Launcher(tkernel, False, self._tattrs)
        self._launch_ta = None if self._tattrs is None else Launcher(tkernel, True, self._tattrs)
        #: The direct launches of plain eager calls, by their inputs' dtypes and shapes (_eager).
        self._eager_plans: dict[tuple, tuple] = {}
        self._values_at = [i for i, p in enumerate(self.inputs) if not p.is_array]
        self._single = len(self.in_out) + len(self.outputs) == 1
        self._n_in = len(self.inputs)
        # The adjoint's results: the differentiable arrays' gradients, then the values' (by
        # place in diff_in, the order _adjoint_impl returns them in).
        self._adj_rets = ([k for k, i in enumerate(self.diff_in) if self.inputs[i].is_array] +
                          [k for k, i in enumerate(self.diff_in) if not self.inputs[i].is_array])
        self._adj_plans: dict[tuple, tuple] = {}
        self._operands_in_order = self._operand_order == list(range(self._n_in))
        base = re.sub(r"\W", "_", self.name) + f"_{next(_counter)}"
        self._define_ops(base)

    # -- the handlers' attributes ---------------------------------------------------------------

    def _common(self, block_dim: int | None) -> dict[str, list[int]]:
        a: dict[str, list[int]] = {}
        if self.launch_dims is not None:
            a["kjit_launch_dims"] = list(self.launch_dims)
        if block_dim is not None:
            a["kjit_block_dim"] = [int(block_dim)]
        return a

    def _forward_attrs(self, block_dim: int | None) -> Attrs:
        a = self._common(block_dim)
        values = [p.index for p in self.inputs if not p.is_array]
        if values:  # every value travels as a buffer (a tensor), so one op serves every value
            a["kjit_traced"] = values
        if self.in_out:
            a["kjit_in_out"] = [p.index for p in self.in_out]
        return Attrs(a)

    def _tangent_attrs(self, block_dim: int | None) -> Attrs:
        n = len(self.signature.params)
        tsig = self._tsig
        assert tsig is not None
        a = self._common(block_dim)
        values = [p for p in self.inputs if not p.is_array]
        traced = [p.index for p in values] + [n + p.index for p in values if p.differentiable]
        if traced:
            a["kjit_traced"] = sorted(traced)
        arrays = [p for p in self.inputs if p.is_array]
        a["kjit_array_order"] = ([p.index for p in arrays] + [n + p.index for p in arrays] +
                                 [p.index for p in self.outputs] + [n + p.index for p in self.outputs])
        zeros = {}
        for p in values:
            if not p.differentiable:  # an integer's tangent: a static zero
                tp = tsig.params[n + p.index]
                zeros[tp.name] = static_value(tp)
        return Attrs(a, zeros)

    # -- shapes ---------------------------------------------------------------------------------

    def _out_cores(self, ins: Sequence[torch.Tensor]) -> list[tuple]:
        if self._out_shapes is not None:
            return self._out_shapes
        p = self.inputs[self._first_array]
        t = ins[self._first_array]
        dims = tuple(t.shape[t.dim() - p.jax_ndim:][: p.ndim])
        return [tuple(dims[: q.ndim]) + q.inner if len(dims) == q.ndim else output_shape(q, dims)
                for q in self.outputs]

    def _new_outputs(self, ins: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        # An unbatched call (every operand at its parameter's rank) is the common, cheap case.
        unbatched = all(t.dim() == r for t, r in zip(ins, self._core_ranks))
        batch = () if unbatched else _batch(ins, self.inputs)
        dev = ins[0].device if ins else torch.device("cpu")
        return [torch.empty(batch + tuple(c), dtype=dt, device=dev)
                for dt, c in zip(self._out_dtypes, self._out_cores(ins))]

    # -- the launches (op implementations) --------------------------------------------------------

    def _split(self, ins: Sequence[torch.Tensor]) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        arrays = [t for t, p in zip(ins, self.inputs) if p.is_array]
        values = [t for t, p in zip(ins, self.inputs) if not p.is_array]
        return arrays, values

    def _forward_impl(self, ins: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        if not self.in_out:  # in/out tensors are written in place: never copies (checked by the call)
            ins = [t.contiguous() for t in ins]
            if all(t.is_cpu for t in ins):
                return self._launch_plain(ins)
        outs = self._new_outputs(ins)
        self._launch_fwd([ins[i] for i in self._operand_order], [*(ins[i] for i in self._io_pos), *outs])
        return outs

    def _adjoint_impl(self, ins: Sequence[torch.Tensor], outs: Sequence[torch.Tensor],
                      cts: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        ins = [t.contiguous() for t in ins]
        arrays, values = self._split(ins)
        ct = dict(zip(self.diff_out, cts))
        cots = [ct[j].contiguous() if j in ct else torch.zeros(o.shape, dtype=o.dtype, device=o.device)
                for j, o in enumerate(outs)]
        operands = [*arrays, *[o.contiguous() for o in outs], *cots, *values]
        # The gradients' shapes and the prepared call follow from the operands' layout: kept
        # per layout on the cpu, as the forward's plans are.
        key = tuple(x for t in operands for x in (t.dtype, t.shape)) if all(t.is_cpu for t in operands) else None
        plan = None if key is None else self._adj_plans.get(key)
        if plan is None:
            # Results are at the call's batch dims (those of the cotangents under vmap).
            batch = _batch([*ins, *cts], [*self.inputs, *(self.outputs[j] for j in self.diff_out)])
            grads = [torch.empty(batch + tuple(ins[i].shape[ins[i].dim() - _core_rank(self.inputs[i]):]),
                                 dtype=_torch_dtype(self.inputs[i]), device=ins[i].device) for i in self.diff_in]
            prepared = self._launch_adj.prepare(operands, [grads[k] for k in self._adj_rets])
            if key is not None:
                if len(self._adj_plans) >= 256:
                    self._adj_plans.clear()
                self._adj_plans[key] = (prepared, [(tuple(g.shape), g.dtype) for g in grads])
        else:
            prepared, specs = plan
            grads = [torch.empty(s, dtype=d, device=_CPU) for s, d in specs]
        _library.run(prepared, [*operands, *[grads[k] for k in self._adj_rets]])
        return grads

    def _tangent_operands(self, ins: Sequence[torch.Tensor], dirs: Sequence[torch.Tensor]) -> tuple:
        """The tangent kernel's operands: the inputs (contiguous), their arrays, the arrays'
        directions (an input's own array where it has none), and the traced values in parameter
        order: the values, then the differentiable values' tangents."""
        ins = [t.contiguous() for t in ins]
        d = {i: t.contiguous() for i, t in zip(self.diff_in, dirs)}
        arrays = [t for t, p in zip(ins, self.inputs) if p.is_array]
        darrays = [d.get(i, t) for i, (t, p) in enumerate(zip(ins, self.inputs)) if p.is_array]
        values = [(i, t) for i, (t, p) in enumerate(zip(ins, self.inputs)) if not p.is_array]
        traced = [t for _, t in values] + [d[i] for i, _ in values if i in d]
        return ins, arrays, darrays, traced

    def _tangent_impl(self, ins: Sequence[torch.Tensor], dirs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        if self._tattrs is None:
            raise KjitError(self._no_forward_mode())
        ins, arrays, darrays, traced = self._tangent_operands(ins, dirs)
        batch = _batch([*ins, *dirs], [*self.inputs, *(self.inputs[i] for i in self.diff_in)])
        dev = ins[0].device if ins else torch.device("cpu")
        cores = self._out_cores(ins)
        outs = [torch.empty(batch + tuple(c), dtype=_torch_dtype(p), device=dev) for p, c in zip(self.outputs, cores)]
        douts = [torch.empty(batch + tuple(c), dtype=_torch_dtype(p), device=dev) for p, c in zip(self.outputs, cores)]
        self._launch_tan([*arrays, *darrays, *traced], [*outs, *douts])
        return [douts[j] for j in self.diff_out]

    def _tangent_adjoint_impl(self, ins: Sequence[torch.Tensor], dirs: Sequence[torch.Tensor],
                              ct_y: Sequence[torch.Tensor], ct_dy: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """The tangent kernel's adjoint seeded with ``ct_y`` on the outputs and ``ct_dy`` on their
        tangents: J^T ct_y + sum_k ct_dy_k H_k dirs per differentiable input, then J^T ct_dy per
        direction (second derivatives)."""
        ins, arrays, darrays, traced = self._tangent_operands(ins, dirs)
        outs_p = [*self.inputs, *(self.inputs[i] for i in self.diff_in), *(self.outputs[j] for j in self.diff_out),
                  *(self.outputs[j] for j in self.diff_out)]
        batch = _batch([*ins, *dirs, *ct_y, *ct_dy], outs_p)
        dev = ins[0].device if ins else torch.device("cpu")
        cores = self._out_cores(ins)
        # The outputs (and their tangents) are not read by an adjoint kjit.torch differentiates:
        # zeros stand in for them; a result without a cotangent gets zeros.
        outs = [torch.zeros(tuple(c), dtype=_torch_dtype(p), device=dev) for p, c in zip(self.outputs, cores)]
        cy, cdy = dict(zip(self.diff_out, ct_y)), dict(zip(self.diff_out, ct_dy))
        cots_y = [cy[j].contiguous() if j in cy else outs[j] for j in range(len(self.outputs))]
        cots_dy = [cdy[j].contiguous() if j in cdy else outs[j] for j in range(len(self.outputs))]

        def grad(i: int) -> torch.Tensor:
            t = ins[i]
            return torch.empty(batch + tuple(t.shape[t.dim() - _core_rank(self.inputs[i]):]),
                               dtype=_torch_dtype(self.inputs[i]), device=t.device)

        da = [i for i in self.diff_in if self.inputs[i].is_array]
        dv = [i for i in self.diff_in if not self.inputs[i].is_array]
        g_a, g_da, g_v, g_dv = ([grad(i) for i in da], [grad(i) for i in da], [grad(i) for i in dv],
                                [grad(i) for i in dv])
        self._launch_ta([*arrays, *darrays, *outs, *outs, *cots_y, *cots_dy, *traced], [*g_a, *g_da, *g_v, *g_dv])
        by_x, by_d = {**dict(zip(da, g_a)), **dict(zip(dv, g_v))}, {**dict(zip(da, g_da)), **dict(zip(dv, g_dv))}
        return [by_x[i] for i in self.diff_in] + [by_d[i] for i in self.diff_in]

    def _no_forward_mode(self) -> str:
        why = self.backward_error or self._tangent_error
        return (f"kjit kernel '{self.name}' has no forward mode from torch: {why}. torch.func.jvp, jacfwd and "
                "torch.autograd.forward_ad need its tangent kernel; use reverse mode (backward, torch.func.vjp, "
                "jacrev)")

    # -- the ops ----------------------------------------------------------------------------------

    def _define_ops(self, base: str) -> None:
        self._io_index = {p.index for p in self.in_out}
        letters = iter("abcdefghijklmnopqrstuvwxyz")
        ins = ", ".join(f"Tensor({next(letters)}!) a_{p.name}" if p.index in self._io_index else f"Tensor a_{p.name}"
                        for p in self.inputs)
        n_in = len(self.inputs)
        ret = "Tensor[]" if self.outputs else "()"

        def fwd(*args: torch.Tensor) -> Any:
            outs = self._forward_impl(args)
            return outs if self.outputs else None

        self.forward_op = torch.library.custom_op(
            f"kjit::{base}", fwd, mutates_args=tuple(f"a_{p.name}" for p in self.in_out),
            schema=f"({ins}) -> {ret}")

        def fwd_fake(*args: torch.Tensor) -> Any:
            return self._new_outputs(args) if self.outputs else None

        self.forward_op.register_fake(fwd_fake)
        self.forward_op.register_vmap(self._vmap_rule(lambda *a: self.forward_op(*a), n_in, bool(self.in_out)))
        if self.backward_error:
            return
        plain = ", ".join(f"Tensor a_{p.name}" for p in self.inputs)
        outs = ", ".join(f"Tensor o_{p.name}" for p in self.outputs)
        cts = ", ".join(f"Tensor c_{self.outputs[j].name}" for j in self.diff_out)
        n_out, n_ct = len(self.outputs), len(self.diff_out)

        def adj(*args: torch.Tensor) -> list[torch.Tensor]:
            return self._adjoint_impl(args[:n_in], args[n_in:n_in + n_out], args[n_in + n_out:])

        def adj_fake(*args: torch.Tensor) -> list[torch.Tensor]:
            ins, cts_ = args[:n_in], args[n_in + n_out:]
            batch = _batch([*ins, *cts_], [*self.inputs, *(self.outputs[j] for j in self.diff_out)])
            return [torch.empty(batch + tuple(ins[i].shape[ins[i].dim() - _core_rank(self.inputs[i]):]),
                                dtype=_torch_dtype(self.inputs[i]), device=ins[i].device) for i in self.diff_in]

        self.adjoint_op = torch.library.custom_op(
            f"kjit::{base}_adjoint", adj, mutates_args=(),
            schema=f"({', '.join(s for s in (plain, outs, cts) if s)}) -> Tensor[]")
        self.adjoint_op.register_fake(adj_fake)
        self.adjoint_op.register_vmap(self._vmap_rule(lambda *a: self.adjoint_op(*a), n_in + n_out + n_ct, False))

        dirs = ", ".join(f"Tensor d_{self.inputs[i].name}" for i in self.diff_in)

        def tan(*args: torch.Tensor) -> list[torch.Tensor]:
            return self._tangent_impl(args[:n_in], args[n_in:])

        def tan_fake(*args: torch.Tensor) -> list[torch.Tensor]:
            ins, ds = args[:n_in], args[n_in:]
            batch = _batch([*ins, *ds], [*self.inputs, *(self.inputs[i] for i in self.diff_in)])
            dev = ins[0].device if ins else torch.device("cpu")
            cores = self._out_cores(ins)
            return [torch.empty(batch + tuple(cores[j]), dtype=_torch_dtype(self.outputs[j]), device=dev)
                    for j in self.diff_out]

        self.tangent_op = torch.library.custom_op(
            f"kjit::{base}_tangent", tan, mutates_args=(),
            schema=f"({', '.join(s for s in (plain, dirs) if s)}) -> Tensor[]")
        self.tangent_op.register_fake(tan_fake)
        self.tangent_op.register_vmap(self._vmap_rule(lambda *a: self.tangent_op(*a), n_in + len(self.diff_in), False))

        kernel = self
        if self._tsig is not None and self._tsig.has_adjoint:
            self._define_second_order(base, plain, dirs, n_in, n_out)

        def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
            ctx.save_for_backward(*inputs, *output)

        def backward(ctx: Any, grads: Sequence[torch.Tensor | None]) -> tuple:
            saved = ctx.saved_tensors
            return kernel._grads(saved[:n_in], saved[n_in:], grads)

        self.forward_op.register_autograd(backward, setup_context=setup_context)
        self._function = _make_function(self)
        self._reverse = _make_reverse_function(self)

    def _define_second_order(self, base: str, plain: str, dirs: str, n_in: int, n_out: int) -> None:
        """The tangent kernel's adjoint as an op, and the derivatives of the adjoint and tangent
        ops through it (torch.autograd.grad of a gradient, gradgradcheck, hessians)."""
        n_d, n_c = len(self.diff_in), len(self.diff_out)
        cy = ", ".join(f"Tensor cy_{self.outputs[j].name}" for j in self.diff_out)
        cdy = ", ".join(f"Tensor cdy_{self.outputs[j].name}" for j in self.diff_out)

        def ta(*args: torch.Tensor) -> list[torch.Tensor]:
            i, d, c = args[:n_in], args[n_in:n_in + n_d], args[n_in + n_d:]
            return self._tangent_adjoint_impl(i, d, c[:n_c], c[n_c:])

        def ta_fake(*args: torch.Tensor) -> list[torch.Tensor]:
            ins = args[:n_in]
            batch = _batch(args, [*self.inputs, *(self.inputs[i] for i in self.diff_in),
                                  *(self.outputs[j] for j in self.diff_out), *(self.outputs[j] for j in self.diff_out)])
            g = [torch.empty(batch + tuple(ins[i].shape[ins[i].dim() - _core_rank(self.inputs[i]):]),
                             dtype=_torch_dtype(self.inputs[i]), device=ins[i].device) for i in self.diff_in]
            return g + [torch.empty_like(t) for t in g]

        self.tangent_adjoint_op = torch.library.custom_op(
            f"kjit::{base}_tangent_adjoint", ta, mutates_args=(),
            schema=f"({', '.join(s for s in (plain, dirs, cy, cdy) if s)}) -> Tensor[]")
        self.tangent_adjoint_op.register_fake(ta_fake)
        self.tangent_adjoint_op.register_vmap(
            self._vmap_rule(lambda *a: self.tangent_adjoint_op(*a), n_in + n_d + 2 * n_c, False))

        def zeros_for(outs_like: Sequence[torch.Tensor]) -> list[torch.Tensor]:
            return [torch.zeros_like(t) for t in outs_like]

        # adjoint op: g = J^T c.  d g / d c applied to u is J u (the tangent op); d g / d x is
        # sum_k c_k H_k u (the tangent kernel's adjoint seeded with c on the output tangents).
        def adj_backward(saved: Sequence[torch.Tensor], grads: Sequence[torch.Tensor | None]) -> tuple:
            ins, cts = saved[:n_in], saved[n_in + n_out:]
            u = [g if g is not None else torch.zeros_like(ins[i]) for g, i in zip(grads, self.diff_in)]
            g_c = self._call(self._tan_fn, self.tangent_op, *ins, *u)
            g_x = self._call(self._ta_fn, self.tangent_adjoint_op, *ins, *u, *zeros_for(cts), *cts)[:n_d]
            res: list = [None] * (n_in + n_out) + list(g_c)
            for i, g in zip(self.diff_in, g_x):
                res[i] = g
            return tuple(res)

        bw, setup = _saving_all(adj_backward)
        self.adjoint_op.register_autograd(bw, setup_context=setup)

        # jvp of the adjoint (forward over reverse: torch.func.hessian): d(J^T c) along (dx, dc) is
        # J^T dc + sum_k c_k H_k dx, one launch of the tangent kernel's adjoint.
        def adj_jvp(saved: Sequence[torch.Tensor], tangents: Sequence[torch.Tensor | None]) -> list[torch.Tensor]:
            ins, cts = saved[:n_in], saved[n_in + n_out:]
            dx = [tangents[i] if tangents[i] is not None else torch.zeros_like(ins[i]) for i in self.diff_in]
            dc = [t if t is not None else torch.zeros_like(c) for t, c in zip(tangents[n_in + n_out:], cts)]
            return self.tangent_adjoint_op(*ins, *dx, *dc, *cts)[:n_d]

        self._adj_fn = _op_function(self.adjoint_op, adj_backward, adj_jvp)

        # tangent op: t = J d.  d t / d d applied to e is J^T e; d t / d x is sum_k e_k H_k d.
        def tan_backward(saved: Sequence[torch.Tensor], grads: Sequence[torch.Tensor | None]) -> tuple:
            ins, d = saved[:n_in], saved[n_in:]
            cores = self._out_cores(ins)
            e = [g if g is not None else torch.zeros(tuple(cores[j]), dtype=_torch_dtype(self.outputs[j]),
                                                     device=ins[0].device)
                 for g, j in zip(grads, self.diff_out)]
            g = self._call(self._ta_fn, self.tangent_adjoint_op, *ins, *d, *zeros_for(e), *e)
            res: list = [None] * n_in + list(g[n_d:])
            for i, gi in zip(self.diff_in, g[:n_d]):
                res[i] = gi
            return tuple(res)

        bw, setup = _saving_all(tan_backward)
        self.tangent_op.register_autograd(bw, setup_context=setup)
        self._tan_fn = _op_function(self.tangent_op, tan_backward)
        self._ta_fn = None  # third derivatives: none

    def _grads(self, ins: Sequence[torch.Tensor], outs: Sequence[torch.Tensor],
               grads: Sequence[torch.Tensor | None]) -> tuple:
        """One gradient per input (None for integers) from the adjoint op."""
        cts = [grads[j] if grads[j] is not None else torch.zeros_like(outs[j]) for j in self.diff_out]
        if self._plain_eager([*ins, *outs, *cts]):  # no graph of the gradient to record (no create_graph)
            g = self._adjoint_impl(ins, outs, cts)
        else:
            g = self._call(self._adj_fn, self.adjoint_op, *ins, *outs, *cts)
        res: list = [None] * len(self.inputs)
        for i, gi in zip(self.diff_in, g):
            res[i] = gi
        return tuple(res)

    def _tangents(self, ins: Sequence[torch.Tensor], dirs: Sequence[torch.Tensor | None]) -> list[torch.Tensor]:
        d = [dirs[i] if dirs[i] is not None else torch.zeros_like(ins[i]) for i in self.diff_in]
        return self._call(self._tan_fn, self.tangent_op, *ins, *d)

    @staticmethod
    def _call(fn: type | None, op: Any, *args: torch.Tensor) -> list[torch.Tensor]:
        """``op`` through its autograd.Function (torch.func transforms of its derivatives: the
        Function custom ops make for their autograd formula takes none), or the op itself under
        torch.compile (which traces the op's registered formula) or when it has no derivative."""
        if fn is None or torch.compiler.is_compiling():
            return list(op(*args))
        return list(fn.apply(*args))

    @staticmethod
    def _vmap_rule(call: Any, n: int, mutates: bool) -> Any:
        def rule(info: Any, in_dims: Sequence[int | None], *args: torch.Tensor) -> tuple:
            if mutates:
                raise KjitError("kjit: torch.func.vmap of a kernel with in/out arguments is not supported (they are "
                                "mutated in place); pass them as separate inputs and outputs")
            # The batch dim first; an unbatched operand gets a size-1 one (the launch broadcasts it),
            # so nested vmaps line every operand's batch dims up.
            moved = [(a.movedim(d, 0) if d is not None else a.unsqueeze(0)).contiguous() for a, d in zip(args, in_dims)]
            out = call(*moved)
            if out is None:
                return None, None
            return out, [0] * len(out)
        return rule

    # -- the call ---------------------------------------------------------------------------------

    def _check(self, args: Sequence[Any]) -> list[torch.Tensor]:
        if len(args) != len(self.inputs):
            names = ", ".join(p.name for p in self.inputs)
            raise ValueError(f"kernel '{self.name}': expected {len(self.inputs)} inputs ({names}), got {len(args)}")
        first = next((a for a in args if isinstance(a, torch.Tensor)), None)
        dev = first.device if first is not None else torch.device("cpu")
        lead = next((p.name for p, a in zip(self.inputs, args) if a is first), "")
        out = []
        for p, v in zip(self.inputs, args):
            role = "array argument" if p.is_array else "value argument"
            if isinstance(v, torch.Tensor):
                want = _torch_dtype(p)
                if v.dtype != want:
                    raise TypeError(f"Invalid data type for {role} '{p.name}', expected {str(want)[6:]}, got "
                                    f"{str(v.dtype)[6:]}")
                if p.is_array:
                    if v.dim() != p.jax_ndim:
                        raise TypeError(f"Invalid dimensionality for array argument '{p.name}', expected {p.jax_ndim} "
                                        f"dimensions, got {v.dim()}")
                    if p.inner and tuple(v.shape[p.ndim:]) != p.inner:
                        raise TypeError(f"Invalid inner dimensions for array argument '{p.name}', expected {p.inner}, "
                                        f"got {tuple(v.shape[p.ndim:])}")
                elif tuple(v.shape) != p.inner:
                    raise TypeError(f"Invalid shape for value argument '{p.name}', expected {p.inner} for {p.type}, "
                                    f"got {tuple(v.shape)}")
                if v.device != dev:
                    raise ValueError(f"Invalid device for {role} '{p.name}', expected {dev} (the device of '{lead}'), "
                                     f"got {v.device}")
                if not v.is_contiguous() and not _functorch_wrapped(v):
                    raise ValueError(f"{role} '{p.name}' has strides {tuple(v.stride())} for shape {tuple(v.shape)}: "
                                     f"kjit launches read dense row-major tensors; pass {p.name}.contiguous()")
                out.append(v)
            elif p.is_array:
                raise TypeError(f"Invalid type for array argument '{p.name}', expected a tensor of "
                                f"{p.dtype_name}, got {type(v).__name__}")
            else:
                out.append(self._value_tensor(p, v, dev))
        return out

    def _value_tensor(self, p: Param, v: Any, dev: torch.device) -> torch.Tensor:
        # A Python number's tensor is kept (the ops never write value operands): a loop calling
        # with the same numbers converts them once. Keyed by type too (True == 1 == 1.0).
        # Not under a mode (FakeTensorMode would make the kept tensor a fake one), a torch.func
        # transform (a tensor wrapped at its level, used after the level ends: "escaped?"), nor
        # compiling.
        key = (p.index, type(v), v, dev) if isinstance(v, (int, float, bool)) else None
        if (key is not None and not _is_compiling() and not _dispatch_modes()
                and _functorch_level() is None):
            t = self._value_cache.get(key)
            if t is None:
                if len(self._value_cache) >= 256:
                    self._value_cache.clear()
                t = self._value_cache[key] = self._new_value_tensor(p, v, dev)
            return t
        return self._new_value_tensor(p, v, dev)

    def _new_value_tensor(self, p: Param, v: Any, dev: torch.device) -> torch.Tensor:
        if not torch.compiler.is_compiling():  # exact conversion, kjit.jax's messages (NumPy: eager only)
            import numpy as np
            flat = np.asarray(v if isinstance(v, (np.ndarray, np.generic)) else np.array(v, dtype=object)).reshape(-1)
            if flat.size != p.lanes:
                raise TypeError(f"Invalid inner dimensions for static argument '{p.name}', expected {p.lanes} values "
                                f"for {p.type}, got {flat.size}")
            v = [checked_value(p, x).item() for x in flat]
            if p.inner:
                return torch.tensor(v, dtype=_torch_dtype(p), device=dev).reshape(p.inner)
            v = v[0]
        return torch.tensor(v, dtype=_torch_dtype(p), device=dev)

    @staticmethod
    def _plain_eager(ins: Sequence[torch.Tensor], grad: bool | None = None) -> bool:
        """Whether this call needs nothing of torch's machinery: eager, no derivative to record
        (no input requires grad, no forward-mode level), plain cpu/cuda tensors, no dispatch or
        function mode (FakeTensorMode, FlopCounterMode...). Then the op's implementation runs
        directly, skipping the dispatcher (the per-call overhead at small sizes). ``grad``
        False: whatever the inputs' requires_grad (the caller records the derivative)."""
        if _is_compiling() or _fwad._current_level >= 0 or _dispatch_modes() or _function_modes():
            return False
        if grad is None:
            grad = _grad_enabled()
        for t in ins:
            if type(t) is not torch.Tensor or (grad and t.requires_grad) or _wrapped(t) or t.is_meta:
                return False
        return True

    def _eager(self, args: tuple) -> Any:
        """A plain eager call (_plain_eager) whose inputs have dtypes and shapes seen before,
        launched directly: _check's per-argument checks come down to one dict lookup of those
        dtypes and shapes, the outputs' shapes and the prepared call come with it. None where
        this does not apply (first call of a layout, in/out kernels, non-cpu tensors, numbers
        not converted before, anything torch must see): the full call takes it."""
        if (len(args) != self._n_in or _is_compiling() or _fwad._current_level >= 0 or _dispatch_modes()
                or _function_modes()):
            return None
        if self._values_at:
            args = list(args)
            for i in self._values_at:
                v = args[i]
                tv = type(v)
                if tv is not torch.Tensor:
                    if tv is not float and tv is not int and tv is not bool:
                        return None
                    v = self._value_cache.get((i, tv, v, _CPU))
                    if v is None:
                        return None
                    args[i] = v
        grad = _grad_enabled()
        key: list = []
        ptrs: list = []
        for t in args:
            if (type(t) is not torch.Tensor or not t.is_cpu or not t.is_contiguous() or (grad and t.requires_grad)
                    or _wrapped(t)):
                return None
            key.append(t.dtype)
            key.append(t.shape)
            ptrs.append(t.data_ptr())
        plan = self._eager_plans.get(tuple(key))
        if plan is None:
            return None
        prepared, specs = plan
        if not self._operands_in_order:
            ptrs = [ptrs[i] for i in self._operand_order]
        if self._single:
            s, d = specs[0]
            out = torch.empty(*s, dtype=d, device=_CPU) if s else torch.empty((), dtype=d, device=_CPU)
            ptrs.append(out.data_ptr())
            prepared.launch(ptrs)
            return out
        outs = [torch.empty(*s, dtype=d, device=_CPU) if s else torch.empty((), dtype=d, device=_CPU) for s, d in specs]
        prepared.launch(ptrs + [o.data_ptr() for o in outs])
        return outs

    def _launch_plain(self, ins: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """The forward launch of checked, dense inputs on a plain eager path (no in/out
        arguments) on the cpu, through the plan of their layout, made here the first time."""
        key = tuple(x for t in ins for x in (t.dtype, t.shape))
        plan = self._eager_plans.get(key)
        if plan is None:
            outs = self._new_outputs(ins)
            operands = [ins[i] for i in self._operand_order]
            if len(self._eager_plans) >= 256:
                self._eager_plans.clear()
            plan = self._eager_plans[key] = (self._launch_fwd.prepare(operands, outs),
                                             [(tuple(o.shape), o.dtype) for o in outs])
        prepared, specs = plan
        outs = [torch.empty(*s, dtype=d, device=_CPU) if s else torch.empty((), dtype=d, device=_CPU) for s, d in specs]
        _library.run(prepared, [*[ins[i] for i in self._operand_order], *outs])
        return outs

    def __call__(self, *args: Any) -> Any:
        res = self._eager(args)
        if res is not None:
            return res
        ins = self._check(args)
        if self._plain_eager(ins):
            outs = self._forward_impl(ins)
        elif not self.backward_error and self._plain_eager(ins, grad=False):
            outs = list(self._reverse.apply(*ins))  # reverse mode only: the lighter Function
        elif not self.backward_error and not torch.compiler.is_compiling():
            outs = list(self._function.apply(*ins))  # forward mode too (torch.autograd.Function.jvp)
        else:
            outs = self.forward_op(*ins)
            outs = list(outs) if self.outputs else []
        results = [a for a, p in zip(ins, self.inputs) if p.index in self._io_index] + outs
        return results[0] if len(results) == 1 else results


def kernel(name: str, num_outputs: int = 1, launch_dims: Dims | None = None,
           output_dims: Dims | Mapping[str, Dims] | None = None, in_out_argnames: Sequence[str] = (),
           block_dim: int | None = None) -> KernelOp:
    """A kjit kernel as a torch operator (kjit.jax.jax_kernel's rules: docs/TORCH.md).

    Args:
        name: the kernel's qualified C++ name ("demo::saxpy").
        num_outputs: outputs (the last parameters), in/out arguments included.
        launch_dims: launch extent; default: the array dims of the first input array.
        output_dims: dims of the pure outputs (one shape for all, or by name); default: the
            launch dims.
        in_out_argnames: arrays the kernel updates in place (declared to torch as mutated).
        block_dim: CUDA threads per block, 1..1024 (default: the module's).
    """
    what = f"kernel('{name}')"
    sig = _library.signature(name)
    lay = make_layout(sig, num_outputs, in_out_argnames, what, frontend="torch")
    if block_dim is not None and (isinstance(block_dim, bool) or not isinstance(block_dim, int)
                                  or not 1 <= block_dim <= 1024):
        raise ValueError(f"{what}: block_dim must be an int in 1..1024, got {block_dim!r}")
    return KernelOp(sig, lay, launch_dims, output_dims, block_dim)
