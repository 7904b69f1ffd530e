"""The kjit Python package on its own: where it finds libkjit.so ($KJIT_LIBRARY, a recorded
prefix, the install layout, sys.prefix, the loader), the error naming every place tried, and
its version, written in one place. Each lookup runs in a fresh interpreter over a copy of the
package, as an install would leave it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ["KJIT_TEST_PYTHON_SOURCE"]  # the source tree's python/
LIBKJIT = os.environ["KJIT_TEST_LIBKJIT"]  # the build's libkjit.so

# Prints the name the lookup opened libkjit.so by, after checking it is a working libkjit.
PROBE = r"""
import ctypes, kjit._libkjit as l
lib = l.open_libkjit()
lib.kjit_ffi_abi_version.restype = ctypes.c_int
assert lib.kjit_ffi_abi_version() == 2
print(repr(lib._name))
"""


def copy_package(dest_parent: str) -> str:
    """Copies python/kjit to dest_parent/kjit; returns dest_parent (for PYTHONPATH)."""
    os.makedirs(dest_parent, exist_ok=True)
    shutil.copytree(os.path.join(SOURCE, "kjit"), os.path.join(dest_parent, "kjit"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest_parent


def fake_prefix(prefix: str) -> str:
    """A prefix whose lib/ holds libkjit.so (a link to the build's); returns that path."""
    os.makedirs(os.path.join(prefix, "lib"), exist_ok=True)
    path = os.path.join(prefix, "lib", "libkjit.so")
    os.symlink(os.path.realpath(LIBKJIT), path)
    return path


def probe(pythonpath: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("KJIT_LIBRARY", "LD_LIBRARY_PATH", "PYTHONPATH")}
    clean.update(env, PYTHONPATH=pythonpath)
    return subprocess.run([sys.executable, "-c", PROBE], env=clean, capture_output=True, text=True, timeout=60)


class FindLibkjit(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="kjit-package-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def opened(self, result: subprocess.CompletedProcess) -> str:
        self.assertEqual(result.returncode, 0, result.stderr)
        return eval(result.stdout.strip().splitlines()[-1])

    def test_kjit_library_comes_first(self) -> None:
        site = copy_package(os.path.join(self.tmp, "site"))
        # A recorded prefix too, which $KJIT_LIBRARY must win over.
        other = fake_prefix(os.path.join(self.tmp, "other"))
        with open(os.path.join(site, "kjit", "kjit_prefix.txt"), "w") as f:
            f.write(os.path.dirname(os.path.dirname(other)) + "\n")
        self.assertEqual(self.opened(probe(site, KJIT_LIBRARY=LIBKJIT)), LIBKJIT)

    def test_a_wrong_kjit_library_is_an_error_not_a_fallback(self) -> None:
        site = copy_package(os.path.join(self.tmp, "site"))
        fake_prefix(os.path.join(self.tmp, "prefix"))
        missing = os.path.join(self.tmp, "nowhere", "libkjit.so")
        result = probe(site, KJIT_LIBRARY=missing)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("kjit._libkjit.LibkjitNotFoundError: kjit: cannot open libkjit.so; tried, in order:\n"
                      f"  $KJIT_LIBRARY: {missing} (no such file)\n"
                      "Set KJIT_LIBRARY to the path of libkjit.so", result.stderr)

    def test_a_recorded_prefix_relative_to_the_package(self) -> None:
        site = copy_package(os.path.join(self.tmp, "share", "python"))
        path = fake_prefix(self.tmp)
        with open(os.path.join(site, "kjit", "kjit_prefix.txt"), "w") as f:
            f.write("../../..\n")  # from <tmp>/share/python/kjit to <tmp>
        self.assertEqual(self.opened(probe(site)), path)

    def test_the_install_layout_implies_the_prefix(self) -> None:
        prefix = os.path.join(self.tmp, "usr")
        site = copy_package(os.path.join(prefix, "share", "kjit", "python"))
        path = fake_prefix(prefix)
        self.assertEqual(self.opened(probe(site)), path)

    def test_the_dynamic_loader_search(self) -> None:
        site = copy_package(os.path.join(self.tmp, "site"))
        libdir = os.path.dirname(fake_prefix(os.path.join(self.tmp, "elsewhere")))
        self.assertEqual(self.opened(probe(site, LD_LIBRARY_PATH=libdir)), "libkjit.so")

    def test_nothing_found_names_every_place_tried(self) -> None:
        site = copy_package(os.path.join(self.tmp, "site"))
        result = probe(site)
        self.assertNotEqual(result.returncode, 0)
        message = result.stderr[result.stderr.index("kjit: cannot open"):]
        lines = message.splitlines()
        self.assertEqual(lines[0], "kjit: cannot open libkjit.so; tried, in order:")
        self.assertEqual(lines[1], f"  sys.prefix: {sys.prefix}/lib/libkjit.so (no such file)")
        self.assertEqual(lines[2], f"  sys.prefix: {sys.prefix}/lib64/libkjit.so (no such file)")
        self.assertRegex(lines[3], r"^  the dynamic loader \(LD_LIBRARY_PATH, ld.so.cache\): libkjit.so \(.*libkjit.so: "
                                   r"cannot open shared object file")
        self.assertTrue(lines[4].startswith("Set KJIT_LIBRARY to the path of libkjit.so"), lines[4])

    def test_candidates_in_order(self) -> None:
        sys.path.insert(0, SOURCE)
        self.addCleanup(sys.path.remove, SOURCE)
        from kjit import _libkjit

        prefix = os.path.join(self.tmp, "p")
        pkg = os.path.join(prefix, "share", "kjit", "python", "kjit")
        os.makedirs(pkg)
        with open(os.path.join(pkg, _libkjit.PREFIX_FILE), "w") as f:
            f.write("/opt/kjit\n")
        env = os.environ.pop("KJIT_LIBRARY", None)
        try:
            found = _libkjit.candidates("/k/libkernels.so", package_dir=pkg)
        finally:
            if env is not None:
                os.environ["KJIT_LIBRARY"] = env
        paths = [p for _, p in found if not p.endswith(".so") or "/" in p]
        self.assertEqual(paths[:6], ["/opt/kjit/lib/libkjit.so", "/opt/kjit/lib64/libkjit.so",
                                     f"{prefix}/lib/libkjit.so", f"{prefix}/lib64/libkjit.so",
                                     f"{sys.prefix}/lib/libkjit.so", f"{sys.prefix}/lib64/libkjit.so"])
        self.assertEqual(found[-2], ("the dynamic loader (LD_LIBRARY_PATH, ld.so.cache)", "libkjit.so"))
        self.assertEqual(found[-1], ("the kernel library's folder", "/k/libkjit.so"))


class Version(unittest.TestCase):
    def test_written_once(self) -> None:
        init = open(os.path.join(SOURCE, "kjit", "__init__.py")).read()
        self.assertEqual(re.findall(r'^__version__ = "([^"]+)"$', init, re.M), ["0.2.0"])
        toml = open(os.path.join(SOURCE, "pyproject.toml")).read()
        self.assertIn('dynamic = ["version"]', toml)
        self.assertIn('version = {attr = "kjit.__version__"}', toml)
        self.assertNotRegex(toml, r'(?m)^version\s*=\s*"')  # no literal version besides


if __name__ == "__main__":
    unittest.main(verbosity=2)
