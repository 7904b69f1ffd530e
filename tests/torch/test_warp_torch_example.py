"""Warp's core/example_torch.py ported (examples/warp/torch_example.py): its 10 Adam steps on
1500 particles through the kjit kernel's forward and adjoint, the final positions and the mean
after each step compared bit for bit with Warp's own run (tests/golden/warp_examples/
torch_10_iters.npz, written by `scripts/warp_examples.py BUILD --goldens tests/golden/warp_examples`)."""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np

import kjit.torch as kt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# ctest points the venv at the package pip installed for it: that copy is the one under test.
_expected = os.environ.get("KJIT_EXPECT_PACKAGE_DIR")
if _expected and os.path.dirname(os.path.abspath(kt.__file__)) != os.path.join(os.path.abspath(_expected), "torch"):
    raise SystemExit(f"kjit.torch was imported from {kt.__file__}, not from the installed {_expected}")

spec = importlib.util.spec_from_file_location("torch_example", os.path.join(ROOT, "examples", "warp", "torch_example.py"))
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)

golden_path = os.path.join(ROOT, "tests", "golden", "warp_examples", "torch_10_iters.npz")
golden = np.load(golden_path)
kt.load(os.environ["KJIT_WARP_TORCH_LIBRARY"])
xy, means, _ = example.run(train_iters=len(golden["means"]), num_particles=len(golden["xy"]))

failed = False
for name, mine in (("xy", xy), ("means", means)):
    theirs = golden[name]
    if mine.shape != theirs.shape or mine.dtype != theirs.dtype:
        print(f"DIFFERS: {name} is {mine.dtype}{mine.shape}, Warp's {theirs.dtype}{theirs.shape}")
        failed = True
        continue
    same = int(np.sum(mine.view(np.uint32) == theirs.view(np.uint32)))
    diff = float(np.max(np.abs(mine.astype(np.float64) - theirs.astype(np.float64))))
    print(f"{name}: {same} of {theirs.size} values bit-identical, largest difference {diff:.3g}")
    failed |= same != theirs.size
if failed:
    sys.exit(1)
print(f"\nkjit's torch example matches Warp's bit for bit ({golden_path})")
