"""kjit.arrays — kjit kernels launched in place on any array that describes its own memory, as
``wp.launch`` takes them: NumPy's ``__array_interface__`` on the cpu, ``__cuda_array_interface__``
(CuPy, Numba, PyTorch's CUDA tensors) on CUDA. Pure Python over libkjit.so (ctypes); needs NumPy
only::

    import kjit.arrays as ka
    ka.load("build/lib/libwarp_cupy_interop.so")
    ka.launch("warp_cupy::saxpy", dim=n, inputs=[x, y, 2.0])   # y = 2 x + y, in place

Every array is the caller's memory: the kernel reads and writes it where it lies, with no copy
(so arrays must be row-major and contiguous, and writable where the kernel writes). Forward
launches only: gradients from Python go through kjit.jax or kjit.torch (docs/ARRAYS.md).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _launch
from ._libkjit import KjitError
from ._signature import Param, check_passable, checked_value, encoded

__all__ = ["KjitError", "kernels", "launch", "load"]

_WHO = "kjit.arrays"
#: Prepared calls by kernel, device and the arrays' layout (bounded: a new layout past it clears).
_plans: dict[tuple, tuple[_launch.Prepared, list[ctypes.Array]]] = {}
_MAX_PLANS = 1024
#: Held while a launch writes its values into its plan's attributes and launches (the handler
#: copies them into the launch's own parameters): launches from several threads share plans.
_values_lock = threading.Lock()


def load(path: str, kjit_library: str | None = None) -> None:
    """Loads a kernel library built with kjit (its kernels register themselves) and the
    libkjit.so it uses (found as kjit.jax finds it: docs/JAX.md, *Finding libkjit.so*)."""
    _launch.load(path, kjit_library, _WHO)


def kernels() -> list[dict[str, Any]]:
    """The signatures of every kernel the loaded libraries define."""
    return _launch.kernels(_WHO)


def _contiguous(shape: tuple[int, ...], strides: Sequence[int] | None, itemsize: int) -> bool:
    if strides is None:
        return True
    expected = itemsize
    for extent, stride in zip(reversed(shape), reversed(tuple(strides))):
        if extent > 1 and stride != expected:
            return False
        expected *= extent
    return True


def _array(what: str, p: Param, obj: Any) -> tuple[str | None, int, tuple[int, ...], Any]:
    """Argument ``obj`` for array parameter ``p``: (its CUDA device ordinal as "cuda:N", or None
    on the cpu; its data pointer; its shape; its CUDA stream or None), checked against ``p``."""
    cai = getattr(obj, "__cuda_array_interface__", None)
    iface = cai if cai is not None else getattr(obj, "__array_interface__", None)
    arg = f"{what}: argument '{p.name}' ({p.type})"
    if iface is None:
        raise TypeError(f"{arg}: a {type(obj).__name__} is no array: it has neither __array_interface__ nor "
                        "__cuda_array_interface__")
    dtype = np.dtype(iface["typestr"])
    if dtype != p.dtype:
        # A type the interface's typestr cannot name (ml_dtypes' bfloat16 is "<V2") is taken by
        # the array's own dtype name, where it has one, and its size.
        named = str(getattr(obj, "dtype", ""))
        if named != p.dtype_name or dtype.itemsize != p.dtype.itemsize:
            raise TypeError(f"{arg}: expected elements of {p.dtype_name}, got {named or dtype.name}")
        dtype = p.dtype
    shape = tuple(int(d) for d in iface["shape"])
    rank = p.ndim + len(p.inner)
    if len(shape) != rank or shape[p.ndim:] != p.inner:
        want = f"{p.ndim} array dims" + (f" then the element's {p.inner}" if p.inner else "")
        raise ValueError(f"{arg}: expected shape of {want}, got {shape}")
    if not _contiguous(shape, iface.get("strides"), dtype.itemsize):
        raise ValueError(f"{arg}: its memory is not row-major and contiguous (strides {tuple(iface['strides'])}); "
                         "a launch reads and writes the caller's memory in place, so it takes no copy: pass a "
                         "contiguous array (np.ascontiguousarray makes one) and read the result from it")
    if iface.get("mask") is not None:
        raise ValueError(f"{arg}: a masked array is not supported")
    pointer, readonly = iface["data"]
    if readonly and (p.stores or p.accumulates or p.other_atomics):
        raise ValueError(f"{arg}: the array is read-only, and the kernel writes it")
    device = None
    if cai is not None:
        ordinal = getattr(getattr(obj, "device", None), "id", 0)
        device = f"cuda:{int(ordinal)}"
    return device, int(pointer or 0), shape, cai.get("stream") if cai is not None else None


def _value_bytes(what: str, p: Param, v: Any) -> bytes:
    """Value argument ``v`` for parameter ``p``, converted exactly (errors name it), as the bytes
    of its static attribute."""
    if p.inner:
        lanes = np.asarray(v, dtype=object)
        if lanes.shape != p.inner:
            raise ValueError(f"{what}: argument '{p.name}' ({p.type}): expected {p.inner} values, got shape "
                             f"{lanes.shape}")
        values = np.array([checked_value(p, x) for x in lanes.reshape(-1)], dtype=p.dtype)
    else:
        values = np.array([checked_value(p, v)], dtype=p.dtype)
    return encoded(p, values).tobytes()


class _Kernel:
    """What every launch of one kernel needs from its signature, read once."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.what = f"kjit.arrays.launch('{name}')"
        self.sig = _launch.signature(name, _WHO)
        check_passable(self.sig, self.what, "kjit.arrays")
        self.params = self.sig.params
        self.arrays = [p for p in self.params if p.is_array]
        self.values = [p for p in self.params if not p.is_array]
        #: Whether each array is written (stores or atomics): passed as in/out, so that the
        #: kernel writes through the caller's memory (a pure output would be cleared first).
        self.written = [p.stores or p.accumulates or p.other_atomics for p in self.arrays]
        #: A value's bytes by (parameter, type, value): a frame's unchanged values convert once.
        self.value_bytes: dict[tuple, bytes] = {}

    def converted(self, p: Param, v: Any) -> bytes:
        key = (p.index, type(v), v) if isinstance(v, (int, float, np.generic)) else None
        data = self.value_bytes.get(key) if key is not None else None
        if data is None:
            data = _value_bytes(self.what, p, v)
            if key is not None:
                if len(self.value_bytes) >= 256:
                    self.value_bytes.clear()
                self.value_bytes[key] = data
        return data

    def plan(self, device: str, shapes: tuple, dims: tuple[int, ...], block_dim: int | None, stream: Any
             ) -> tuple[_launch.Prepared, list[ctypes.Array]]:
        """The prepared call for arrays of ``shapes`` on ``device`` (cached), and the memory of
        each value parameter's attribute."""
        key = (self.name, device, shapes, dims, block_dim, stream)
        plan = _plans.get(key)
        if plan is not None:
            return plan
        items: dict[str, list[int]] = {"kjit_launch_dims": list(dims)}
        if block_dim is not None:
            items["kjit_block_dim"] = [int(block_dim)]
        if any(self.written):
            items["kjit_in_out"] = [p.index for p, w in zip(self.arrays, self.written) if w]
        attrs = _launch.Attrs(items, {p.name: _launch.static_value(p) for p in self.values})
        layout = [(_launch.XLA_CODES[p.dtype_name], shape) for p, shape in zip(self.arrays, shapes)]
        layout += [(_launch.XLA_CODES[p.dtype_name], shape)
                   for p, shape, w in zip(self.arrays, shapes, self.written) if w]
        cuda_stream = None if device == "cpu" else (lambda: stream)
        prepared = _launch.Prepared(self.name.encode(), False, attrs, device, len(self.arrays), layout, cuda_stream)
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        plan = _plans[key] = (prepared, [attrs.values[p.name] for p in self.values])
        return plan


