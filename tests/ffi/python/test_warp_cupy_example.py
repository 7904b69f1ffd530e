"""Warp's core/example_cupy.py ported (examples/warp/cupy_example.py): saxpy launched in place on
the example's NumPy arrays by kjit.arrays, y after each of 10 frames compared bit for bit with
Warp's own run on the cpu (tests/golden/warp_examples/cupy_10_frames.bin, written by
`scripts/warp_examples.py BUILD --goldens tests/golden/warp_examples`)."""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np

import kjit.arrays as ka

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

_expected = os.environ.get("KJIT_EXPECT_PACKAGE_DIR")
if _expected and os.path.dirname(os.path.abspath(ka.__file__)) != os.path.abspath(_expected):
    raise SystemExit(f"kjit.arrays was imported from {ka.__file__}, not from the installed {_expected}")

spec = importlib.util.spec_from_file_location("cupy_example", os.path.join(ROOT, "examples", "warp", "cupy_example.py"))
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)

golden_path = os.path.join(ROOT, "tests", "golden", "warp_examples", "cupy_10_frames.bin")
theirs = np.fromfile(golden_path, dtype=np.float32).reshape(10, -1)
ka.load(os.environ["KJIT_WARP_CUPY_LIBRARY"])
mine, _ = example.run("cpu", num_frames=len(theirs))

if mine.shape != theirs.shape or mine.dtype != theirs.dtype:
    print(f"DIFFERS: y is {mine.dtype}{mine.shape}, Warp's {theirs.dtype}{theirs.shape}")
    sys.exit(1)
same = int(np.sum(mine.view(np.uint32) == theirs.view(np.uint32)))
print(f"y after each frame: {same} of {theirs.size} values bit-identical")
if same != theirs.size:
    sys.exit(1)
print(f"\nkjit's CuPy example (NumPy arrays on the cpu) matches Warp's bit for bit ({golden_path})")
