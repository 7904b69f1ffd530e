"""kjit.torch's view of libkjit.so (kjit/_launch.py, shared with kjit.arrays): torch's dtypes,
devices and streams for the prepared calls every launch goes through, and torch's OpenMP team
for kjit's cpu work."""

from __future__ import annotations

import ctypes
import os
from typing import Any

import torch

from .. import _launch
from .._launch import Attrs, Prepared
from .._libkjit import KjitError
from .._signature import Signature

__all__ = ["DTYPES", "XLA_CODE", "Attrs", "Launcher", "Prepared", "cpu_threads", "kernels", "load", "preload",
           "signature"]

#: torch dtypes by the names kernel signatures use, and their XLA data type codes.
DTYPES: dict[str, tuple[torch.dtype, int]] = {
    name: (getattr(torch, name), code) for name, code in _launch.XLA_CODES.items()}
XLA_CODE: dict[torch.dtype, int] = {t: c for t, c in DTYPES.values()}
_WHO = "kjit.torch"
_threads_shared = False


def lib():
    return _launch.lib(_WHO)


def last_error() -> str:
    return _launch.last_error()


def load(path: str, kjit_library: str | None = None) -> None:
    """Loads a kernel library built with kjit (its kernels register themselves) and the
    libkjit.so it uses (found as kjit.jax finds it: docs/JAX.md, *Finding libkjit.so*)."""
    global _threads_shared
    lib = _launch.load(path, kjit_library, _WHO)
    if not _threads_shared:
        _share_torch_threads(lib)
        _threads_shared = True


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
    return _launch.signature(name, _WHO)


def kernels() -> list[dict[str, Any]]:
    """The signatures of every kernel the loaded libraries define."""
    return _launch.kernels(_WHO)


def preload(name: str, device: torch.device) -> None:
    """Builds (or finds in kjit's cache) and loads the module of kernel ``name`` on ``device``."""
    _launch.preload(name, "cpu" if device.type == "cpu" else f"cuda:{device.index or 0}")


def _prepared(kernel: bytes, adjoint: bool, attrs: Attrs, device: torch.device, nargs: int,
              layout: list[tuple[torch.dtype, tuple[int, ...]]]) -> Prepared:
    """The call of one entry for tensors of ``layout`` on ``device`` (on CUDA, each launch on
    torch's current stream of that device: untested here, no GPU)."""
    if device.type == "cpu":
        spec, stream = "cpu", None
    elif device.type == "cuda":
        spec, stream = f"cuda:{device.index}", (lambda: torch.cuda.current_stream(device).cuda_stream)
    else:
        raise KjitError(f"kjit kernel '{kernel.decode()}': tensors on device '{device}': kjit launches on cpu "
                        "and cuda")
    return Prepared(kernel, adjoint, attrs, spec, nargs, [(XLA_CODE[t], shape) for t, shape in layout], stream)


def run(prepared: Prepared, tensors: list[torch.Tensor]) -> None:
    """Launches ``prepared`` on ``tensors`` (operands, then results), which have its layout."""
    prepared.launch([t.data_ptr() for t in tensors])


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
            p = self._plans[key] = _prepared(self.kernel, self.adjoint, self.attrs, dev, len(args),
                                             [(t.dtype, tuple(t.shape)) for t in tensors])
        return p

    def __call__(self, args: list[torch.Tensor], rets: list[torch.Tensor]) -> None:
        run(self.prepare(args, rets), [*args, *rets])
