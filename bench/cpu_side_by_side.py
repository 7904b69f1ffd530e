"""Issue 15's side-by-side cpu benchmark: kjit's cpu device, Dr.Jit's LLVM backend, Warp's cpu
device and hand-written C++ loops (OpenMP), timed in one interleaved run on saxpy, springs and
damp, forward and adjoint, every result checked against a float64 numpy reference.

Run it through bench/cpu_side_by_side.sh, which makes the venv and builds the C++ sides:

    bench/cpu_side_by_side.sh [BUILD_DIR] [--reps N]

or directly, with drjit, warp-lang and numpy importable:

    python bench/cpu_side_by_side.py --build build [--reps N]

kjit and the hand loop run in two child processes (bench/side_by_side/) that read the same
inputs from files and answer `time CASE` on stdin; Dr.Jit and Warp run in this process. One
repetition runs every case on the four systems in turn (kjit, Dr.Jit, Warp, hand), so all
four see the same machine state; the report gives the median and the minimum. No system may
leave a core busy for the next: the hand loop's OpenMP threads wait passively, and the extra
runs (Dr.Jit accumulating, the hand loop on one thread) follow their own system's (turns()).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import drjit as dr
import numpy as np
from drjit.llvm.ad import Array3f, Float, Int32, UInt32

# Sizes and scalars of issue 15; bench/side_by_side/runner.hpp and kernels.hpp use the same.
N_SAXPY = 1 << 24
N_PARTICLES = 1 << 18
N_SPRINGS = 1 << 20
N_DAMP = 1 << 20
SAXPY_A = 2.0
SPRING_K = 10.0
DAMP_C = float(np.float32(1.1))  # the float32 value, so the float64 reference uses it too
DAMP_STEPS = 16
DAMP_THRESHOLD, DAMP_RADIUS = 1.5, 0.5

CASES = ["saxpy_fwd", "saxpy_adj", "springs_fwd", "springs_adj", "damp_fwd", "damp_adj"]
SYSTEMS = ["kjit", "drjit", "warp", "hand"]
# Also run by the hand loop on one thread with plain adds ("hand-1t"), what Warp's cpu device
# does: the springs gap to Warp, split into atomics and the rest.
ONE_THREAD_CASES = ["springs_fwd", "springs_adj"]
# Also run by Dr.Jit accumulating into the gradients it already holds ("drjit-acc"), the work the
# other three do (dx += a g, dy += g: 5 streams); its plain saxpy adjoint moves 2 (dy is the seed).
ACCUMULATING_CASES = ["saxpy_adj"]


class Mismatch(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Inputs and the float64 references


def damp_inputs(rng: np.random.Generator) -> np.ndarray:
    """Values whose first crossing of the threshold is no closer to it than 0.1 % in float64, so
    that float32 and float64 take the same branch in every lane and step (after a scale-back
    the length is 0.5, which crosses next at 0.5 * 1.1^12 = 1.57, 5 % clear)."""
    v = rng.uniform(-1, 1, (N_DAMP, 3)).astype(np.float32)
    for _ in range(20):
        n0 = np.linalg.norm(v.astype(np.float64), axis=1)
        q = np.log(DAMP_THRESHOLD / np.maximum(n0, 1e-30)) / np.log(DAMP_C)
        margin = np.abs(q - np.round(q)) * np.log(DAMP_C)
        bad = margin < 1e-3
        if not bad.any():
            return v
        v[bad] *= np.float32(1.01)
    raise RuntimeError("damp inputs: could not move every lane off the threshold")


def make_inputs(seed: int = 15) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    u = lambda *shape: rng.uniform(-1, 1, shape).astype(np.float32)  # noqa: E731
    ia = rng.integers(0, N_PARTICLES, N_SPRINGS).astype(np.int32)
    ib = ((ia + 1 + rng.integers(0, N_PARTICLES - 1, N_SPRINGS)) % N_PARTICLES).astype(np.int32)
    return {
        "saxpy_x": u(N_SAXPY), "saxpy_y": u(N_SAXPY), "saxpy_g": u(N_SAXPY),
        "springs_x": u(N_PARTICLES, 3), "springs_ia": ia, "springs_ib": ib,
        "springs_rest": rng.uniform(0.5, 1.5, N_SPRINGS).astype(np.float32),
        "springs_g": u(N_PARTICLES, 3),
        "damp_v": damp_inputs(rng), "damp_g": u(N_DAMP, 3),
    }


def scatter3(index: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    return np.stack([np.bincount(index, values[:, c], minlength=n) for c in range(3)], axis=1)


def springs_terms(inp):
    x = inp["springs_x"].astype(np.float64)
    ia, ib = inp["springs_ia"], inp["springs_ib"]
    d = x[ia] - x[ib]
    ln = np.linalg.norm(d, axis=1)
    rest = inp["springs_rest"].astype(np.float64)
    return ia, ib, d, ln, rest


def damp_ref(v32: np.ndarray, g32: np.ndarray, chunk: int = 1 << 17):
    """Forward and adjoint of damp in float64, with the loop's states kept per chunk of lanes."""
    out = np.empty((len(v32), 3))
    gv = np.empty((len(v32), 3))
    for s in range(0, len(v32), chunk):
        w = v32[s:s + chunk].astype(np.float64)
        states = []
        for _ in range(DAMP_STEPS):
            states.append(w)
            ln = np.linalg.norm(w, axis=1, keepdims=True)
            w = np.where(ln > DAMP_THRESHOLD, w * (DAMP_RADIUS / ln), w * DAMP_C)
        out[s:s + chunk] = w
        g = g32[s:s + chunk].astype(np.float64)
        for w in reversed(states):
            ln = np.linalg.norm(w, axis=1, keepdims=True)
            uu = w / ln
            scaled = (g - uu * np.sum(uu * g, axis=1, keepdims=True)) * (DAMP_RADIUS / ln)
            g = np.where(ln > DAMP_THRESHOLD, scaled, g * DAMP_C)
        gv[s:s + chunk] = g
    return out, gv


