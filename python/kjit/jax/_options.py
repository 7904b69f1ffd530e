"""Enums shared by jax_kernel and jax_callable, and module preloading."""

from __future__ import annotations

import enum
from typing import Any

import jax
import numpy as np

from . import _library


class ModulePreloadMode(enum.IntEnum):
    """Where a kernel's module is built and loaded before XLA runs (and captures) the call."""

    NONE = 0  #: load lazily on the first launch
    CURRENT_DEVICE = 1  #: JAX's default device
    ALL_DEVICES = 2  #: every local device (every GPU on a CUDA machine)


class GraphMode(enum.IntEnum):
    """How a callable's CUDA work may be captured into graphs (Warp's graph modes)."""

    NONE = 0  #: never captured (the callable may synchronise or allocate)
    XLA = 1  #: XLA captures it into its command buffers (Warp's GraphMode.JAX)
    JAX = 1  #: alias of XLA, Warp's name
    KJIT = 2  #: kjit captures and caches one graph per set of buffer addresses (Warp's WARP)
    KJIT_STAGED = 3  #: one graph over stable staging buffers, copies inside it (Warp's WARP_STAGED)
    KJIT_STAGED_EX = 4  #: as KJIT_STAGED with the copies around the graph (Warp's WARP_STAGED_EX)
    # Warp's names, for code coming from warp.jax_experimental:
    WARP = 2  #: alias of KJIT
    WARP_STAGED = 3  #: alias of KJIT_STAGED
    WARP_STAGED_EX = 4  #: alias of KJIT_STAGED_EX

    @property
    def c_name(self) -> str:
        return {0: "none", 1: "xla", 2: "kjit", 3: "kjit_staged", 4: "kjit_staged_ex"}[int(self)]


def option(enum_type: type[enum.IntEnum], value: Any, what: str, name: str) -> Any:
    """``value`` as a member of ``enum_type``: a member, its int value or its name (any case);
    a ValueError naming ``what``, the option and the accepted names otherwise."""
    if isinstance(value, enum_type):
        return value
    if isinstance(value, str) and value.upper() in enum_type.__members__:
        return enum_type.__members__[value.upper()]
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        try:
            return enum_type(int(value))
        except ValueError:
            pass
    names = ", ".join(enum_type.__members__)
    raise ValueError(f"{what}: invalid {name} {value!r}; expected a kjit.jax.{enum_type.__name__} ({names})")


def _device_spec() -> str:
    """kjit's name of JAX's default device: "cpu" or "cuda:N"."""
    d = jax.devices()[0]
    return "cpu" if d.platform == "cpu" else f"cuda:{d.id}"


def preload(kernel_name: str, mode: ModulePreloadMode) -> None:
    """Builds (or finds in the disk cache) and loads the module of ``kernel_name``."""
    mode = option(ModulePreloadMode, mode, f"preload('{kernel_name}')", "module_preload_mode")
    if mode == ModulePreloadMode.NONE:
        return
    spec = _device_spec()
    if mode == ModulePreloadMode.ALL_DEVICES and spec != "cpu":
        spec = "all"
    _library.check(_library.lib().kjit_ffi_preload(kernel_name.encode(), spec.encode()))
