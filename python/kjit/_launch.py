"""The launch shims' view of libkjit.so (kjit.torch, kjit.arrays): loading kernel libraries,
kernel signatures, and the one C entry every launch goes through (kjit_ffi_launch_call,
kjit/ffi/c_launch.h): a call prepared once per kernel entry and layout of buffers, launched with
the buffers' data pointers. Knows no framework: buffers are XLA data type codes and shapes."""

from __future__ import annotations

import ctypes
import json
import os
import struct
import threading
from collections.abc import Callable
from typing import Any

from . import _libkjit
from ._libkjit import KjitError
from ._signature import Param, Signature

#: Version of kjit_ffi_launch these shims speak (kjit_ffi_launch_version).
LAUNCH_VERSION = 2

#: XLA data type codes (kjit::xla::DataType) by the dtype names kernel signatures use.
XLA_CODES: dict[str, int] = {
    "bool": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "uint8": 6, "uint16": 7, "uint32": 8,
    "uint64": 9, "float16": 10, "float32": 11, "float64": 12, "bfloat16": 16,
}

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_loaded: list[ctypes.CDLL] = []
_signatures: dict[str, Signature | KjitError] = {}


class CBuffer(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("dims", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64))]


class CAttr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int32), ("dtype", ctypes.c_int32),
                ("count", ctypes.c_int64), ("data", ctypes.c_void_p)]


ATTR_ARRAY = 1


def _declare(lib: ctypes.CDLL) -> None:
    c = ctypes
    for name, res, args in [
        ("kjit_ffi_last_error", c.c_char_p, []),
        ("kjit_ffi_launch_version", c.c_int, []),
        ("kjit_ffi_kernel_signature", c.c_char_p, [c.c_char_p]),
        ("kjit_ffi_kernels", c.c_char_p, []),
        ("kjit_ffi_preload", c.c_int, [c.c_char_p, c.c_char_p]),
        # A prepared call (Prepared), the per-thread data pointers and the stream, as addresses.
        ("kjit_ffi_launch_call", c.c_int, [c.c_void_p, c.c_void_p, c.c_void_p]),
        ("kjit_ffi_share_cpu_threads", c.c_int, [c.c_char_p]),
        ("kjit_ffi_cpu_threads", c.c_char_p, []),
    ]:
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args


def lib(who: str = "kjit") -> ctypes.CDLL:
    """libkjit.so's entries, once a kernel library is loaded (``who`` names the shim in the error)."""
    if _lib is None:
        raise KjitError(f"{who}: no kernel library is loaded; call {who}.load('path/to/libkernels.so') first")
    return _lib


def last_error() -> str:
    return lib().kjit_ffi_last_error().decode()


def load(path: str, kjit_library: str | None, who: str) -> ctypes.CDLL:
    """Loads a kernel library built with kjit (its kernels register themselves) and the
    libkjit.so it uses (found as kjit.jax finds it: docs/JAX.md, *Finding libkjit.so*); returns
    libkjit's entries. Every shim of the process shares the one libkjit.so and its kernels."""
    global _lib, _launch_call
    if not os.path.exists(path):
        raise FileNotFoundError(f"{who}.load: no such kernel library: {path}")
    path = os.path.abspath(path)
    with _lock:
        if _lib is not None:
            _loaded.append(ctypes.CDLL(path))
            _signatures.clear()  # a kernel missing before may be there now
            return _lib
        _libkjit.open_kernel_library(path, kjit_library, _loaded)
        candidate = _loaded[-1]
        try:
            _declare(candidate)
        except AttributeError:
            raise KjitError(f"{who}.load: {path} does not link a libkjit.so with kjit_ffi_launch_call (is it a kjit "
                            "kernel library, built with this kjit?)") from None
        version = candidate.kjit_ffi_launch_version()
        if version != LAUNCH_VERSION:
            raise KjitError(f"libkjit.so's kjit_ffi_launch is version {version}, {who} speaks {LAUNCH_VERSION}")
        _lib = candidate
        _launch_call = candidate.kjit_ffi_launch_call
        return candidate


def signature(name: str, who: str = "kjit") -> Signature:
    """The signature of kernel ``name`` (cached: a description is read once per kernel)."""
    s = _signatures.get(name)
    if s is None:
        text = lib(who).kjit_ffi_kernel_signature(name.encode())
        s = Signature.from_json(text.decode()) if text is not None else KjitError(last_error())
        _signatures[name] = s
    if isinstance(s, KjitError):
        raise KjitError(str(s))
    return s


def kernels(who: str = "kjit") -> list[dict[str, Any]]:
    """The signatures of every kernel the loaded libraries define."""
    text = lib(who).kjit_ffi_kernels()
    if text is None:
        raise KjitError(last_error())
    return json.loads(text.decode())


def preload(name: str, device: str) -> None:
    """Builds (or finds in kjit's cache) and loads the module of kernel ``name`` on ``device``
    ("cpu" or "cuda:N")."""
    if lib().kjit_ffi_preload(name.encode(), device.encode()) != 0:
        raise KjitError(last_error())


def static_value(p: Param) -> tuple[int, int, int]:
    """How value parameter ``p`` travels as a static attribute (Attrs' ``zeros``): its XLA dtype
    (16-bit floats as uint16 bits: XLA has no 16-bit float attributes), lanes, bytes per lane."""
    code = XLA_CODES[p.dtype_name]
    return (7 if code in (10, 16) else code, p.lanes, p.dtype.itemsize)


