"""Kernel and callable signatures as kjit.jax reads them (the shared part is kjit/_signature.py)
and the checks and shapes the shim derives from them for JAX values: dtypes, ranks, inner dims,
static values."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import jax
import numpy as np

from .._signature import (Layout, Param, Signature, array_dims, checked_value, encoded, make_layout,  # noqa: F401
                          output_shape)
from . import _library



def kernel_signature(name: str) -> Signature:
    """The signature of kernel ``name`` from the loaded libraries."""
    return Signature.from_json(_library.text(_library.lib().kjit_ffi_kernel_signature(name.encode())))


def callable_signature(name: str) -> Signature:
    """The signature of C++ callable ``name``."""
    return Signature.from_json(_library.text(_library.lib().kjit_ffi_callable_signature(name.encode())))


def check_array(p: Param, value: Any) -> None:
    """The checks the handler makes, at trace time, with the same messages (Warp's)."""
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    if dtype is None or shape is None:
        raise TypeError(f"Invalid type for array argument '{p.name}', expected an array of {p.dtype}, got "
                        f"{type(value).__name__}")
    if np.dtype(dtype) != p.dtype:
        raise TypeError(f"Invalid data type for array argument '{p.name}', expected {p.dtype}, got {np.dtype(dtype)}")
    if len(shape) != p.jax_ndim:
        raise TypeError(f"Invalid dimensionality for array argument '{p.name}', expected {p.jax_ndim} dimensions, "
                        f"got {len(shape)}")
    if p.inner and tuple(shape[p.ndim:]) != p.inner:
        raise TypeError(f"Invalid inner dimensions for array argument '{p.name}', expected {p.inner}, got "
                        f"{tuple(shape[p.ndim:])}")


def is_traced(value: Any) -> bool:
    """Whether a value argument is a JAX value (a tracer or a jax.Array), which travels as a
    buffer operand, rather than a Python or NumPy number, which becomes an attribute."""
    return isinstance(value, (jax.core.Tracer, jax.Array))


def traced_value(p: Param, value: Any) -> Any:
    """A JAX value for value parameter ``p``: its shape must be the element's (``()`` for a
    scalar, ``(3,)`` for a vec3, ``(3, 3)`` for a mat33) and its dtype ``p.dtype``. A weakly
    typed value (a Python number that jit turned into an argument) takes ``p.dtype``, as a
    static number would; any other dtype is an error, as for arrays."""
    import jax.numpy as jnp

    shape = tuple(getattr(value, "shape", ()))
    if shape != p.inner:
        raise TypeError(f"Invalid shape for traced argument '{p.name}', expected {p.inner} for {p.type}, got {shape}")
    dtype = np.dtype(value.dtype)
    if dtype != p.dtype:
        widens = dtype.kind == p.dtype.kind or (dtype.kind in "iu" and p.dtype.kind in "iuf")
        if not getattr(jax.typeof(value), "weak_type", False) or not widens:
            raise TypeError(f"Invalid data type for traced argument '{p.name}', expected {p.dtype}, got {dtype}")
        value = jnp.asarray(value, p.dtype)
    return value


def static_attribute(p: Param, value: Any) -> np.generic | np.ndarray:
    """A static value as the typed attribute the handler reads (exact dtype; 16-bit floats as
    uint16 bits; a uint64 scalar as a 1-element array, which JAX encodes beyond INT64_MAX)."""
    if isinstance(value, jax.core.Tracer):
        raise ValueError(f"Argument '{p.name}' must be a static value (a Python or NumPy number), not a traced "
                         "array: static arguments are compiled into the call as attributes")
    # Python numbers stay exact (an object array): a list mixing 0 and 2**64 - 1 would
    # otherwise become float64 and lose the low bits.
    arr = value if isinstance(value, (np.ndarray, np.generic)) else np.array(value, dtype=object)
    arr = np.asarray(arr)
    if p.lanes == 1:
        if arr.shape not in ((), (1,)):
            raise TypeError(f"Invalid value for static argument '{p.name}', expected one {p.dtype}, got shape {arr.shape}")
        one = np.array([checked_value(p, arr.reshape(-1)[0])], dtype=p.dtype)
        enc = encoded(p, one)
        return enc if p.dtype == np.uint64 else enc[0]
    flat = arr.reshape(-1)
    if flat.size != p.lanes:
        raise TypeError(f"Invalid inner dimensions for static argument '{p.name}', expected {p.lanes} values for "
                        f"{p.type}, got {flat.size}")
    return encoded(p, np.array([checked_value(p, v) for v in flat], dtype=p.dtype))


def output_type(p: Param, dims: Any) -> jax.ShapeDtypeStruct:
    """The JAX type of output ``p`` for array dims ``dims`` (inner dims may be included)."""
    return jax.ShapeDtypeStruct(output_shape(p, dims), p.dtype)


@dataclasses.dataclass(frozen=True)
class Group:
    """One kernel parameter as a caller passes it: a parameter, or a value struct whose leaves
    (its fields, a nested struct's fields in its place) the library flattened into parameters
    of their own (``params``, depth first in field order)."""

    name: str
    params: tuple[Param, ...]
    struct: str | None = None  # the struct's name, for a flattened struct


def _path(p: Param) -> tuple[str, ...]:
    """The field names from the struct parameter down to leaf ``p`` (one for a direct field)."""
    f = p.field_of
    return tuple(f.get("path") or (f["field"],))


def input_groups(inputs: tuple[Param, ...]) -> tuple[Group, ...]:
    """The kernel parameters among ``inputs``: consecutive leaves of one struct form one group."""
    groups: list[Group] = []
    for p in inputs:
        f = p.field_of
        if f is not None and groups and groups[-1].struct is not None and groups[-1].name == f["param"]:
            groups[-1] = Group(f["param"], (*groups[-1].params, p), f["struct"])
        else:
            groups.append(Group(p.name, (p,)) if f is None else Group(f["param"], (p,), f["struct"]))
    return tuple(groups)


def struct_fields(kernel: str, g: Group, value: Any) -> list[Any]:
    """The values of struct parameter ``g``'s leaves, in order, from a dict of its fields (or a
    tuple in field order), a nested struct's fields as a dict (or tuple) of their own: each array
    checked (dtype, dims; None is an empty array, an absent optional one), each plain field a
    static value (a number) or a traced one (a JAX value, checked as a value parameter's). Errors
    name the kernel, the parameter and the field's path from it."""
    what = f"kernel '{kernel}': parameter '{g.name}' (struct {g.struct})"
    out: list[Any] = []
    _struct_leaves(what, g.params, 0, value, out)
    return out


def _struct_leaves(what: str, params: tuple[Param, ...], depth: int, value: Any, out: list[Any]) -> None:
    """Appends to ``out`` the leaves of the (sub)struct at ``depth`` whose leaves are ``params``."""
    import jax.numpy as jnp

    prefix = ".".join(_path(params[0])[:depth])
    where = what if depth == 0 else f"{what}, field '{prefix}' (struct {params[0].field_of['structs'][depth]})"
    full = (lambda n: f"{prefix}.{n}") if depth else (lambda n: n)
    names = list(dict.fromkeys(_path(p)[depth] for p in params))
    listed = ", ".join(names)
    if isinstance(value, Mapping):
        missing = [full(n) for n in names if n not in value]
        extra = [full(str(k)) for k in value if k not in names]
        if missing:
            raise ValueError(f"{where}: missing field {', '.join(repr(n) for n in missing)} (its fields: {listed})")
        if extra:
            raise ValueError(f"{where}: no field named {', '.join(repr(n) for n in extra)} (its fields: {listed})")
        values = [value[n] for n in names]
    elif isinstance(value, (tuple, list)):
        if len(value) != len(names):
            raise ValueError(f"{where}: expected its {len(names)} fields ({listed}) in order, got {len(value)} values")
        values = list(value)
    else:
        raise TypeError(f"{where}: expected a dict of its fields ({listed}) or a tuple of them in that order, got "
                        f"{type(value).__name__}")
    for name, v in zip(names, values):
        sub = tuple(p for p in params if _path(p)[depth] == name)
        p = sub[0]
        if len(_path(p)) > depth + 1:  # a nested struct
            _struct_leaves(what, sub, depth + 1, v, out)
            continue
        field = f"{what}, field '{full(name)}'"
        if p.is_array:
            if v is None:
                v = jnp.zeros((0,) * p.ndim + p.inner, p.dtype)
            try:
                check_array(p, v)
            except TypeError as e:
                raise TypeError(f"{field}: {e}") from None
        elif is_traced(v):  # an operand, as a traced value parameter of its own is
            try:
                v = traced_value(p, v)
            except TypeError as e:
                raise TypeError(f"{field}: {e}") from None
        elif isinstance(v, Mapping):
            raise TypeError(f"{field}: expected a {p.type} value, got a dict (it is a plain field, not a struct)")
        out.append(v)
