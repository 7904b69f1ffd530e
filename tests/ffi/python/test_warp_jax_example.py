"""One port of Warp's JAX interop examples (examples/warp/$KJIT_WARP_JAX_EXAMPLE.py) run as
scripts/warp_jax_examples.py runs it, every array its example functions print compared bit for
bit with Warp's (tests/golden/warp_examples/<example>.npz, written by
`scripts/warp_examples.py BUILD --goldens tests/golden/warp_examples`)."""

from __future__ import annotations

import importlib.util
import os
import sys

import kjit.jax as kj

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

# ctest points each venv at the package pip installed for it: that copy is the one under test.
_expected = os.environ.get("KJIT_EXPECT_PACKAGE_DIR")
if _expected and os.path.dirname(os.path.abspath(kj.__file__)) != os.path.join(os.path.abspath(_expected), "jax"):
    raise SystemExit(f"kjit.jax was imported from {kj.__file__}, not from the installed {_expected}")

spec = importlib.util.spec_from_file_location("warp_jax_examples", os.path.join(ROOT, "scripts", "warp_jax_examples.py"))
harness = importlib.util.module_from_spec(spec)
spec.loader.exec_module(harness)

example = os.environ["KJIT_WARP_JAX_EXAMPLE"]
golden = os.path.join(ROOT, "tests", "golden", "warp_examples", f"{example}.npz")
module = harness.load_module("kjit", example, os.environ["KJIT_WARP_JAX_LIBRARY"])
arrays, layout, _ = harness.run(module, 0, echo=True)
problems, one_item = harness.check(arrays, layout, golden)
for p in problems:
    print("DIFFERS:", p)
if problems:
    sys.exit(1)
print(f"\n{example}: {len(arrays)} printed arrays in {len(layout)} prints, bit-identical to Warp's ({golden}); "
      f"{one_item} printed as one array where Warp prints a list of it")