class Attrs:
    """Integer-array attributes of a call (kjit_traced, kjit_array_order, kjit_launch_dims, ...),
    built once per kernel and direction."""

    def __init__(self, items: dict[str, list[int]], zeros: dict[str, tuple[int, int, int]] | None = None) -> None:
        """``items``: int64 array attributes; ``zeros``: static value attributes that are zero,
        by name: (XLA dtype, lanes, bytes per lane)."""
        self._keep = []
        #: The memory of each static value attribute (``zeros``), by name: a caller may write a
        #: launch's value into it before the launch (kjit.arrays does).
        self.values: dict[str, ctypes.Array] = {}
        zeros = zeros or {}
        self.count = len(items) + len(zeros)
        self.array = (CAttr * max(1, self.count))()
        for a, (name, values) in zip(self.array, items.items()):
            data = (ctypes.c_int64 * max(1, len(values)))(*values)
            nm = name.encode()
            self._keep += [data, nm]
            a.name, a.kind, a.dtype, a.count = nm, ATTR_ARRAY, 5, len(values)
            a.data = ctypes.cast(data, ctypes.c_void_p)
        for a, (name, (dtype, lanes, size)) in zip(self.array[len(items):], zeros.items()):
            data = self.values[name] = (ctypes.c_char * max(8, lanes * size))()
            nm = name.encode()
            self._keep += [data, nm]
            a.name, a.kind, a.dtype, a.count = nm, 0 if lanes == 1 else ATTR_ARRAY, dtype, 0 if lanes == 1 else lanes
            a.data = ctypes.cast(data, ctypes.c_void_p)


MAX_BUFFERS = 6 * 64
MAX_RANK = 16


class CCall(ctypes.Structure):
    """kjit_c_call: kjit_ffi_launch's arguments, prepared once per entry and argument layout."""
    _fields_ = [("kernel", ctypes.c_char_p), ("adjoint", ctypes.c_int32), ("reserved", ctypes.c_int32),
                ("device", ctypes.c_char_p), ("args", ctypes.c_void_p), ("nargs", ctypes.c_int64),
                ("rets", ctypes.c_void_p), ("nrets", ctypes.c_int64), ("attrs", ctypes.POINTER(CAttr)),
                ("nattrs", ctypes.c_int64)]


class _Scratch(threading.local):
    """Per-thread memory a launch's data pointers are packed into (prepared calls are shared)."""

    def __init__(self) -> None:
        self.data = (ctypes.c_void_p * MAX_BUFFERS)()
        self.data_at = ctypes.addressof(self.data)


_scratch = _Scratch()
_pointer_packers: dict[int, struct.Struct] = {}
_launch_call: Any = None  # kjit_ffi_launch_call, bound by load()


def _packer(n: int) -> struct.Struct:
    p = _pointer_packers.get(n)
    if p is None:
        p = _pointer_packers[n] = struct.Struct(f"={n}Q")
    return p


class Prepared:
    """One entry's call for one layout of buffers (device, each buffer's XLA dtype code and
    shape), built once: a launch writes the buffers' data pointers and makes one C call
    (kjit_ffi_launch_call), which decodes and checks the call as kjit_ffi_launch does."""

    __slots__ = ("addr", "pack", "stream", "_keep")

    def __init__(self, kernel: bytes, adjoint: bool, attrs: Attrs, device: str, nargs: int,
                 layout: list[tuple[int, tuple[int, ...]]], stream: Callable[[], int | None] | None = None) -> None:
        """``device``: "cpu" or "cuda:N"; ``stream``: returns the CUstream of each launch (None:
        the default stream; left None on the cpu)."""
        n = len(layout)
        if n > MAX_BUFFERS:
            raise KjitError(f"kjit kernel '{kernel.decode()}': more than {MAX_BUFFERS} buffers in one launch")
        spec = device.encode()
        bufs = (CBuffer * max(1, n))()
        keep: list = [bufs, attrs, kernel, spec]
        for b, (code, shape) in zip(bufs, layout):
            rank = len(shape)
            if rank > MAX_RANK:
                raise KjitError(f"kjit kernel '{kernel.decode()}': an array of rank {rank} (kjit takes at most "
                                f"{MAX_RANK})")
            dims = (ctypes.c_int64 * max(1, rank))(*shape)
            keep.append(dims)
            b.dtype, b.rank, b.dims = code, rank, dims
        at = ctypes.addressof(bufs)
        call = CCall(kernel, int(adjoint), 0, spec, at, nargs, at + ctypes.sizeof(CBuffer) * nargs, n - nargs,
                     attrs.array, attrs.count)
        keep.append(call)
        self._keep = keep
        self.addr = ctypes.addressof(call)
        self.pack = _packer(n).pack_into
        self.stream = stream

    def launch(self, pointers: list[int]) -> None:
        """Launches on the memory at ``pointers`` (operands, then results; this call's layout)."""
        sc = _scratch
        self.pack(sc.data, 0, *pointers)
        if _launch_call(self.addr, sc.data_at, None if self.stream is None else self.stream()) != 0:
            raise KjitError(last_error())
