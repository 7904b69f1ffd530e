"""Kernel signatures (read from libkjit as JSON) and what every framework shim derives from them
(kjit.jax, kjit.torch): parameters, the split into inputs and outputs, exact conversion of
value arguments, output shapes. NumPy only: importing it imports no framework."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True)
class Param:
    """One parameter: an array (``ndim`` > 0) or a static value."""

    index: int
    name: str
    kind: str  # "array" or "value"
    type: str  # kjit's name: "array1d<vec3f>", "float32", ...
    ndim: int
    dtype: np.dtype
    inner: tuple[int, ...]
    differentiable: bool
    supported: bool
    loads: bool = False
    stores: bool = False
    accumulates: bool = False
    other_atomics: bool = False
    struct: Mapping[str, Any] | None = None  # a KJIT_STRUCT's layout: name, size, align, fields
    dtype_name: str = ""  # the signature's dtype name ("float32", "bfloat16"; "" for a struct)
    #: A leaf of a value struct parameter the library flattened into its leaves (kjit.jax
    #: passes them): param (the parameter's name), index (its place), field (the dotted path
    #: below it), path (the same as a list), struct (its name), structs (the struct holding
    #: each step of the path, the outermost first).
    field_of: Mapping[str, Any] | None = None

    @property
    def is_array(self) -> bool:
        return self.kind == "array"

    @property
    def jax_ndim(self) -> int:
        """Rank of the JAX array: array dims plus the element's inner dims."""
        return self.ndim + len(self.inner)

    @property
    def lanes(self) -> int:
        return int(np.prod(self.inner)) if self.inner else 1


def _dtype(p: Mapping[str, Any]) -> np.dtype:
    """A parameter's element dtype; a struct (no XLA dtype) is opaque bytes of its size."""
    name = p["dtype"]
    if name is None:
        return np.dtype(f"V{max(int((p.get('struct') or {}).get('size', 1)), 1)}")
    if name == "bfloat16":
        try:  # what jax.numpy.bfloat16 is; absent where JAX is not installed (kjit.torch alone)
            import ml_dtypes
            return np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            return np.dtype(np.uint16)  # only its size is used then: kjit.torch maps by dtype_name
    return np.dtype(name)


@dataclasses.dataclass(frozen=True)
class Signature:
    """A kernel's (or callable's) parameters and properties."""

    name: str
    params: tuple[Param, ...]
    launch_ndim: int
    has_adjoint: bool
    adjoint_error: str
    raw: Mapping[str, Any]

    @staticmethod
    def from_json(text: str) -> "Signature":
        j = json.loads(text)
        params = tuple(
            Param(
                index=i,
                name=p["name"],
                kind=p["kind"],
                type=p["type"],
                ndim=int(p["ndim"]),
                dtype=_dtype(p),
                inner=tuple(int(d) for d in p["inner"]),
                differentiable=bool(p["differentiable"]),
                supported=bool(p.get("supported", True)),
                loads=bool(p.get("loads", False)),
                stores=bool(p.get("stores", False)),
                accumulates=bool(p.get("accumulates", False)),
                other_atomics=bool(p.get("other_atomics", False)),
                struct=p.get("struct"),
                dtype_name=p["dtype"] or "",
                field_of=p.get("field_of"),
            )
            for i, p in enumerate(j["params"])
        )
        return Signature(j["name"], params, int(j.get("launch_ndim", 0)), bool(j.get("has_adjoint", False)),
                         str(j.get("adjoint_error", "")), j)


@dataclasses.dataclass(frozen=True)
class Layout:
    """How a signature splits into JAX inputs and outputs (Warp's rules): the last
    ``num_outputs - len(in_out)`` parameters are pure outputs (arrays); in/out arrays are
    inputs whose updated values are also outputs, aliased to their input buffers."""

    inputs: tuple[Param, ...]
    outputs: tuple[Param, ...]  # pure outputs
    in_out: tuple[Param, ...]

    @property
    def array_inputs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.inputs if p.is_array)

    @property
    def statics(self) -> tuple[Param, ...]:
        return tuple(p for p in self.inputs if not p.is_array)

    @property
    def input_output_aliases(self) -> dict[int, int]:
        """Operand index (among array inputs) -> result index."""
        arrays = self.array_inputs
        return {arrays.index(p): r for r, p in enumerate(self.in_out)}


def check_passable(sig: Signature, what: str, frontend: str) -> None:
    """Raises a precise error for a parameter that cannot travel through kjit's FFI from
    ``frontend`` (structs but a JAX value struct of arrays and values, unsupported types)."""
    for p in sig.params:
        if p.field_of is not None and frontend != "JAX":
            f = p.field_of
            raise TypeError(f"{what}: parameter '{f['param']}' is struct {f['struct']}: structs are not supported "
                            f"from {frontend} (kjit's FFI has no struct data type); pass the fields as separate "
                            "arrays or values")
        if p.struct is not None:
            why = ("XLA has no struct data type; only a value struct of arrays, plain values and such structs "
                   "passes, as a dict of its fields") if frontend == "JAX" else "kjit's FFI has no struct data type"
            raise TypeError(f"{what}: parameter '{p.name}' ({p.type}) {'holds' if p.is_array else 'is'} struct "
                            f"{p.struct.get('name', p.type)}: structs are not supported from {frontend} ({why}); "
                            "pass the fields as separate arrays or values")
        if not p.supported:
            raise TypeError(f"{what}: parameter '{p.name}' ({p.type}) cannot be passed through the XLA FFI")


