"""kjit.arrays.launch against wp.launch on the same NumPy arrays, in place, side by side in one
run: Warp's core/example_cupy.py kernel (y = a x + y) and kjit's port of it
(examples/warp/cupy_interop/), at the example's 10 elements and at 1 Mi, on the cpu. Rounds
alternate the two systems; each round times LAUNCHES back-to-back launches; medians (and
minima) of the rounds' per-launch times. Both results are checked against NumPy first.

    PYTHONPATH=python .venv-bench/bin/python bench/arrays_launch.py [--library build/lib/libwarp_cupy_interop.so]
        [--rounds 21] [--launches 200]
"""

import argparse
import os
import statistics
import time

import numpy as np
import warp as wp

import kjit.arrays as ka

wp.config.quiet = True


@wp.kernel
def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


def per_launch_us(launch, launches):
    t0 = time.perf_counter()
    for _ in range(launches):
        launch()
    return (time.perf_counter() - t0) / launches * 1e6


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--library", default=os.path.join(here, "..", "build", "lib", "libwarp_cupy_interop.so"))
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--launches", type=int, default=200)
    args = ap.parse_args()
    ka.load(args.library)
    wp.init()
    print(f"kjit.arrays vs Warp {wp.config.version}, cpu, us per launch: median (min) of {args.rounds} rounds of "
          f"{args.launches} launches; load {os.getloadavg()[0]:.1f}")
    for n in (10, 1 << 20):
        x = np.arange(n, dtype=np.float32)
        # Check both against NumPy first (the values stay exact: small integers).
        yk, yw = np.ones(n, np.float32), np.ones(n, np.float32)
        ka.launch("warp_cupy::saxpy", dim=n, inputs=[x, yk, 1.0])
        wp.launch(saxpy, dim=n, inputs=[x, yw, 1.0], device="cpu")
        assert np.array_equal(yk, x + 1) and np.array_equal(yw, x + 1), "results differ from NumPy's"
        launches = args.launches if n < 1000 else max(1, args.launches // 20)
        times = {"kjit": [], "warp": []}
        for _ in range(args.rounds):
            times["kjit"].append(per_launch_us(lambda: ka.launch("warp_cupy::saxpy", dim=n, inputs=[x, yk, 1.0]),
                                               launches))
            times["warp"].append(per_launch_us(lambda: wp.launch(saxpy, dim=n, inputs=[x, yw, 1.0], device="cpu"),
                                               launches))
        k, w = statistics.median(times["kjit"]), statistics.median(times["warp"])
        print(f"n = {n:>8}: kjit {k:9.2f} ({min(times['kjit']):.2f})   warp {w:9.2f} ({min(times['warp']):.2f})   "
              f"kjit/warp {k / w:.3f}")


if __name__ == "__main__":
    main()
