"""Loading kjit's shared libraries with ctypes and registering its XLA FFI targets."""

from __future__ import annotations

import ctypes
import json
import os
import threading
from typing import Any

import jax

from .. import _libkjit
from .._libkjit import KjitError

#: Version of the C interface (kjit_ffi_abi_version) this shim speaks.
ABI_VERSION = 2

#: FFI target names of the kernel handlers (one per direction; the kernel is an attribute).
LAUNCH_TARGET = "kjit_launch"
ADJOINT_TARGET = "kjit_adjoint"
#: The FFI target that builds a mesh's BVH (kjit.jax.mesh).
MESH_BVH_TARGET = "kjit_mesh_bvh"

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_loaded: list[ctypes.CDLL] = []  # kernel libraries stay loaded: handlers point into them
_registered_targets: set[tuple[str, str]] = set()
#: The XLA FFI API minor version kjit's handlers declare to this process's XLA (settled at the
#: first registration, _negotiate_api_version), or None before it.
_api_minor: int | None = None

#: XLA platform names kjit registers handlers for.
PLATFORMS = ("cpu", "CUDA")




def _declare(lib: ctypes.CDLL) -> None:
    c = ctypes
    for name, res, args in [
        ("kjit_ffi_last_error", c.c_char_p, []),
        ("kjit_ffi_abi_version", c.c_int, []),
        ("kjit_ffi_handler", c.c_void_p, [c.c_char_p, c.c_char_p]),
        ("kjit_ffi_declare_api_version", c.c_int, [c.c_int]),
        ("kjit_ffi_api_versions", c.c_int, []),
        ("kjit_ffi_declared_api_version", c.c_int, []),
        ("kjit_ffi_kernel_signature", c.c_char_p, [c.c_char_p]),
        ("kjit_ffi_kernels", c.c_char_p, []),
        ("kjit_ffi_preload", c.c_int, [c.c_char_p, c.c_char_p]),
        ("kjit_ffi_callable_signature", c.c_char_p, [c.c_char_p]),
        ("kjit_ffi_callable_handler", c.c_void_p, [c.c_char_p, c.c_char_p, c.c_char_p]),
        ("kjit_ffi_callback_handler", c.c_void_p, [c.c_char_p, c.c_char_p]),
        ("kjit_ffi_registered", c.c_char_p, []),
        ("kjit_ffi_graph_cache_size", c.c_longlong, [c.c_char_p]),
        ("kjit_ffi_clear_graph_cache", c.c_int, [c.c_char_p]),
        ("kjit_ffi_set_graph_cache_max", c.c_int, [c.c_char_p, c.c_int]),
    ]:
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args


def lib() -> ctypes.CDLL:
    """libkjit.so, once ``load`` has run."""
    if _lib is None:
        raise KjitError("kjit.jax: no kernel library is loaded; call kjit.jax.load('path/to/libkernels.so') first")
    return _lib


def last_error() -> str:
    """The message of libkjit's last failed call on this thread."""
    return lib().kjit_ffi_last_error().decode()


def check(result: Any) -> Any:
    """Raises KjitError with libkjit's message when ``result`` is a failure value (None, -1)."""
    if result is None or (isinstance(result, int) and result == -1):
        raise KjitError(last_error())
    return result


def text(result: bytes | None) -> str:
    """A JSON or text result of libkjit, raising on failure."""
    return check(result).decode()


def register_target(name: str, handler_address: int, platform: str) -> None:
    """Registers an XLA FFI target once per (name, platform)."""
    key = (name, platform)
    if key in _registered_targets:
        return
    capsule = jax.ffi.pycapsule(ctypes.cast(handler_address, ctypes.c_void_p).value)
    _negotiate_api_version()
    try:
        jax.ffi.register_ffi_target(name, capsule, platform=platform)
    except Exception:
        if platform == "cpu":
            raise
        # A jaxlib without that platform: the target is simply not available there.
        return
    _registered_targets.add(key)


