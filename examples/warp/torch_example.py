"""Warp 1.19's core/example_torch.py in kjit: a kjit kernel as a PyTorch operator with autograd.

1500 particles, from numpy's default_rng(42) normals, descend the Rosenbrock function with
torch.optim.Adam (lr 5e-2); each step evaluates z = rosenbrock(xy) with the kjit kernel
(examples/warp/torch_interop/kernels.hpp, built into libwarp_torch_interop.so) and
backpropagates z.backward(ones), which runs the kernel's adjoint. Warp wraps its launches in a
torch.autograd.Function by hand; kjit.torch's kernel op is that Function already. Headless:
it prints the particles' mean after each step (Warp's line) and, with --out, saves the final
positions and the means (.npz) and the median ms per step (after the first, which compiles).

    PYTHONPATH=python python examples/warp/torch_example.py [--library build/lib/libwarp_torch_interop.so]
        [--train-iters 10] [--num-particles 1500] [--out result.npz]
"""

import argparse
import os
import time

import numpy as np
import torch

import kjit.torch as kt

#: The kernel library, in a build tree beside this checkout unless named.
DEFAULT_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "lib",
                               "libwarp_torch_interop.so")


class Example:
    def __init__(self, train_iters=10, num_particles=1500):
        self.num_particles = num_particles
        self.train_iters = train_iters
        self.train_iter = 0
        self.learning_rate = 5e-2
        # xy: (n, 2) float32 is kjit.torch's Array<Vec2f>; z comes out with the launch dims (n,).
        self.rosenbrock = kt.kernel("warp_torch::eval_rosenbrock")
        rng = np.random.default_rng(42)
        self.xy = torch.tensor(rng.normal(size=(self.num_particles, 2)), dtype=torch.float32, requires_grad=True)
        self.opt = torch.optim.Adam([self.xy], lr=self.learning_rate)
        self.mean_pos = np.empty((2,))

    def forward(self):
        self.z = self.rosenbrock(self.xy)

    def step(self):
        self.opt.zero_grad()
        self.forward()
        self.z.backward(torch.ones_like(self.z))
        self.opt.step()
        self.xy_np = self.xy.numpy(force=True)
        self.mean_pos = np.mean(self.xy_np, axis=0)
        print(f"Iter {self.train_iter:5d} particle mean: {self.mean_pos[0]:.8f}, {self.mean_pos[1]:.8f}")
        self.train_iter += 1


def run(train_iters=10, num_particles=1500):
    """Runs the example's steps; returns (final positions, mean per step, median ms per step)."""
    e = Example(train_iters=train_iters, num_particles=num_particles)
    means, ms = [], []
    for k in range(e.train_iters):
        t0 = time.perf_counter()
        e.step()
        if k > 0:
            ms.append((time.perf_counter() - t0) * 1e3)
        means.append(e.mean_pos.copy())
    return e.xy_np.copy(), np.array(means, dtype=np.float32), float(np.median(ms)) if ms else float("nan")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--library", default=DEFAULT_LIBRARY, help="libwarp_torch_interop.so")
    parser.add_argument("--train-iters", type=int, default=10, help="Optimisation steps.")
    parser.add_argument("--num-particles", type=int, default=1500, help="Particles to optimise.")
    parser.add_argument("--out", default=None, help="Save the final xy and the means per step here (.npz).")
    args = parser.parse_args()
    kt.load(args.library)
    xy, means, ms = run(args.train_iters, args.num_particles)
    print(f"{ms:.4f} ms per iteration")
    if args.out:
        np.savez(args.out, xy=xy, means=means)