_kernels: dict[str, _Kernel] = {}
_buffer_at = ctypes.c_char.from_buffer
_address = ctypes.addressof
_ndarray = np.ndarray


def _numpy_array(p: Param, a: np.ndarray) -> tuple[int, tuple[int, ...]] | None:
    """A writable, contiguous NumPy array of ``p``'s type and shape: (its address, its shape)
    without reading its interface; None for anything else (the general path checks it and
    says what is wrong)."""
    flags = a.flags
    if a.dtype != p.dtype or not flags.c_contiguous or not flags.writeable or a.size == 0:
        return None
    shape = a.shape
    if len(shape) != p.ndim + len(p.inner) or (p.inner and shape[p.ndim:] != p.inner):
        return None
    try:
        return _address(_buffer_at(a)), shape
    except (TypeError, ValueError):  # a type the buffer protocol cannot name (ml_dtypes' bfloat16)
        return None


def launch(kernel: str, dim: int | Sequence[int], inputs: Sequence[Any] = (), outputs: Sequence[Any] = (),
           device: str | None = None, block_dim: int | None = None, stream: int | None = None) -> None:
    """Launches kernel ``kernel`` (its qualified name, as the library registers it) over ``dim``
    threads, in place, as ``wp.launch``: ``inputs`` then ``outputs`` are the kernel's arguments
    in order (the split is only for reading; every array is passed by reference), arrays as
    objects with ``__array_interface__`` (cpu) or ``__cuda_array_interface__`` (CUDA; the
    device is the array's ``.device.id`` where it has one, else 0), values as Python or NumPy
    numbers (sequences for vectors), converted exactly. ``device`` ("cpu", "cuda:N"), when given,
    must be the arrays' own; a kernel without array arguments runs on it (default "cpu").
    ``stream``: the CUstream of a CUDA launch (default: the first CUDA array's own stream, as
    its ``__cuda_array_interface__`` gives it; 0 the legacy default stream). Errors (KjitError,
    TypeError, ValueError) name the kernel and the argument; nothing is launched then."""
    k = _kernels.get(kernel)
    if k is None:
        k = _Kernel(kernel)
        _kernels[kernel] = k
    args = [*inputs, *outputs] if outputs else inputs
    params = k.params
    if len(args) != len(params):
        raise TypeError(f"{k.what}: the kernel takes {len(params)} arguments "
                        f"({', '.join(p.name for p in params)}), got {len(args)}")
    dims = (int(dim),) if isinstance(dim, (int, np.integer)) else tuple(int(d) for d in dim)
    pointers: list[int] = []
    shapes: list[tuple[int, ...]] = []
    where = device
    first_stream = None
    for p in k.arrays:
        obj = args[p.index]
        fast = _numpy_array(p, obj) if type(obj) is _ndarray else None
        if fast is not None:
            pointer, shape = fast
            on, array_stream = "cpu", None
        else:
            cuda, pointer, shape, array_stream = _array(k.what, p, obj)
            on = cuda or "cpu"
        if where is None:
            where, first_stream = on, array_stream
        elif on != where:
            raise ValueError(f"{k.what}: argument '{p.name}' is on {on}, the launch on {where}"
                             + (" (device=)" if device is not None else " (the first array's device)"))
        elif first_stream is None:
            first_stream = array_stream
        shapes.append(shape)
        pointers.append(pointer)
    where = where or "cpu"
    if where != "cpu" and not where.startswith("cuda:"):
        raise ValueError(f"{k.what}: device '{where}': kjit launches on 'cpu' and 'cuda:N'")
    if where == "cpu":
        stream = None
    elif stream is None:
        stream = first_stream if isinstance(first_stream, int) else 0
    prepared, memories = k.plan(where, tuple(shapes), dims, block_dim, stream)
    pointers += [ptr for ptr, w in zip(pointers, k.written) if w]
    if not memories:
        prepared.launch(pointers)
        return
    value_bytes = [k.converted(p, args[p.index]) for p in k.values]
    with _values_lock:
        for memory, data in zip(memories, value_bytes):
            ctypes.memmove(memory, data, len(data))
        prepared.launch(pointers)
