"""Finding and opening libkjit.so, wherever the package was installed from or copied to."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

#: The library's file name (and its soname, which kernel libraries record as DT_NEEDED).
SONAME = "libkjit.so"

#: A file next to the package's modules that names the kjit install prefix (one line; a relative
#: path is relative to this folder). An install that copies the package may write it, so that a
#: copy finds its own prefix's libkjit.so; nothing requires it.
PREFIX_FILE = "kjit_prefix.txt"

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class LibkjitNotFoundError(ImportError):
    """libkjit.so could not be opened from any of the places kjit looks; the message lists them."""


def _recorded_prefix(package_dir: str) -> str | None:
    path = os.path.join(package_dir, PREFIX_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            prefix = f.readline().strip()
    except OSError:
        return None
    if not prefix:
        return None
    return os.path.normpath(os.path.join(package_dir, prefix))


def _layout_prefix(package_dir: str) -> str | None:
    # A copy at <prefix>/share/kjit/python/kjit (the install rule's place) implies the prefix.
    parts = os.path.normpath(package_dir).split(os.sep)
    if parts[-4:] == ["share", "kjit", "python", "kjit"]:
        return os.sep.join(parts[:-4]) or os.sep
    return None


def candidates(kernel_library: str | None = None, package_dir: str = _PACKAGE_DIR) -> list[tuple[str, str]]:
    """Where libkjit.so is looked for, in order, as (what, path or soname) pairs.

    $KJIT_LIBRARY comes first (and alone: a path set on purpose is not second-guessed); then
    the prefix recorded next to the package, the prefix its install layout implies,
    ``<sys.prefix>/lib``, the dynamic loader's own search, and the kernel library's folder.
    """
    env = os.environ.get("KJIT_LIBRARY")
    if env:
        return [("$KJIT_LIBRARY", env)]
    found: list[tuple[str, str]] = []
    for what, prefix in ((f"the prefix in {os.path.join(package_dir, PREFIX_FILE)}", _recorded_prefix(package_dir)),
                         ("the install prefix around the package", _layout_prefix(package_dir)),
                         ("sys.prefix", sys.prefix)):
        if prefix:
            for libdir in ("lib", "lib64"):
                found.append((what, os.path.join(prefix, libdir, SONAME)))
    located = ctypes.util.find_library("kjit")
    if located:
        found.append(("ctypes.util.find_library('kjit')", located))
    found.append(("the dynamic loader (LD_LIBRARY_PATH, ld.so.cache)", SONAME))
    if kernel_library:
        found.append(("the kernel library's folder",
                      os.path.join(os.path.dirname(os.path.abspath(kernel_library)), SONAME)))
    return found


def already_loaded() -> ctypes.CDLL | None:
    """The libkjit.so already in the process (a kernel library's dependency), if any."""
    try:
        return ctypes.CDLL(SONAME, mode=os.RTLD_NOLOAD)
    except OSError:
        return None


def open_libkjit(kernel_library: str | None = None, explicit: str | None = None) -> ctypes.CDLL:
    """Opens libkjit.so: ``explicit`` if given, else the first of ``candidates`` that loads.

    Raises LibkjitNotFoundError naming every place tried and why each failed.
    """
    tried = [("kjit_library=", explicit)] if explicit else candidates(kernel_library)
    reasons = []
    for what, path in tried:
        if os.sep in path and not os.path.exists(path):
            reasons.append(f"  {what}: {path} (no such file)")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            reasons.append(f"  {what}: {path} ({e})")
    raise LibkjitNotFoundError(
        "kjit: cannot open libkjit.so; tried, in order:\n" + "\n".join(reasons) +
        "\nSet KJIT_LIBRARY to the path of libkjit.so (in a build tree: build/lib/libkjit.so; "
        "installed: <prefix>/lib/libkjit.so).", name=SONAME)


class KjitError(RuntimeError):
    """An error reported by libkjit (its message is kjit's own)."""


def open_kernel_library(path: str, explicit: str | None, loaded: list[ctypes.CDLL]) -> None:
    """Opens kernel library ``path`` (appended to ``loaded``: it stays loaded) and the libkjit.so it uses.

    A kernel library links libkjit.so, normally found through its RUNPATH. libkjit.so is opened
    first only when told where it is, or when the kernel library cannot find it: the kernel
    library's DT_NEEDED then resolves to that copy (the loader matches the soname), so the
    process holds one libkjit.so, whose registry the kernels and every shim share."""
    if explicit or os.environ.get("KJIT_LIBRARY"):
        open_libkjit(path, explicit)
    try:
        loaded.append(ctypes.CDLL(path))
        return
    except OSError as e:
        if already_loaded() is not None or SONAME not in str(e):
            raise
    open_libkjit(path)
    loaded.append(ctypes.CDLL(path))