def references(inp) -> dict[str, tuple[list[np.ndarray], list[np.ndarray]]]:
    """Per case: the float64 results, and the magnitude each is measured against (for a sum of
    atomics, the sum of the absolute values of its terms, since their order is free)."""
    refs = {}
    x, y, g = (inp[k].astype(np.float64) for k in ("saxpy_x", "saxpy_y", "saxpy_g"))
    refs["saxpy_fwd"] = ([SAXPY_A * x + y], [np.abs(SAXPY_A * x) + np.abs(y)])
    refs["saxpy_adj"] = ([SAXPY_A * g, g], [np.abs(SAXPY_A * g), np.abs(g)])
    ia, ib, d, ln, rest = springs_terms(inp)
    sc = SPRING_K * (ln - rest) / ln
    force = d * sc[:, None]
    f = scatter3(ib, force, N_PARTICLES) - scatter3(ia, force, N_PARTICLES)
    fmag = scatter3(ib, np.abs(force), N_PARTICLES) + scatter3(ia, np.abs(force), N_PARTICLES)
    refs["springs_fwd"] = ([f], [fmag])
    gf = inp["springs_g"].astype(np.float64)
    gg = gf[ib] - gf[ia]
    gd = gg * sc[:, None] + d * (np.sum(gg * d, axis=1) * SPRING_K * rest / ln**3)[:, None]
    gx = scatter3(ia, gd, N_PARTICLES) - scatter3(ib, gd, N_PARTICLES)
    gmag = scatter3(ia, np.abs(gd), N_PARTICLES) + scatter3(ib, np.abs(gd), N_PARTICLES)
    refs["springs_adj"] = ([gx], [gmag])
    out, gv = damp_ref(inp["damp_v"], inp["damp_g"])
    refs["damp_fwd"] = ([out], [np.abs(out)])
    refs["damp_adj"] = ([gv], [np.abs(gv)])
    return refs


# Relative tolerances for float32 against float64: saxpy rounds once; the atomics sum ~8 terms
# per particle in any order; damp runs 16 dependent steps whose scale-backs project the
# gradient (I - u u^T), which loses up to ~1e-4 in a few dozen lanes in all four systems alike.
RTOL = {"saxpy": 1e-6, "springs": 1e-5, "damp": 1e-4}


