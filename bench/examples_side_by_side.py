"""Every kernel of examples/ as users copy it, forward, adjoint and tangent, on kjit's cpu device
and on Dr.Jit's LLVM backend, timed in one interleaved run; every kjit result is checked against
Dr.Jit's (an independent implementation) before anything is timed.

    bench/examples_side_by_side.sh [BUILD_DIR] [--reps N]

or, with drjit and numpy importable and the runner built (ninja bench_examples_side_by_side):

    python bench/examples_side_by_side.py --build build [--reps N]

kjit runs in a child process (bench/side_by_side/examples_runner.cpp) that reads the inputs
from files and answers `time CASE` on stdin; Dr.Jit runs in this process. One repetition runs
every case on kjit, then on Dr.Jit. Cases are <kernel>_<fwd|adj|tan>: the forward launch, the
adjoint (reverse mode, gradients of every differentiable input for a seed on the output) and
the tangent (forward mode: the output and its tangent for a direction on every differentiable
input). Dr.Jit's twins are written as a Dr.Jit user would: symbolic loops with max_iterations
(so reverse mode can keep their states) and scatter_add for the atomics; its springs reads the
spring's two ends from two index arrays where kjit's example reads one interleaved array.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import drjit as dr
import numpy as np
from cpu_side_by_side import ChildProcess  # the same stdin protocol (bench/side_by_side/runner.hpp)
from drjit.llvm.ad import Array3f, Array3f64, Float, Float64, Int32, UInt32

# Sizes and scalars; bench/side_by_side/examples_runner.cpp reads the sizes from sizes.i64 and
# uses the same scalars (a = 2, k = 10, c = 1.1, 16 steps).
N_AXPY = 1 << 22
N_PARTICLES = 1 << 18
N_SPRINGS = 1 << 20
N_DAMP = 1 << 20
N_ITERATE = 1 << 20
A, K, C, STEPS = 2.0, 10.0, 1.1, 16
KERNELS = ["saxpy", "daxpy", "springs", "springs_f64", "damp", "iterate"]
MODES = ["fwd", "adj", "tan"]
VEC3 = {"springs", "springs_f64", "damp"}  # kernels whose results are Vec3 arrays
ACCUMULATING = ["saxpy_adj", "daxpy_adj"]  # also timed with Dr.Jit accumulating (drjit-acc)
CASES = [f"{k}_{m}" for k in KERNELS for m in MODES]
# kjit against Dr.Jit, relative to the results' magnitude: one rounding for the axpys; sums of
# atomics in any order for springs; 16 dependent steps for damp and iterate.
RTOL = {"saxpy": 1e-6, "daxpy": 1e-14, "springs": 1e-4, "springs_f64": 1e-12, "damp": 1e-4, "iterate": 1e-10}


def damp_inputs(rng):
    """Values whose length after the loop, |v| 1.1^16, is no closer to the branch's 10 than
    0.1 %: float32 and Dr.Jit then take the same side in every lane."""
    v = rng.uniform(-4, 4, (N_DAMP, 3)).astype(np.float32)
    for _ in range(20):
        final = np.linalg.norm(v.astype(np.float64), axis=1) * C**STEPS
        bad = np.abs(final / 10 - 1) < 1e-3
        if not bad.any():
            return v
        v[bad] *= np.float32(1.01)
    raise RuntimeError("damp inputs: could not move every lane off the branch's threshold")


def make_inputs(seed=31):
    rng = np.random.default_rng(seed)
    u = lambda dt, *shape: rng.uniform(-1, 1, shape).astype(dt)  # noqa: E731
    ends = rng.integers(0, N_PARTICLES, (N_SPRINGS, 2)).astype(np.int32)
    ends[:, 1] = (ends[:, 0] + 1 + rng.integers(0, N_PARTICLES - 1, N_SPRINGS)) % N_PARTICLES
    out = {"sizes.i64": np.array([N_AXPY, N_PARTICLES, N_SPRINGS, N_DAMP, N_ITERATE], np.int64),
           "springs_pairs.i32": ends.reshape(-1)}
    rest = rng.uniform(0.5, 1.5, N_SPRINGS)
    for dt, suffix in ((np.float32, ".f32"), (np.float64, ".f64")):
        for name in ("x", "y", "g", "dx", "dy"):
            out[f"axpy_{name}{suffix}"] = u(dt, N_AXPY)
        for name in ("x", "g", "dx"):
            out[f"springs_{name}{suffix}"] = u(dt, N_PARTICLES, 3)
        out[f"springs_rest{suffix}"] = rest.astype(dt)
    out["damp_v.f32"] = damp_inputs(rng)
    out["damp_g.f32"], out["damp_dv.f32"] = u(np.float32, N_DAMP, 3), u(np.float32, N_DAMP, 3)
    out["iterate_x.f64"] = u(np.float64, N_ITERATE)
    out["iterate_c.f64"] = rng.uniform(0.5, 0.9, N_ITERATE)
    for name in ("g", "dx", "dc"):
        out[f"iterate_{name}.f64"] = u(np.float64, N_ITERATE)
    return out


# ---------------------------------------------------------------------------------------------
# Dr.Jit's twins of the examples' kernels


@dr.syntax
def damp_drjit(v, c, steps):
    w = type(v)(v)
    i = Int32(0)
    while dr.hint(i < steps, max_iterations=STEPS):
        w = w * c
        i += 1
    if dr.norm(w) > 10.0:
        w = dr.normalize(w) * 10.0
    return w


@dr.syntax
def iterate_drjit(x, c, n):
    y = Float64(x)
    i = Int32(0)
    while dr.hint(i < n, max_iterations=STEPS):
        y = y * c + dr.sin(y)
        i += 1
    return y


def springs_drjit(vec, x, ia, ib, rest, k):
    d = dr.gather(vec, x, ia) - dr.gather(vec, x, ib)
    ln = dr.norm(d)
    force = d * (k * (ln - rest) / ln)
    f = dr.zeros(vec, N_PARTICLES)
    dr.scatter_add(f, -force, ia)
    dr.scatter_add(f, force, ib)
    return f


class DrJit:
    def __init__(self, inp):
        self.inp = inp
        self.steps = Int32(STEPS)
        dr.make_opaque(self.steps)  # a run-time trip count, as kjit's Int parameter
        pairs = inp["springs_pairs.i32"].reshape(-1, 2)
        self.ia, self.ib = UInt32(pairs[:, 0].astype(np.uint32)), UInt32(pairs[:, 1].astype(np.uint32))
        dr.make_opaque(self.ia, self.ib)
        self.cases = {}
        for name, real, vec, suffix in (("saxpy", Float, Array3f, ".f32"), ("daxpy", Float64, Array3f64, ".f64")):
            self._axpy(name, real, suffix)
        self._springs("springs", Float, Array3f, ".f32")
        self._springs("springs_f64", Float64, Array3f64, ".f64")
        self._damp()
        self._iterate()
        dr.sync_thread()

    def _arrays(self, kind, *names):
        out = []
        for n in names:
            a = self.inp[n]
            x = kind(np.ascontiguousarray(a.T)) if a.ndim == 2 else kind(a)
            dr.make_opaque(x)
            out.append(x)
        return out

    def _modes(self, name, fwd, wrt, seed, directions):
        """The three cases of one kernel: fwd(*inputs) on detached inputs; the adjoint of seed
        on its output with respect to `wrt`; the tangent for `directions` (one per input)."""
        def run_fwd():
            r = [fwd(*[dr.detach(x) for x in wrt])]
            dr.eval(r)
            return r

        def run_adj(accumulate=False):
            for x in wrt:
                dr.enable_grad(x)
                if not accumulate:
                    dr.clear_grad(x)
            out = fwd(*wrt)
            dr.set_grad(out, seed)
            dr.enqueue(dr.ADMode.Backward, out)
            dr.traverse(dr.ADMode.Backward)
            grads = [dr.grad(x) for x in wrt]
            dr.eval(*grads)
            for x in wrt:
                dr.disable_grad(x)
            return grads

        def run_tan():
            inputs = [type(x)(x) for x in wrt]
            for x, dx in zip(inputs, directions):
                dr.enable_grad(x)
                dr.set_grad(x, dx)
            out = fwd(*inputs)
            dr.forward_to(out)
            r = [dr.detach(out), dr.grad(out)]
            dr.eval(r)
            return r

        self.cases[name + "_fwd"], self.cases[name + "_adj"], self.cases[name + "_tan"] = run_fwd, run_adj, run_tan
        # The adjoint adding into gradients it already holds: the work kjit's adjoint does (it
        # adds into the gradient arrays it is given, as Warp's), where Dr.Jit's plain reverse
        # pass may hand back a seed as a gradient and write the other (2 streams, not 5).
        self.cases[name + "_adj_acc"] = lambda: run_adj(accumulate=True)

    def _axpy(self, name, real, suffix):
        x, y, g, dx, dy = self._arrays(real, *[f"axpy_{n}{suffix}" for n in ("x", "y", "g", "dx", "dy")])
        self._modes(name, lambda x, y: A * x + y, [x, y], g, [dx, dy])

    def _springs(self, name, real, vec, suffix):
        x, g, dx = self._arrays(vec, *[f"springs_{n}{suffix}" for n in ("x", "g", "dx")])
        (rest,) = self._arrays(real, f"springs_rest{suffix}")
        self._modes(name, lambda x: springs_drjit(vec, x, self.ia, self.ib, rest, K), [x], g, [dx])

    def _damp(self):
        v, g, dv = self._arrays(Array3f, "damp_v.f32", "damp_g.f32", "damp_dv.f32")
        self._modes("damp", lambda v: damp_drjit(v, C, self.steps), [v], g, [dv])

    def _iterate(self):
        x, c, g, dx, dc = self._arrays(Float64, *[f"iterate_{n}.f64" for n in ("x", "c", "g", "dx", "dc")])
        self._modes("iterate", lambda x, c: iterate_drjit(x, c, self.steps), [x, c], g, [dx, dc])

    def time(self, case):
        t = time.perf_counter()
        self.cases[case]()
        dr.sync_thread()
        return (time.perf_counter() - t) * 1e3

    def results(self, case):
        out = []
        for a in self.cases[case]():
            n = np.asarray(a.numpy())
            out.append(n.T.reshape(-1) if n.ndim == 2 else n.reshape(-1))
        return out


class Kjit(ChildProcess):
    """The kjit runner (bench/side_by_side/examples_runner.cpp), driven as cpu_side_by_side.py
    drives its C++ sides; its results are float64 for the float64 kernels."""

    def __init__(self, exe, data_dir):
        super().__init__([exe], data_dir)

    def results(self, case, parts):
        path = os.path.join(self.data_dir, "result.bin")
        self.ask(f"check {case} {path}")
        dtype = np.float64 if case.startswith(("daxpy", "springs_f64", "iterate")) else np.float32
        flat = np.fromfile(path, dtype)
        return np.split(flat, parts) if parts > 1 else [flat]


def compare(case, mine, theirs):
    """The worst difference between kjit's and Dr.Jit's results relative to their magnitude;
    raises on any value beyond the kernel's tolerance."""
    kernel = case.rsplit("_", 1)[0]
    rtol = RTOL[kernel]
    worst = 0.0
    for i, (a, b) in enumerate(zip(mine, theirs)):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        if a.shape != b.shape:
            raise RuntimeError(f"{case} result {i}: kjit gave {a.shape}, Dr.Jit {b.shape}")
        # A Vec3 is measured against its length (one component of it may cancel: damp's adjoint
        # projects the gradient, (I - u u^T) g); the floor keeps a value that cancels to ~0 from
        # demanding an exact zero.
        mag = np.repeat(np.linalg.norm(b.reshape(-1, 3), axis=1), 3) if kernel in VEC3 else np.abs(b)
        scale = mag + 1e-3 * float(np.max(mag))
        err = np.abs(a - b) / scale
        worst = max(worst, float(np.max(err)))
        if not (err <= rtol).all():
            j = int(np.flatnonzero(~(err <= rtol))[0])
            raise RuntimeError(f"{case} result {i}: {int((~(err <= rtol)).sum())} of {err.size} values differ by more "
                               f"than {rtol:g}; first at {j}: kjit {a[j]!r}, Dr.Jit {b[j]!r}")
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=11, help="interleaved repetitions of every case")
    args = ap.parse_args()
    t0 = time.perf_counter()
    exe = os.path.join(args.build, "bench", "bench_examples_side_by_side")
    if not os.access(exe, os.X_OK):
        sys.exit(f"missing {exe}: build it with ninja -C {args.build} bench_examples_side_by_side")
    print(f"{os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}; drjit {dr.__version__}, numpy {np.__version__}")
    with tempfile.TemporaryDirectory(prefix="kjit-examples-") as data_dir:
        inp = make_inputs()
        for name, a in inp.items():
            a.tofile(os.path.join(data_dir, name))
        kjit, drjit = Kjit(exe, data_dir), DrJit(inp)
        try:
            for case in CASES:  # compiles and first touches
                for s in (kjit, drjit):
                    s.time(case)
                    s.time(case)
            print("\nkjit against Dr.Jit (worst difference relative to the values' magnitude):")
            for case in CASES:
                theirs = drjit.results(case)
                print(f"  {case:16s} {compare(case, kjit.results(case, len(theirs)), theirs):.1e}")
            times = {(c, s): [] for c in CASES for s in ("kjit", "drjit")}
            times.update({(c, "drjit-acc"): [] for c in ACCUMULATING})
            for c in ACCUMULATING:
                drjit.time(c + "_acc")  # compiled before timing
            for _ in range(args.reps):
                for case in CASES:
                    times[(case, "kjit")].append(kjit.time(case))
                    times[(case, "drjit")].append(drjit.time(case))
                    if case in ACCUMULATING:
                        times[(case, "drjit-acc")].append(drjit.time(case + "_acc"))
        finally:
            kjit.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"\nms per launch, median (min) of {args.reps} interleaved repetitions:")
    print("| case | kjit | Dr.Jit | kjit/Dr.Jit |")
    print("|---|---|---|---|")
    for case in CASES:
        k, d = med[(case, "kjit")], med[(case, "drjit")]
        print(f"| {case} | {k:.2f} ({min(times[(case, 'kjit')]):.2f}) | {d:.2f} ({min(times[(case, 'drjit')]):.2f}) "
              f"| {k / d:.2f} |")
    print("\nadjoints against Dr.Jit adding into the gradients it holds (drjit-acc: kjit's work), ms, median (min):")
    for case in ACCUMULATING:
        acc = med[(case, "drjit-acc")]
        print(f"  {case}: drjit-acc {acc:.2f} ({min(times[(case, 'drjit-acc')]):.2f}); kjit/drjit-acc "
              f"{med[(case, 'kjit')] / acc:.2f}")
    print("\nadjoint / forward and tangent / forward (medians):")
    print("| kernel | kjit adj | Dr.Jit adj | kjit tan | Dr.Jit tan |")
    print("|---|---|---|---|---|")
    for kernel in KERNELS:
        r = lambda s, m: med[(f"{kernel}_{m}", s)] / med[(f"{kernel}_fwd", s)]  # noqa: E731
        print(f"| {kernel} | {r('kjit', 'adj'):.2f} | {r('drjit', 'adj'):.2f} | {r('kjit', 'tan'):.2f} | "
              f"{r('drjit', 'tan'):.2f} |")
    print(f"\ntotal wall time {time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
