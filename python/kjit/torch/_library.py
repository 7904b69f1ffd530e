"""kjit.torch's view of libkjit.so: loading kernel libraries, kernel signatures, and the one
C entry every launch goes through (kjit_ffi_launch_call, kjit/ffi/c_launch.h): a call prepared
once per kernel entry and layout of buffers, launched with the buffers' data pointers."""

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
LAUNCH_VERSION = 2

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
        # A prepared call (Prepared), the per-thread data pointers and the stream, as addresses.
        ("kjit_ffi_launch_call", c.c_int, [c.c_void_p, c.c_void_p, c.c_void_p]),
        ("kjit_ffi_share_cpu_threads", c.c_int, [c.c_char_p]),
        ("kjit_ffi_cpu_threads", c.c_char_p, []),
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
    global _lib, _launch_call
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
            raise KjitError(f"kjit.torch.load: {path} does not link a libkjit.so with kjit_ffi_launch_call (is it a kjit "
                            "kernel library, built with this kjit?)") from None
        version = candidate.kjit_ffi_launch_version()
        if version != LAUNCH_VERSION:
            raise KjitError(f"libkjit.so's kjit_ffi_launch is version {version}, kjit.torch speaks {LAUNCH_VERSION}")
        _lib = candidate
        _launch_call = candidate.kjit_ffi_launch_call
        _share_torch_threads(candidate)


#: The OpenMP runtimes whose thread team kjit's cpu launches can share (libgomp's ABI).
_OPENMP_NAMES = ("libgomp", "libomp", "libiomp5")


def _torch_openmp_library() -> str | None:
    """The OpenMP runtime torch's intra-op threads run on, as loaded in this process: its own
    copy under torch/lib first (the wheels'), else any loaded one; None when torch's parallel
    backend is not OpenMP or no runtime is loaded."""
    if "parallel backend: OpenMP" not in torch.__config__.parallel_info():
        return None
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(maxsplit=5)[-1].strip() for line in maps if "/lib" in line}
    except OSError:
        return None
    found = sorted(p for p in paths if os.path.basename(p).startswith(_OPENMP_NAMES) and ".so" in p)
    own = os.path.join(os.path.dirname(torch.__file__), "lib") + os.sep
    return next((p for p in found if p.startswith(own)), found[0] if found else None)


def _share_torch_threads(lib: ctypes.CDLL) -> None:
    """kjit's pooled cpu work on torch's OpenMP team (kjit::share_cpu_threads): both poll for
    work when idle, so two thread sets in one process take turns on the cores, and a launch
    after a torch op ran on one thread (1 M elements: 2.1-2.2x torch.add's time instead of
    1.1-1.2x, docs/TORCH.md). KJIT_TORCH_SHARE_THREADS=0 keeps kjit's own pool."""
    if os.environ.get("KJIT_TORCH_SHARE_THREADS", "1") == "0":
        return
    path = _torch_openmp_library()
    if path is not None and lib.kjit_ffi_share_cpu_threads(path.encode()) != 0:
        raise KjitError(f"kjit.torch.load: sharing torch's OpenMP threads: {last_error()} (set "
                        "KJIT_TORCH_SHARE_THREADS=0 to keep kjit's own threads)")


def cpu_threads() -> str:
    """What runs kjit's pooled cpu work: "kjit" (its own threads) or the path of the OpenMP
    runtime whose team it shares (torch's libgomp, set by load())."""
    return lib().kjit_ffi_cpu_threads().decode()


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


_MAX_BUFFERS = 6 * 64
_MAX_RANK = 16


class CCall(ctypes.Structure):
    """kjit_c_call: kjit_ffi_launch's arguments, prepared once per entry and argument layout."""
    _fields_ = [("kernel", ctypes.c_char_p), ("adjoint", ctypes.c_int32), ("reserved", ctypes.c_int32),
                ("device", ctypes.c_char_p), ("args", ctypes.c_void_p), ("nargs", ctypes.c_int64),
                ("rets", ctypes.c_void_p), ("nrets", ctypes.c_int64), ("attrs", ctypes.POINTER(CAttr)),
                ("nattrs", ctypes.c_int64)]