def check(system: str, case: str, got: list[np.ndarray], ref) -> str:
    want, mag = ref
    rtol = RTOL[case.split("_")[0]]
    worst = 0.0
    for i, (g, w, m) in enumerate(zip(got, want, mag)):
        g = np.asarray(g, np.float64).reshape(w.shape)
        # A Vec3 is measured against its length (one component of it may cancel); the floor keeps
        # a value that cancels to ~0 from demanding an exact zero.
        if m.ndim == 2:
            m = np.repeat(np.linalg.norm(m, axis=1, keepdims=True), 3, axis=1)
        scale = m + 1e-3 * float(np.max(m))
        err = np.abs(g - w) / scale
        bad = ~(err <= rtol)
        worst = max(worst, float(np.nanmax(err)) if not np.isnan(err).all() else np.inf)
        if bad.any():
            j = int(np.flatnonzero(bad.reshape(-1))[0])
            raise Mismatch(f"{system} {case} result {i}: {int(bad.sum())} of {bad.size} values off by more than "
                           f"{rtol:g} relative; first at flat index {j}: got {g.reshape(-1)[j]!r}, "
                           f"float64 reference {w.reshape(-1)[j]!r}")
    return f"{worst:.1e}"


# ---------------------------------------------------------------------------------------------
# The four systems. Each has time(case) -> ms, and results(case) -> list of arrays of one
# run from zeroed outputs and gradients.


