"""kjit.torch's view of libkjit.so: loading kernel libraries, kernel signatures, and the one
C entry every launch goes through (kjit_ffi_launch, kjit/ffi/c_launch.h), called with prebuilt
ctypes argument types."""

from __future__ import annotations

import ctypes
import json
import os
import struct
import threading
from typing import Any

import torch

from .. import _libkjit
from .._libkjit import KjitError
from .._signature import Signature

#: Version of kjit_ffi_launch this shim speaks (kjit_ffi_launch_version).
LAUNCH_VERSION = 1

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

#: torch dtypes by the names kernel signatures use, and their XLA data type codes.
DTYPES: dict[str, tuple[torch.dtype, int]] = {
    "bool": (torch.bool, 1), "int8": (torch.int8, 2), "int16": (torch.int16, 3), "int32": (torch.int32, 4),
    "int64": (torch.int64, 5), "uint8": (torch.uint8, 6), "uint16": (torch.uint16, 7), "uint32": (torch.uint32, 8),
    "uint64": (torch.uint64, 9), "float16": (torch.float16, 10), "float32": (torch.float32, 11),
    "float64": (torch.float64, 12), "bfloat16": (torch.bfloat16, 16),
}
XLA_CODE: dict[torch.dtype, int] = {t: c for t, c in DTYPES.values()}


def _declare(lib: ctypes.CDLL) -> None:
    c = ctypes
    for name, res, args in [
        ("kjit_ffi_last_error", c.c_char_p, []),
        ("kjit_ffi_launch_version", c.c_int, []),
        ("kjit_ffi_kernel_signature", c.c_char_p, [c.c_char_p]),
        ("kjit_ffi_kernels", c.c_char_p, []),
        ("kjit_ffi_preload", c.c_int, [c.c_char_p, c.c_char_p]),
        # The buffers are packed into per-thread scratch memory (launch): passed as addresses.
        ("kjit_ffi_launch", c.c_int, [c.c_char_p, c.c_int, c.c_char_p, c.c_void_p, c.c_void_p, c.c_int64,
                                      c.c_void_p, c.c_int64, c.POINTER(CAttr), c.c_int64]),
    ]:
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args


def lib() -> ctypes.CDLL:
    if _lib is None:
        raise KjitError("kjit.torch: no kernel library is loaded; call kjit.torch.load('path/to/libkernels.so') first")
    return _lib


def last_error() -> str:
    return lib().kjit_ffi_last_error().decode()


def load(path: str, kjit_library: str | None = None) -> None:
    """Loads a kernel library built with kjit (its kernels register themselves) and the
    libkjit.so it uses (found as kjit.jax finds it: docs/JAX.md, *Finding libkjit.so*)."""
    global _lib
    if not os.path.exists(path):
        raise FileNotFoundError(f"kjit.torch.load: no such kernel library: {path}")
    path = os.path.abspath(path)
    with _lock:
        if _lib is not None:
            _loaded.append(ctypes.CDLL(path))
            _signatures.clear()  # a kernel missing before may be there now
            return
        _libkjit.open_kernel_library(path, kjit_library, _loaded)
        candidate = _loaded[-1]
        try:
            _declare(candidate)
        except AttributeError:
            raise KjitError(f"kjit.torch.load: {path} does not link a libkjit.so with kjit_ffi_launch (is it a kjit "
                            "kernel library, built with this kjit?)") from None
        version = candidate.kjit_ffi_launch_version()
        if version != LAUNCH_VERSION:
            raise KjitError(f"libkjit.so's kjit_ffi_launch is version {version}, kjit.torch speaks {LAUNCH_VERSION}")
        _lib = candidate


def signature(name: str) -> Signature:
    """The signature of kernel ``name`` (cached: a description is read once per kernel)."""
    s = _signatures.get(name)
    if s is None:
        text = lib().kjit_ffi_kernel_signature(name.encode())
        s = Signature.from_json(text.decode()) if text is not None else KjitError(last_error())
        _signatures[name] = s
    if isinstance(s, KjitError):
        raise KjitError(str(s))
    return s