class _Scratch(threading.local):
    """Per-thread memory a launch's data pointers are packed into (prepared calls are shared)."""

    def __init__(self) -> None:
        self.data = (ctypes.c_void_p * _MAX_BUFFERS)()
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
    """One entry's call for one layout of buffers (device, each buffer's dtype and shape), built
    once: a launch writes the buffers' data pointers and makes one C call
    (kjit_ffi_launch_call), which decodes and checks the call as kjit_ffi_launch does."""

    __slots__ = ("addr", "pack", "cuda", "_keep")

    def __init__(self, kernel: bytes, adjoint: bool, attrs: Attrs, device: torch.device, nargs: int,
                 layout: list[tuple[torch.dtype, tuple[int, ...]]]) -> None:
        if device.type == "cpu":
            spec, self.cuda = b"cpu", None
        elif device.type == "cuda":  # untested here (no GPU): torch's current stream of that device
            spec, self.cuda = f"cuda:{device.index}".encode(), device
        else:
            raise KjitError(f"kjit kernel '{kernel.decode()}': tensors on device '{device}': kjit launches on cpu "
                            "and cuda")
        n = len(layout)
        if n > _MAX_BUFFERS:
            raise KjitError(f"kjit kernel '{kernel.decode()}': more than {_MAX_BUFFERS} buffers in one launch")
        bufs = (CBuffer * max(1, n))()
        keep: list = [bufs, attrs, kernel, spec]
        for b, (dtype, shape) in zip(bufs, layout):
            rank = len(shape)
            if rank > _MAX_RANK:
                raise KjitError(f"kjit kernel '{kernel.decode()}': a tensor of rank {rank} (kjit takes at most "
                                f"{_MAX_RANK})")
            dims = (ctypes.c_int64 * max(1, rank))(*shape)
            keep.append(dims)
            b.dtype, b.rank, b.dims = XLA_CODE[dtype], rank, dims
        at = ctypes.addressof(bufs)
        call = CCall(kernel, int(adjoint), 0, spec, at, nargs, at + ctypes.sizeof(CBuffer) * nargs, n - nargs,
                     attrs.array, attrs.count)
        keep.append(call)
        self._keep = keep
        self.addr = ctypes.addressof(call)
        self.pack = _packer(n).pack_into

    def run(self, tensors: list[torch.Tensor]) -> None:
        """Launches on ``tensors`` (operands, then results), which have this call's layout."""
        self.launch([t.data_ptr() for t in tensors])

    def launch(self, pointers: list[int]) -> None:
        """Launches on the memory at ``pointers`` (operands, then results; this call's layout)."""
        sc = _scratch
        self.pack(sc.data, 0, *pointers)
        stream = None if self.cuda is None else torch.cuda.current_stream(self.cuda).cuda_stream
        if _launch_call(self.addr, sc.data_at, stream) != 0:
            raise KjitError(last_error())


class Launcher:
    """One entry of a kernel (forward or adjoint of a kernel or of its tangent kernel) with its
    attributes, launched on dense tensors of one device; each layout's call is prepared once."""

    def __init__(self, kernel: bytes, adjoint: bool, attrs: Attrs) -> None:
        self.kernel, self.adjoint, self.attrs = kernel, adjoint, attrs
        self._plans: dict[tuple, Prepared] = {}

    def prepare(self, args: list[torch.Tensor], rets: list[torch.Tensor]) -> Prepared:
        """The call for the layout of ``args`` and ``rets`` (cached)."""
        tensors = (*args, *rets)
        dev = tensors[0].device
        key = (len(args), dev, *[(t.dtype, t.shape) for t in tensors])
        p = self._plans.get(key)
        if p is None:
            if len(self._plans) >= 256:
                self._plans.clear()
            p = self._plans[key] = Prepared(self.kernel, self.adjoint, self.attrs, dev, len(args),
                                            [(t.dtype, tuple(t.shape)) for t in tensors])
        return p

    def __call__(self, args: list[torch.Tensor], rets: list[torch.Tensor]) -> None:
        self.prepare(args, rets).run([*args, *rets])