class ChildProcess:
    """One of the C++ sides (kjit, the hand loop), driven over its stdin."""

    def __init__(self, argv, data_dir, env=None):
        self.data_dir = data_dir
        self.p = subprocess.Popen(argv + [data_dir], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, env=env)
        if self._read() != "ready":
            raise RuntimeError(f"{argv[0]} did not start")

    def _read(self) -> str:
        line = self.p.stdout.readline().strip()
        if not line:
            raise RuntimeError(f"child exited (rc {self.p.poll()})")
        if line.startswith("error"):
            raise RuntimeError(line)
        return line

    def ask(self, cmd: str) -> str:
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        return self._read()

    def time(self, case: str) -> float:
        return float(self.ask(f"time {case}"))

    def results(self, case: str, shapes) -> list[np.ndarray]:
        path = os.path.join(self.data_dir, "result.f32")
        self.ask(f"check {case} {path}")
        flat = np.fromfile(path, np.float32)
        parts, at = [], 0
        for shape in shapes:
            size = int(np.prod(shape))
            parts.append(flat[at:at + size].reshape(shape))
            at += size
        return parts

    def close(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            pass
        self.p.wait(timeout=30)


class DrJit:
    """Dr.Jit's LLVM backend (drjit.llvm.ad); Vec3 arrays are its Array3f (three float arrays)."""

    def __init__(self, inp):
        v3 = lambda a: Array3f(np.ascontiguousarray(a.T))  # noqa: E731
        self.x, self.y, self.g = (Float(inp[k]) for k in ("saxpy_x", "saxpy_y", "saxpy_g"))
        self.px, self.pg = v3(inp["springs_x"]), v3(inp["springs_g"])
        self.ia, self.ib = UInt32(inp["springs_ia"].astype(np.uint32)), UInt32(inp["springs_ib"].astype(np.uint32))
        self.rest = Float(inp["springs_rest"])
        self.dv, self.dg = v3(inp["damp_v"]), v3(inp["damp_g"])
        dr.make_opaque(self.x, self.y, self.g, self.px, self.pg, self.ia, self.ib, self.rest, self.dv, self.dg)
        dr.enable_grad(self.x, self.y, self.px, self.dv)
        self.steps = Int32(DAMP_STEPS)
        dr.make_opaque(self.steps)  # a run-time trip count, as kjit's Int parameter
        dr.sync_thread()

    def _backward(self, out, seed, *wrt, accumulate=False):
        for a in wrt:
            if not accumulate:
                dr.clear_grad(a)
        dr.set_grad(out, seed)
        dr.enqueue(dr.ADMode.Backward, out)
        dr.traverse(dr.ADMode.Backward)
        grads = [dr.grad(a) for a in wrt]
        dr.eval(*grads)
        return grads

    def _springs(self, px):
        d = dr.gather(Array3f, px, self.ia) - dr.gather(Array3f, px, self.ib)
        ln = dr.norm(d)
        force = d * (SPRING_K * (ln - self.rest) / ln)
        f = dr.zeros(Array3f, N_PARTICLES)
        dr.scatter_add(f, -force, self.ia)
        dr.scatter_add(f, force, self.ib)
        return f

    def run(self, case):
        if case == "saxpy_fwd":
            r = [SAXPY_A * dr.detach(self.x) + dr.detach(self.y)]
            dr.eval(r)
        elif case in ("saxpy_adj", "saxpy_adj_acc"):
            r = self._backward(SAXPY_A * self.x + self.y, self.g, self.x, self.y, accumulate=case.endswith("_acc"))
        elif case == "springs_fwd":
            r = [self._springs(dr.detach(self.px))]
            dr.eval(r)
        elif case == "springs_adj":
            r = self._backward(self._springs(self.px), self.pg, self.px)
        elif case == "damp_fwd":
            r = [damp_drjit(dr.detach(self.dv), DAMP_C, self.steps)]
            dr.eval(r)
        else:
            r = self._backward(damp_drjit(self.dv, DAMP_C, self.steps), self.dg, self.dv)
        dr.sync_thread()
        return r

    def time(self, case):
        t = time.perf_counter()
        self.run(case)
        return (time.perf_counter() - t) * 1e3

    def results(self, case, shapes):
        for a in (self.x, self.y):  # an accumulating case's one run starts from zero gradients
            dr.clear_grad(a)
        return [np.asarray(a.numpy()).T if len(s) == 2 else a.numpy() for a, s in zip(self.run(case), shapes)]


@dr.syntax
def damp_drjit(v, c, steps):
    # A symbolic loop with a symbolic branch, as kjit's For and If; max_iterations lets Dr.Jit
    # keep the loop's states for its reverse-mode derivative.
    w = Array3f(v)
    i = Int32(0)
    while dr.hint(i < steps, max_iterations=DAMP_STEPS):
        ln = dr.norm(w)
        if ln > DAMP_THRESHOLD:
            w = w * (DAMP_RADIUS / ln)
        else:
            w = w * c
        i += 1
    return w


class Warp:
    """Warp's cpu device (one thread); adjoints through wp.Tape, recorded once, replayed."""

    def __init__(self, inp):
        import warp as wp
        wp.config.quiet = True
        wp.init()
        self.wp = wp
        k = warp_kernels(wp)
        self.k = k
        dev = "cpu"
        arr = lambda a, dt=wp.float32, grad=False: wp.array(a, dtype=dt, device=dev, requires_grad=grad)  # noqa: E731
        self.x, self.y = arr(inp["saxpy_x"], grad=True), arr(inp["saxpy_y"], grad=True)
        self.out = wp.zeros(N_SAXPY, dtype=wp.float32, device=dev, requires_grad=True)
        self.g = arr(inp["saxpy_g"])
        self.px = arr(inp["springs_x"], wp.vec3, True)
        self.ia, self.ib = arr(inp["springs_ia"], wp.int32), arr(inp["springs_ib"], wp.int32)
        self.rest = arr(inp["springs_rest"])
        self.f = wp.zeros(N_PARTICLES, dtype=wp.vec3, device=dev, requires_grad=True)
        self.pg = arr(inp["springs_g"], wp.vec3)
        self.dv = arr(inp["damp_v"], wp.vec3, True)
        self.dout = wp.zeros(N_DAMP, dtype=wp.vec3, device=dev, requires_grad=True)
        self.dg = arr(inp["damp_g"], wp.vec3)
        self.tapes = {}
        for name, launch, out, seed in (
            ("saxpy", self._saxpy, self.out, self.g),
            ("springs", self._springs, self.f, self.pg),
            ("damp", self._damp, self.dout, self.dg),
        ):
            tape = wp.Tape()
            with tape:
                launch()
            self.tapes[name] = tape
        self.seeds = {"saxpy": (self.out, self.g), "springs": (self.f, self.pg), "damp": (self.dout, self.dg)}

    def _reseed(self, name):
        # Warp's adjoint of a plain store `out[i] = v` consumes out.grad[i] (zeroes it: the store
        # overwrote the element), so every backward needs the seed again; copied untimed.
        out, seed = self.seeds[name]
        out.grad.assign(seed)

    def _saxpy(self):
        self.wp.launch(self.k["saxpy"], dim=N_SAXPY, inputs=[self.x, self.y, SAXPY_A], outputs=[self.out], device="cpu")

    def _springs(self):
        self.wp.launch(self.k["springs"], dim=N_SPRINGS, inputs=[self.px, self.ia, self.ib, self.rest, SPRING_K],
                       outputs=[self.f], device="cpu")

    def _damp(self):
        self.wp.launch(self.k["damp"], dim=N_DAMP, inputs=[self.dv, DAMP_C], outputs=[self.dout], device="cpu")

    def run(self, case):
        name, direction = case.split("_")
        if direction == "fwd":
            {"saxpy": self._saxpy, "springs": self._springs, "damp": self._damp}[name]()
        else:
            self.tapes[name].backward()
        self.wp.synchronize_device("cpu")

    def time(self, case):
        name, direction = case.split("_")
        if direction == "adj":
            self._reseed(name)
        t = time.perf_counter()
        self.run(case)
        return (time.perf_counter() - t) * 1e3

    def results(self, case, shapes):
        name, direction = case.split("_")
        if direction == "adj":
            self._reseed(name)
        if direction == "fwd":
            target = {"saxpy": [self.out], "springs": [self.f], "damp": [self.dout]}[name]
        else:
            target = {"saxpy": [self.x.grad, self.y.grad], "springs": [self.px.grad], "damp": [self.dv.grad]}[name]
        for a in target:
            a.zero_()
        self.run(case)
        return [a.numpy().copy() for a in target]


def warp_kernels(wp):
    @wp.kernel
    def saxpy(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32), a: wp.float32,
              out: wp.array(dtype=wp.float32)):
        i = wp.tid()
        out[i] = a * x[i] + y[i]

    @wp.kernel
    def springs(x: wp.array(dtype=wp.vec3), ia: wp.array(dtype=wp.int32), ib: wp.array(dtype=wp.int32),
                rest: wp.array(dtype=wp.float32), k: wp.float32, f: wp.array(dtype=wp.vec3)):
        s = wp.tid()
        a = ia[s]
        b = ib[s]
        d = x[a] - x[b]
        ln = wp.length(d)
        force = d * (k * (ln - rest[s]) / ln)
        wp.atomic_add(f, a, -force)
        wp.atomic_add(f, b, force)

    @wp.kernel
    def damp(v: wp.array(dtype=wp.vec3), c: wp.float32, out: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        w = v[i]
        # A constant trip count: Warp unrolls it (max_unroll is 16), which its adjoint needs for
        # a loop-carried local; a dynamic range would give wrong gradients.
        for _t in range(16):
            ln = wp.length(w)
            if ln > 1.5:
                w = w * (0.5 / ln)
            else:
                w = w * c
        out[i] = w

    return {"saxpy": saxpy, "springs": springs, "damp": damp}


# ---------------------------------------------------------------------------------------------


def result_shapes(case):
    name, direction = case.split("_")
    if name == "saxpy":
        return [(N_SAXPY,)] * (1 if direction == "fwd" else 2)
    return [((N_PARTICLES if name == "springs" else N_DAMP), 3)]


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def fmt_time(v):
    return f"{v:.2f}" if v < 100 else f"{v:.0f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=21, help="interleaved repetitions of every case")
    ap.add_argument("--size-rounds", type=int, default=3, help="pool / one-thread alternations per size")
    args = ap.parse_args()
    t_start = time.perf_counter()
    bench_dir = os.path.join(args.build, "bench")
    kjit_exe = os.path.join(bench_dir, "bench_side_by_side_kjit")
    hand_exe = os.path.join(bench_dir, "bench_side_by_side_hand")
    for exe in (kjit_exe, hand_exe):
        if not os.access(exe, os.X_OK):
            sys.exit(f"missing {exe}: build it with ninja -C {args.build} {os.path.basename(exe)}")

    import warp
    print(f"machine: {cpu_model()}, {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}; "
          f"drjit {dr.__version__}, warp {warp.__version__}, numpy {np.__version__}")
    with tempfile.TemporaryDirectory(prefix="kjit-side-by-side-") as data_dir:
        inp = make_inputs()
        for name, a in inp.items():
            a.tofile(os.path.join(data_dir, name + (".i32" if a.dtype == np.int32 else ".f32")))
        refs = references(inp)
        systems = {
            "kjit": ChildProcess([kjit_exe], data_dir),
            "drjit": DrJit(inp),
            "warp": Warp(inp),
            # libgomp's threads spin for a while after each parallel region (some 300,000 rounds
            # by default: milliseconds here) and took a core from whoever ran next: kjit, in
            # every case. Waiting passively leaves the hand loop's own times as they were.
            "hand": ChildProcess([hand_exe], data_dir,
                                 env={**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "passive")}),
        }
        print(f"set-up (inputs, float64 references, Warp's compiles): {time.perf_counter() - t_start:.1f} s")
        try:
            # Warm-up: compiles (kjit's and Dr.Jit's kernel caches, Warp's modules) and first touches.
            for case in CASES:
                for s in systems.values():
                    s.time(case)
                    s.time(case)
            print("\ncheck against float64 (worst error relative to the terms' magnitude):")
            failures = []
            for case in CASES:
                line = []
                for name, s in systems.items():
                    try:
                        line.append(f"{name} {check(name, case, s.results(case, result_shapes(case)), refs[case])}")
                    except Mismatch as e:
                        failures.append(str(e))
                        line.append(f"{name} MISMATCH")
                extra = [("hand-1t", "hand", "_1t")] if case in ONE_THREAD_CASES else []
                extra += [("drjit-acc", "drjit", "_acc")] if case in ACCUMULATING_CASES else []
                for label, system, suffix in extra:
                    try:
                        err = check(label, case, systems[system].results(case + suffix, result_shapes(case)), refs[case])
                        line.append(f"{label} {err}")
                    except Mismatch as e:
                        failures.append(str(e))
                        line.append(f"{label} MISMATCH")
                print(f"  {case:12s} " + ", ".join(line))
            if failures:
                print("\nFAILED: results that do not match the float64 reference:", file=sys.stderr)
                for f in failures:
                    print("  " + f, file=sys.stderr)
                return 1

            times = {(c, s): [] for c in CASES for s in SYSTEMS}
            times.update({(c, "hand-1t"): [] for c in ONE_THREAD_CASES})
            times.update({(c, "drjit-acc"): [] for c in ACCUMULATING_CASES})
            for case in ACCUMULATING_CASES:
                systems["drjit"].time(case + "_acc")  # its kernel (reading the held gradients) compiled
            for _ in range(args.reps):
                for case in CASES:
                    for label, system, suffix in turns(case):
                        times[(case, label)].append(systems[system].time(case + suffix))
            report(times, args.reps)
            sizes(kjit_exe, data_dir, systems["kjit"], args.size_rounds)
        finally:
            for s in systems.values():
                if isinstance(s, ChildProcess):
                    s.close()
    print(f"\ntotal wall time: {time.perf_counter() - t_start:.0f} s; load average {os.getloadavg()[0]:.1f}")
    return 0