def kernels() -> list[dict[str, Any]]:
    """The signatures of every kernel the loaded libraries define."""
    text = lib().kjit_ffi_kernels()
    if text is None:
        raise KjitError(last_error())
    return json.loads(text.decode())


def preload(name: str, device: torch.device) -> None:
    """Builds (or finds in kjit's cache) and loads the module of kernel ``name`` on ``device``."""
    spec = "cpu" if device.type == "cpu" else f"cuda:{device.index or 0}"
    if lib().kjit_ffi_preload(name.encode(), spec.encode()) != 0:
        raise KjitError(last_error())


class Attrs:
    """Integer-array attributes of a call (kjit_traced, kjit_array_order, kjit_launch_dims, ...),
    built once per kernel and direction."""

    def __init__(self, items: dict[str, list[int]], zeros: dict[str, tuple[int, int, int]] | None = None) -> None:
        """``items``: int64 array attributes; ``zeros``: static value attributes that are zero,
        by name: (XLA dtype, lanes, bytes per lane)."""
        self._keep = []
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
            data = (ctypes.c_char * max(8, lanes * size))()
            nm = name.encode()
            self._keep += [data, nm]
            a.name, a.kind, a.dtype, a.count = nm, 0 if lanes == 1 else ATTR_ARRAY, dtype, 0 if lanes == 1 else lanes
            a.data = ctypes.cast(data, ctypes.c_void_p)


_BUFFER = struct.Struct("=QiiQQ")  # kjit_c_buffer (CBuffer): data, dtype, rank, dims, strides (NULL)
assert _BUFFER.size == ctypes.sizeof(CBuffer)
_MAX_BUFFERS = 6 * 64
_MAX_RANK = 16


class _Scratch(threading.local):
    """Per-thread memory the buffers of one launch are packed into (no allocation per call)."""

    def __init__(self) -> None:
        self.buffers = (ctypes.c_char * (_BUFFER.size * _MAX_BUFFERS))()
        self.dims = (ctypes.c_int64 * (_MAX_RANK * _MAX_BUFFERS))()
        self.buffers_at = ctypes.addressof(self.buffers)
        self.dims_at = ctypes.addressof(self.dims)


_scratch = _Scratch()
_packers = {r: struct.Struct(f"={r}q") for r in range(_MAX_RANK + 1)}


def launch(kernel: bytes, adjoint: bool, args: list[torch.Tensor], rets: list[torch.Tensor], attrs: Attrs) -> None:
    """One launch of ``kernel``'s forward or adjoint entry on dense tensors of one device."""
    dev = (args or rets)[0].device
    if dev.type == "cpu":
        spec, stream = b"cpu", None
    elif dev.type == "cuda":  # untested here (no GPU): torch's current stream of that device
        spec, stream = f"cuda:{dev.index}".encode(), torch.cuda.current_stream(dev).cuda_stream
    else:
        raise KjitError(f"kjit kernel '{kernel.decode()}': tensors on device '{dev}': kjit launches on cpu and cuda")
    sc = _scratch
    if len(args) + len(rets) > _MAX_BUFFERS:
        raise KjitError(f"kjit kernel '{kernel.decode()}': more than {_MAX_BUFFERS} buffers in one launch")
    bufs, dims, dims_at = sc.buffers, sc.dims, sc.dims_at
    for i, t in enumerate((*args, *rets)):
        shape = t.shape
        rank = len(shape)
        if rank > _MAX_RANK:
            raise KjitError(f"kjit kernel '{kernel.decode()}': a tensor of rank {rank} (kjit takes at most {_MAX_RANK})")
        _packers[rank].pack_into(dims, 8 * _MAX_RANK * i, *shape)
        _BUFFER.pack_into(bufs, _BUFFER.size * i, t.data_ptr(), XLA_CODE[t.dtype], rank, dims_at + 8 * _MAX_RANK * i, 0)
    at = sc.buffers_at
    if lib().kjit_ffi_launch(kernel, int(adjoint), spec, stream, at, len(args), at + _BUFFER.size * len(args),
                             len(rets), attrs.array, attrs.count) != 0:
        raise KjitError(last_error())
