"""The torch.autograd.Functions of kjit.torch's kernels: the kernel's own (forward, adjoint as
backward, tangent as jvp), its lighter reverse-only twin for plain eager calls, and those of
the derivative ops (whose autograd formulas torch.func cannot take from a custom op)."""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING, Any

import torch

from .._libkjit import KjitError

if TYPE_CHECKING:
    from ._kernel import KernelOp


def _saving_all(backward: Any) -> tuple:
    """register_autograd's (backward, setup_context) for a formula over every input of the op."""
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        ctx.save_for_backward(*inputs)

    return (lambda ctx, grads: backward(ctx.saved_tensors, grads)), setup_context


def _op_function(op: Any, backward: Any, jvp: Any = None) -> type:
    """A torch.autograd.Function over ``op`` whose backward is ``backward(saved inputs, grads)``,
    whose jvp (if any) is ``jvp(inputs, tangents)`` and whose vmap comes from the op's batching
    rule."""
    class OpFn(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(*args: torch.Tensor) -> tuple:
            return tuple(op(*args))

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
            ctx.save_for_backward(*inputs)
            ctx.save_for_forward(*inputs)

        @staticmethod
        def backward(ctx: Any, *grads: torch.Tensor | None) -> tuple:
            return backward(ctx.saved_tensors, grads)

        @staticmethod
        def jvp(ctx: Any, *tangents: torch.Tensor | None) -> tuple:
            if jvp is None:
                raise KjitError("kjit: forward over forward mode (torch.func.jacfwd of jacfwd, jvp of jvp) needs "
                                "second-order tangents, which kjit does not generate; take second derivatives with "
                                "reverse mode on one side (torch.func.hessian, jacrev of jacrev, jacfwd of jacrev)")
            return tuple(jvp(ctx.saved_tensors, tangents))

    _bind_once(OpFn)
    return OpFn


def _make_function(k: KernelOp) -> type:
    """The torch.autograd.Function of ``k``: forward is its forward op, backward the adjoint op,
    jvp the tangent op; vmap comes from the ops' own batching rules (generate_vmap_rule)."""
    n_in = len(k.inputs)
    int_outs = [j for j, p in enumerate(k.outputs) if not p.differentiable]

    class Fn(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(*ins: torch.Tensor) -> tuple:
            # Plain tensors (no torch.func wrapper, no mode): the launch itself, as in a plain
            # eager call; the dispatcher would only come back to it.
            return tuple(k._forward_impl(ins) if k._plain_eager(ins) else k.forward_op(*ins))

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
            # The same tensors for both: torch.func's generated vmap rule keeps the batch dims
            # of the last save only, which backward then pairs with saved_tensors (jacrev of
            # jacfwd failed with "flat_bdims must not be None" when they differed).
            ctx.save_for_backward(*inputs, *output)
            ctx.save_for_forward(*inputs, *output)
            if int_outs:
                ctx.mark_non_differentiable(*(output[j] for j in int_outs))

        @staticmethod
        def backward(ctx: Any, *grads: torch.Tensor | None) -> tuple:
            saved = ctx.saved_tensors
            return k._grads(saved[:n_in], saved[n_in:], grads)

        @staticmethod
        def jvp(ctx: Any, *dirs: torch.Tensor | None) -> tuple:
            ins = ctx.saved_tensors[:n_in]
            t = dict(zip(k.diff_out, k._tangents(ins, dirs)))
            return tuple(t.get(j) for j in range(len(k.outputs)))

    Fn.__name__ = Fn.__qualname__ = "kjit_" + re.sub(r"\W", "_", k.name)
    _bind_once(Fn)
    return Fn


def _make_reverse_function(k: KernelOp) -> type:
    """The torch.autograd.Function of ``k`` for an eager call on plain tensors with no forward
    mode level: _make_function's forward and backward, in the form without setup_context, which
    torch applies in half the time (no argument binding per call) but no torch.func transform
    takes (KernelOp.__call__ picks it only where none is active)."""
    n_in = len(k.inputs)
    int_outs = [j for j, p in enumerate(k.outputs) if not p.differentiable]

    class Reverse(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *ins: torch.Tensor) -> tuple:
            outs = k._forward_impl(ins)
            ctx.save_for_backward(*ins, *outs)
            if int_outs:
                ctx.mark_non_differentiable(*(outs[j] for j in int_outs))
            return tuple(outs)

        @staticmethod
        def backward(ctx: Any, *grads: torch.Tensor | None) -> tuple:
            saved = ctx.saved_tensors
            return k._grads(saved[:n_in], saved[n_in:], grads)

    Reverse.__name__ = Reverse.__qualname__ = "kjit_reverse_" + re.sub(r"\W", "_", k.name)
    return Reverse


def _bind_once(fn: type) -> None:
    """Gives a setup_context Function's forward its signature, which torch would otherwise
    compute (inspect.signature) at every apply to bind the arguments."""
    forward = fn.__dict__["forward"].__func__
    forward.__signature__ = inspect.signature(forward)