def turns(case):
    """The timings of one case in one repetition, in order: (label, system, case suffix). Each
    extra run follows its own system's, never precedes kjit's: Dr.Jit's workers spin for some
    20 ms after each of its launches (21 ms of CPU during a 300 ms sleep after a synchronized
    one), which would take a core from the next case's first system."""
    out = []
    for name in SYSTEMS:
        out.append((name, name, ""))
        if name == "drjit" and case in ACCUMULATING_CASES:
            out.append(("drjit-acc", "drjit", "_acc"))
        if name == "hand" and case in ONE_THREAD_CASES:
            out.append(("hand-1t", "hand", "_1t"))
    return out


def report(times, reps):
    med = {k: statistics.median(v) for k, v in times.items()}
    mn = {k: min(v) for k, v in times.items()}
    print(f"\nms per launch, median (min) of {reps} interleaved repetitions:")
    print(f"| case | {' | '.join(SYSTEMS)} | kjit/Dr.Jit | kjit/hand | kjit/Warp |")
    print("|---|" + "---|" * (len(SYSTEMS) + 3))
    for case in CASES:
        cells = [f"{fmt_time(med[(case, s)])} ({fmt_time(mn[(case, s)])})" for s in SYSTEMS]
        k = med[(case, "kjit")]
        ratios = [f"{k / med[(case, s)]:.2f}" for s in ("drjit", "hand", "warp")]
        print(f"| {case} | " + " | ".join(cells + ratios) + " |")
    print("\nsprings on one thread with plain adds (hand-1t, as Warp's cpu runs), ms, median (min):")
    for case in ONE_THREAD_CASES:
        h1 = med[(case, "hand-1t")]
        print(f"  {case}: hand-1t {fmt_time(h1)} ({fmt_time(mn[(case, 'hand-1t')])}); "
              f"warp/hand-1t {med[(case, 'warp')] / h1:.2f}, hand/hand-1t {med[(case, 'hand')] / h1:.2f}, "
              f"kjit/hand-1t {med[(case, 'kjit')] / h1:.2f}")
    print("\nsaxpy adjoint with Dr.Jit accumulating into its gradients (drjit-acc, the others' 5 streams), ms, "
          "median (min):")
    for case in ACCUMULATING_CASES:
        acc = med[(case, "drjit-acc")]
        print(f"  {case}: drjit-acc {fmt_time(acc)} ({fmt_time(mn[(case, 'drjit-acc')])}); "
              f"kjit/drjit-acc {med[(case, 'kjit')] / acc:.2f}, hand/drjit-acc {med[(case, 'hand')] / acc:.2f}, "
              f"drjit/drjit-acc {med[(case, 'drjit')] / acc:.2f}")
    print("\nadjoint / forward (medians):")
    print(f"| kernel | {' | '.join(SYSTEMS)} |")
    print("|---|" + "---|" * len(SYSTEMS))
    for kernel in ("saxpy", "springs", "damp"):
        cells = [f"{med[(kernel + '_adj', s)] / med[(kernel + '_fwd', s)]:.2f}" for s in SYSTEMS]
        print(f"| {kernel} | " + " | ".join(cells) + " |")


