"""What a value parameter's gradient costs on the cpu: saxpy's and damp's adjoints without it (a
kjit before value gradients against this one: the same ms when unused) and with it (d/da, d/dc:
the sums over the threads), interleaved, on bench/cpu_side_by_side.py's inputs (2^24 saxpy
threads, 2^20 damp threads).

    python bench/value_adjoint_cost.py --build build [--before OTHER_BUILD] [--reps N]

Run it with the benchmark venv's python (bench/cpu_side_by_side.sh makes it: numpy, drjit, warp).
--before names another build tree (of an older kjit) whose bench_side_by_side_kjit runs the plain
adjoints in the same rounds; its cases without gradients of values only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

from cpu_side_by_side import ChildProcess, make_inputs  # noqa: E402

PLAIN = ["saxpy_adj", "damp_adj"]
WITH_VALUES = ["saxpy_adj_da", "damp_adj_dc"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--before", default=None, help="a build tree of the kjit to compare with")
    ap.add_argument("--reps", type=int, default=21)
    args = ap.parse_args()
    exe = lambda build: os.path.join(build, "bench", "bench_side_by_side_kjit")  # noqa: E731
    print(f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="kjit-value-adjoint-") as data_dir:
        for name, a in make_inputs().items():
            a.tofile(os.path.join(data_dir, name + (".i32" if a.dtype == np.int32 else ".f32")))
        sides = {"now": (ChildProcess([exe(args.build)], data_dir), PLAIN + WITH_VALUES)}
        if args.before:
            sides["before"] = (ChildProcess([exe(args.before)], data_dir), PLAIN)
        try:
            times = {(s, c): [] for s, (_, cases) in sides.items() for c in cases}
            for _ in range(2):  # warm-up: module builds, first touches
                for s, (child, cases) in sides.items():
                    for c in cases:
                        child.time(c)
            for _ in range(args.reps):
                for s, (child, cases) in sides.items():
                    for c in cases:
                        times[(s, c)].append(child.time(c))
        finally:
            for child, _ in sides.values():
                child.close()
    print(f"ms per launch, median (min) of {args.reps} interleaved repetitions:")
    for (s, c), v in times.items():
        print(f"  {s:6s} {c:14s} {statistics.median(v):8.2f} ({min(v):.2f})")
    med = {k: statistics.median(v) for k, v in times.items()}
    for plain, with_value in zip(PLAIN, WITH_VALUES):
        line = f"  {with_value} / {plain}: {med[('now', with_value)] / med[('now', plain)]:.2f}"
        if args.before:
            line += f"; {plain} now / before: {med[('now', plain)] / med[('before', plain)]:.2f}"
        print(line)
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
