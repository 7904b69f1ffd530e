"""Warp 1.19's core/example_cupy.py in kjit: a kjit kernel launched on CuPy arrays on a CUDA
device, and on NumPy arrays on the cpu, in place, with no copy.

Warp's example keeps x = arange(10) and y = ones(10) as CuPy arrays on a CUDA device (NumPy
arrays on the cpu) and launches saxpy (y = a x + y, a = 1) on them each frame, printing y.
kjit.arrays takes the same arrays the same way (their __cuda_array_interface__ or
__array_interface__: the kernel reads and writes the arrays' own memory). The kernel is
examples/warp/cupy_interop/kernels.hpp, built into libwarp_cupy_interop.so. With --out it saves
y after each frame (frames x n) and the median ms per frame after the first, which compiles or
loads the module (.npz: y, ms).

    PYTHONPATH=python python examples/warp/cupy_example.py [--library build/lib/libwarp_cupy_interop.so]
        [--device cpu|cuda:N] [--num-frames 10] [--out result.npz]
"""

import argparse
import os
import time

import numpy as np

import kjit.arrays as ka

#: The kernel library, in a build tree beside this checkout unless named.
DEFAULT_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "lib",
                               "libwarp_cupy_interop.so")


class Example:
    def __init__(self, device="cpu"):
        self.n = 10
        self.a = 1.0
        self.device = device
        if device.startswith("cuda"):
            import cupy as cp  # only where CuPy is the example's point: a CUDA device

            print(f"Using CuPy on device {device}")
            with cp.cuda.Device(int(device.split(":")[1]) if ":" in device else 0):
                self.x = cp.arange(self.n, dtype=cp.float32)
                self.y = cp.ones(self.n, dtype=cp.float32)
        else:
            print("Using NumPy on CPU")
            self.x = np.arange(self.n, dtype=np.float32)
            self.y = np.ones(self.n, dtype=np.float32)

    def step(self):
        # The arrays go to the kernel as they are: CuPy's through __cuda_array_interface__,
        # NumPy's through __array_interface__.
        ka.launch("warp_cupy::saxpy", dim=self.n, inputs=[self.x, self.y, self.a])

    def values(self):
        """y on the host (CuPy's .get() on a CUDA device)."""
        return self.y.get() if hasattr(self.y, "get") else np.array(self.y)

    def render(self):
        print(self.values())


def run(device="cpu", num_frames=10):
    """Runs the example's frames; returns (y after each frame, median ms per frame after the first)."""
    e = Example(device)
    frames, ms = [], []
    for _ in range(num_frames):
        start = time.perf_counter()
        e.step()
        if device.startswith("cuda"):
            import cupy as cp

            cp.cuda.get_current_stream().synchronize()
        ms.append((time.perf_counter() - start) * 1e3)
        e.render()
        frames.append(e.values())
    return np.stack(frames), float(np.median(ms[1:])) if len(ms) > 1 else ms[0]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--library", default=DEFAULT_LIBRARY, help="The kernel library (libwarp_cupy_interop.so).")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda:N for CuPy arrays on that GPU.")
    parser.add_argument("--num-frames", type=int, default=10, help="Total number of frames.")
    parser.add_argument("--out", default=None, help="Save y after each frame and the ms per frame here (.npz).")
    args = parser.parse_args()
    ka.load(args.library)
    ys, median_ms = run(args.device, args.num_frames)
    if args.out:
        np.savez(args.out, y=ys, ms=np.float64(median_ms))