def sizes(kjit_exe, data_dir, pool, rounds):
    """saxpy launches at 1K..16M on the pool (the running kjit child) and on one thread (a second
    child with KJIT_NUM_THREADS=1, runtime/src/thread_pool.cpp's knob), alternating."""
    one = ChildProcess([kjit_exe], data_dir, env={**os.environ, "KJIT_NUM_THREADS": "1"})
    try:
        plan = [(1 << 10, 4000), (1 << 16, 400), (1 << 20, 30), (1 << 24, 2)]
        print(f"\nkjit saxpy forward, µs per launch (median of {rounds} rounds of 7 batches' medians; min):")
        print("| n | pool | one thread | pool / one |")
        print("|---|---|---|---|")
        for n, reps in plan:
            tp, t1 = [], []
            for _ in range(rounds):
                tp.append(float(pool.ask(f"size {n} {reps}")) * 1e3)
                t1.append(float(one.ask(f"size {n} {reps}")) * 1e3)
            p, o = statistics.median(tp), statistics.median(t1)
            print(f"| {n} | {fmt_time(p)} ({fmt_time(min(tp))}) | {fmt_time(o)} ({fmt_time(min(t1))}) | {p / o:.2f} |")
    finally:
        one.close()


if __name__ == "__main__":
    sys.exit(main())
