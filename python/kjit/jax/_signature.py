"""Kernel and callable signatures (read from libkjit as JSON) and the checks and shapes the
shim derives from them: inputs vs outputs, dtypes, ranks, inner dims, static values."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np

from . import _library


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
    import jax.numpy as jnp

    return np.dtype(getattr(jnp, name)) if name == "bfloat16" else np.dtype(name)


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
            )
            for i, p in enumerate(j["params"])
        )
        return Signature(j["name"], params, int(j.get("launch_ndim", 0)), bool(j.get("has_adjoint", False)),
                         str(j.get("adjoint_error", "")), j)


def kernel_signature(name: str) -> Signature:
    """The signature of kernel ``name`` from the loaded libraries."""
    return Signature.from_json(_library.text(_library.lib().kjit_ffi_kernel_signature(name.encode())))


def callable_signature(name: str) -> Signature:
    """The signature of C++ callable ``name``."""
    return Signature.from_json(_library.text(_library.lib().kjit_ffi_callable_signature(name.encode())))


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


def make_layout(sig: Signature, num_outputs: int, in_out_argnames: Sequence[str], what: str) -> Layout:
    """Splits ``sig`` into inputs and outputs, raising precise errors for impossible splits."""
    for p in sig.params:
        if p.struct is not None:
            raise TypeError(f"{what}: parameter '{p.name}' ({p.type}) {'holds' if p.is_array else 'is'} struct "
                            f"{p.struct.get('name', p.type)}: structs are not supported from JAX (XLA has no struct "
                            "data type); pass the fields as separate arrays or values")
        if not p.supported:
            raise TypeError(f"{what}: parameter '{p.name}' ({p.type}) cannot be passed through the XLA FFI")
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


def _checked_value(p: Param, v: Any) -> Any:
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


def _encoded(p: Param, values: np.ndarray) -> np.ndarray:
    """``values`` (of ``p.dtype``) as an attribute XLA's FFI decodes: 16-bit floats as their
    uint16 bits (XLA has no 16-bit float attributes; the handler takes the bits)."""
    if p.dtype.name in ("float16", "bfloat16"):
        return values.view(np.uint16)
    return values


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
        one = np.array([_checked_value(p, arr.reshape(-1)[0])], dtype=p.dtype)
        enc = _encoded(p, one)
        return enc if p.dtype == np.uint64 else enc[0]
    flat = arr.reshape(-1)
    if flat.size != p.lanes:
        raise TypeError(f"Invalid inner dimensions for static argument '{p.name}', expected {p.lanes} values for "
                        f"{p.type}, got {flat.size}")
    return _encoded(p, np.array([_checked_value(p, v) for v in flat], dtype=p.dtype))


def output_type(p: Param, dims: Any) -> jax.ShapeDtypeStruct:
    """The JAX type of output ``p`` for array dims ``dims`` (inner dims may be included)."""
    if isinstance(dims, (int, np.integer)):
        dims = (int(dims),)
    dims = tuple(int(d) for d in dims)
    if len(dims) == p.ndim:
        return jax.ShapeDtypeStruct(dims + p.inner, p.dtype)
    if p.inner and len(dims) == p.jax_ndim and dims[p.ndim:] == p.inner:
        return jax.ShapeDtypeStruct(dims, p.dtype)
    raise ValueError(f"Invalid output dimensions for argument '{p.name}': {dims} (expected {p.ndim} array dims"
                     + (f", optionally followed by {p.inner}" if p.inner else "") + ")")


def array_dims(p: Param, shape: Sequence[int]) -> tuple[int, ...]:
    """The array dims of a JAX shape (without the element's inner dims)."""
    return tuple(int(d) for d in shape[: p.ndim])