def make_layout(sig: Signature, num_outputs: int, in_out_argnames: Sequence[str], what: str,
                frontend: str = "JAX") -> Layout:
    """Splits ``sig`` into inputs and outputs, raising precise errors for impossible splits
    (``frontend`` names the caller's framework in messages)."""
    check_passable(sig, what, frontend)
    names = list(in_out_argnames or ())
    if len(set(names)) != len(names):
        raise ValueError(f"{what}: in_out_argnames must not contain duplicate names")
    if num_outputs < 1:
        raise ValueError(f"{what}: at least one output is required")
    n = len(sig.params)
    if num_outputs > n:
        raise ValueError(f"{what}: num_outputs={num_outputs} exceeds the {n} parameters")
    if num_outputs < len(names):
        raise ValueError(f"{what}: num_outputs={num_outputs} is smaller than the number of in_out_argnames")
    num_inputs = n - num_outputs + len(names)
    inputs, outputs = sig.params[:num_inputs], sig.params[num_inputs:]
    by_name = {p.name: p for p in sig.params}
    for name in names:
        if name not in by_name:
            raise ValueError(f"{what}: in_out_argnames: '{name}' is not a parameter ({', '.join(by_name)})")
        p = by_name[name]
        if not p.is_array:
            raise ValueError(f"{what}: in/out argument '{name}' must be an array")
        if p.index >= num_inputs:
            raise ValueError(f"{what}: expected an output-only argument for '{name}': in/out arguments must come "
                             "before the output-only ones")
    for p in outputs:
        if not p.is_array:
            raise TypeError(f"{what}: all output arguments must be arrays; '{p.name}' is a {p.type}")
    in_out = tuple(p for p in inputs if p.name in names)
    return Layout(tuple(inputs), tuple(outputs), in_out)


def checked_value(p: Param, v: Any) -> Any:
    """One static value converted exactly to ``p.dtype``: integers and bools in range, floats
    finite unless given as inf or nan. Errors name the argument."""
    dt = p.dtype
    v = v.item() if isinstance(v, np.generic) and dt.name != "bfloat16" else v  # messages show 300, not np.int64(300)
    if dt.kind == "b":
        if not isinstance(v, (bool, np.bool_)) and v not in (0, 1):
            raise ValueError(f"Invalid value for static argument '{p.name}': {v!r} is not a bool")
        return np.bool_(v)
    if dt.kind in "iu":
        if isinstance(v, (float, np.floating)) and not float(v).is_integer():
            raise TypeError(f"Invalid value for static argument '{p.name}', {v!r} is not exactly a {dt}")
        try:
            iv = int(v)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"Invalid value for static argument '{p.name}', {v!r} is not exactly a {dt}") from None
        info = np.iinfo(dt)
        if not info.min <= iv <= info.max:
            raise ValueError(f"Invalid value for static argument '{p.name}': {v!r} is out of range for {dt} "
                             f"({info.min}..{info.max})")
        return dt.type(iv)
    fv = float(v)
    with np.errstate(over="ignore"):
        cv = dt.type(fv)
    if np.isinf(cv) and np.isfinite(fv):
        raise ValueError(f"Invalid value for static argument '{p.name}': {v!r} is out of range for {dt}")
    return cv


def encoded(p: Param, values: np.ndarray) -> np.ndarray:
    """``values`` (of ``p.dtype``) as an attribute XLA's FFI decodes: 16-bit floats as their
    uint16 bits (XLA has no 16-bit float attributes; the handler takes the bits)."""
    if p.dtype.name in ("float16", "bfloat16"):
        return values.view(np.uint16)
    return values


def output_shape(p: Param, dims: Any) -> tuple[int, ...]:
    """The shape of output ``p`` for array dims ``dims`` (inner dims may be included)."""
    if isinstance(dims, (int, np.integer)):
        dims = (int(dims),)
    dims = tuple(int(d) for d in dims)
    if len(dims) == p.ndim:
        return dims + p.inner
    if p.inner and len(dims) == p.jax_ndim and dims[p.ndim:] == p.inner:
        return dims
    raise ValueError(f"Invalid output dimensions for argument '{p.name}': {dims} (expected {p.ndim} array dims"
                     + (f", optionally followed by {p.inner}" if p.inner else "") + ")")


def array_dims(p: Param, shape: Sequence[int]) -> tuple[int, ...]:
    """The array dims of a JAX shape (without the element's inner dims)."""
    return tuple(int(d) for d in shape[: p.ndim])