def _xla_ffi_api_version() -> tuple[int, int] | None:
    """The XLA FFI API version of the running jaxlib, from the c_api.h it ships (the header its
    XLA was built from), or None when the wheel carries none."""
    import re

    import jaxlib
    for root in getattr(jaxlib, "__path__", []):
        try:
            with open(os.path.join(root, "include", "xla", "ffi", "api", "c_api.h"), encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue
        major = re.search(r"#define\s+XLA_FFI_API_MAJOR\s+(\d+)", text)
        minor = re.search(r"#define\s+XLA_FFI_API_MINOR\s+(\d+)", text)
        if major and minor:
            return int(major.group(1)), int(minor.group(1))
    return None


def _negotiate_api_version() -> None:
    """Settles, once per process, the FFI API version kjit's handlers declare: the running
    XLA's own when kjit mirrors it, else the newest kjit mirrors. XLA's probe gives a handler no
    way to ask, registration is deferred until JAX starts its backends (so a refusal cannot be
    caught and retried here), and jaxlib 0.7.2 takes exactly its own 0.1 while jaxlib 0.12
    takes a range that starts at 0.1 today; the version the jaxlib's own c_api.h names is one
    its XLA always accepts."""
    global _api_minor
    if _api_minor is not None:
        return
    import jaxlib
    versions = lib().kjit_ffi_api_versions()
    newest, oldest = versions // 100, versions % 100
    theirs = _xla_ffi_api_version()
    if theirs is None:
        minor = oldest  # no header to read: the version every jaxlib so far accepts
    elif theirs[0] != 0 or theirs[1] < oldest:
        raise KjitError(f"kjit.jax: jaxlib {jaxlib.__version__} speaks XLA FFI API {theirs[0]}.{theirs[1]}; kjit's "
                        f"handlers can declare 0.{oldest} to 0.{newest}. Use a kjit built for this jaxlib "
                        "(docs/JAX.md, Supported versions)")
    else:
        minor = min(theirs[1], newest)
    check(lib().kjit_ffi_declare_api_version(minor))
    _api_minor = minor


def api_version() -> tuple[int, int] | None:
    """The XLA FFI API version kjit's handlers declare to this process's XLA (negotiated when
    ``load`` registers the targets), or None before the first ``load``."""
    return None if _api_minor is None else (0, _api_minor)


def load(path: str, kjit_library: str | None = None) -> None:
    """Loads a kernel library (its kernels register themselves) and libkjit.so, and
    registers kjit's FFI targets with JAX for the cpu and CUDA platforms.

    Args:
        path: a shared library built with ``kjit_add_kernel_library`` (or any library
            linking libkjit.so that defines KJIT_KERNELs, callables or callbacks).
        kjit_library: the path of libkjit.so, overriding ``$KJIT_LIBRARY`` and the search
            (docs/JAX.md, *Finding libkjit.so*). Only the first ``load`` opens libkjit.so.
    """
    global _lib
    if not os.path.exists(path):
        raise FileNotFoundError(f"kjit.jax.load: no such kernel library: {path}")
    path = os.path.abspath(path)
    with _lock:
        if _lib is None:
            _libkjit.open_kernel_library(path, kjit_library, _loaded)
            # Symbols looked up through the kernel library's handle come from its own
            # dependencies: exactly the libkjit.so it uses, whatever its file name or soname.
            candidate = _loaded[-1]
            try:
                _declare(candidate)
            except AttributeError:
                raise KjitError(f"kjit.jax.load: {path} does not link libkjit.so (is it a kjit kernel library?)") from None
            version = candidate.kjit_ffi_abi_version()
            if version != ABI_VERSION:
                raise KjitError(f"libkjit.so speaks FFI C interface {version}, this kjit.jax speaks {ABI_VERSION}")
            _lib = candidate
        else:
            _loaded.append(ctypes.CDLL(path))
        for platform in PLATFORMS:
            for target, which in ((LAUNCH_TARGET, b"launch"), (ADJOINT_TARGET, b"adjoint"),
                                  (MESH_BVH_TARGET, b"mesh_bvh")):
                register_target(target, check(_lib.kjit_ffi_handler(which, platform.encode())), platform)


def kernels() -> list[dict[str, Any]]:
    """The signatures of every kernel the loaded libraries define."""
    return json.loads(text(lib().kjit_ffi_kernels()))


def registered() -> dict[str, list[str]]:
    """Names of the C++ callables and callbacks the loaded libraries registered."""
    return json.loads(text(lib().kjit_ffi_registered()))
