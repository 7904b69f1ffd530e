"""What differs between the JAX versions kjit.jax supports, in one place. The suite tests the
oldest, JAX 0.7.2, and the newest, JAX 0.12.0.1 (which needs Python >= 3.12); versions between
are not tested."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

# Inside shard_map, an array's type says over which mesh axes its value varies. JAX 0.7 gives
# an ffi_call's results the varying axes of its operands (its aval's ``vma``); JAX 0.10 and later
# take them from the result types (ShapeDtypeStruct's manual_axis_type), and then insist that a
# gradient's type matches its primal's. There the results must be typed explicitly.
_TYPED_RESULTS = "manual_axis_type" in inspect.signature(jax.ShapeDtypeStruct).parameters


def _manual(x: Any) -> Any:
    return getattr(jax.typeof(x), "manual_axis_type", None)


def _typed(t: jax.ShapeDtypeStruct, mat: Any, like: Any) -> jax.ShapeDtypeStruct:
    # A manual axis type needs the (abstract) mesh it refers to: the operand's, replicated.
    if mat is None or not mat.varying:
        return t
    mesh = jax.typeof(like).sharding.mesh
    return jax.ShapeDtypeStruct(t.shape, t.dtype, sharding=jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec()),
                                manual_axis_type=mat)


def typed_like(types: Sequence[jax.ShapeDtypeStruct], operands: Sequence[Any]) -> list[jax.ShapeDtypeStruct]:
    """The result types of an ffi_call over ``operands``: varying over every mesh axis one of
    the operands varies over (the kernel mixes them all), as JAX 0.7 types them itself."""
    if not _TYPED_RESULTS:
        return list(types)
    varying: set[str] = set()
    like = None
    for x in operands:
        m = _manual(x)
        if m is not None and m.varying:
            varying |= m.varying
            like = x
    if not varying:
        return list(types)
    mat = jax.sharding.ManualAxisType(varying=frozenset(varying))
    return [_typed(t, mat, like) for t in types]


def _aval_varying(a: Any) -> frozenset:
    m = getattr(a, "manual_axis_type", None)
    if m is not None:
        return frozenset(m.varying)
    return frozenset(getattr(a, "vma", None) or ())


def aval_like(avals: Sequence[Any], shape: Sequence[int], dtype: Any) -> Any:
    """An abstract value of ``shape`` and ``dtype`` typed like the operand among ``avals`` that
    varies over the most mesh axes (kjit's primitives: their results vary like their operands,
    which vary_together made agree; outside shard_map, a plain array type). A call without
    operands (a kernel whose only arrays are outputs, sized by launch_dims) varies over nothing."""
    if not avals:
        return jax.core.ShapedArray(tuple(int(d) for d in shape), np.dtype(dtype))
    ref = max(avals, key=lambda a: len(_aval_varying(a)))
    kw: dict[str, Any] = {"weak_type": False}
    if hasattr(ref, "layout"):  # JAX 0.12: an operand's layout is its own; a result's the default
        kw["layout"] = jax.typeof(np.zeros((), np.float32)).layout
    return ref.update(shape=tuple(int(d) for d in shape), dtype=np.dtype(dtype), **kw)


def typed_as(types: Sequence[jax.ShapeDtypeStruct], primals: Sequence[Any]) -> list[jax.ShapeDtypeStruct]:
    """Gradient types: each typed as its primal (what JAX 0.10 and later check)."""
    if not _TYPED_RESULTS:
        return list(types)
    return [_typed(t, _manual(p), p) for t, p in zip(types, primals)]


def _varying(x: Any) -> frozenset:
    """The mesh axes over which ``x`` varies inside shard_map (none outside): JAX 0.10 and
    later's manual_axis_type, JAX 0.7's vma."""
    m = _manual(x)
    if m is not None:
        return frozenset(m.varying)
    return frozenset(getattr(jax.typeof(x), "vma", None) or ())


def vary_together(operands: Sequence[Any]) -> list[Any]:
    """The operands of one kernel call, each varying over every mesh axis one of them varies
    over. A replicated operand beside sharded ones (a traced scalar, an unsharded array) is cast
    to varying, as jax.numpy does when it mixes them: its cotangent, which the kernel sums over
    this shard's threads, is then summed over the mesh by JAX's transpose of the cast (psum),
    instead of passing one shard's sum off as the whole. Nothing changes outside shard_map."""
    axes = frozenset().union(*(_varying(x) for x in operands)) if operands else frozenset()
    if not axes:
        return list(operands)
    out = []
    for x in operands:
        missing = tuple(sorted(axes - _varying(x)))
        if not missing:
            out.append(x)
        elif hasattr(jax.lax, "pcast"):  # JAX 0.10 and later
            out.append(jax.lax.pcast(x, missing, to="varying"))
        else:  # JAX 0.7
            out.append(jax.lax.pvary(x, missing))
    return out
