# kjit's hash grid against Warp 1.19's on the cpu, side by side in one run: the same 128^3 grid
# over the same points (uniform in a cube, about 30 neighbours within the radius each), a build
# and a neighbour-sum launch (bench/hash_grid_side_by_side/main.cpp is kjit's side), rounds
# interleaved, medians of each side's per-call times; kjit with one thread (Warp's cpu launches
# and builds run on one) and with all cores, its module without lane functions
# (ModuleOptions::cpu_lanes = false; also timed with them). The sums are compared.
#   bench/hash_grid_vs_warp.sh [BUILD_DIR] [--rounds R] [--reps K] [--n N]
import argparse, os, subprocess, tempfile, time
import numpy as np
import warp as wp

wp.config.quiet = True
wp.init()


@wp.kernel
def neighbour_sum(grid: wp.uint64, x: wp.array(dtype=wp.vec3), w: wp.array(dtype=float), r: float,
                  out: wp.array(dtype=float)):
    i = wp.hash_grid_point_id(grid, wp.tid())
    p = x[i]
    q = wp.hash_grid_query(grid, p, r)
    j = int(0)
    s = float(0.0)
    while wp.hash_grid_query_next(q, j):
        if wp.length_sq(x[j] - p) <= r * r:
            s += w[j]
    out[i] = s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--n", type=int, default=1 << 20)
    a = ap.parse_args()
    exe = os.path.join(a.build, "bench", "bench_hash_grid_side_by_side")
    side = float(a.n) ** (1.0 / 3.0)  # one point per unit volume
    radius = 1.93                      # 4/3 pi r^3 = 30 neighbours
    rng = np.random.default_rng(7)
    pts = rng.uniform(0, side, (a.n, 3)).astype(np.float32)
    weights = (1.0 + (np.arange(a.n) % 5)).astype(np.float32)
    tmp = tempfile.mkdtemp(prefix="hash-grid-bench-")
    pts_file = os.path.join(tmp, "points.bin")
    pts.tofile(pts_file)
    x = wp.array(pts, dtype=wp.vec3, device="cpu")
    w = wp.array(weights, dtype=float, device="cpu")
    out = wp.zeros(a.n, dtype=float, device="cpu")
    grid = wp.HashGrid(128, 128, 128, device="cpu")
    cores = str(os.cpu_count())
    sides = (("kjit1", "1", "", ""), ("kjit", cores, "", ""), ("kjit_for", cores, "1", ""), ("kjit_lanes", cores, "", "1"))
    times = {k + "_" + s: [] for k in ["warp"] + [n for n, _, _, _ in sides] for s in ("build", "query")}

    def timed(f):
        f()
        wp.synchronize()
        ms = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            f()
            wp.synchronize()
            ms.append((time.perf_counter() - t0) * 1e3)
        return float(np.median(ms))

    for r in range(a.rounds):
        times["warp_build"].append(timed(lambda: grid.build(x, radius)))
        times["warp_query"].append(timed(lambda: wp.launch(neighbour_sum, dim=a.n, inputs=[grid.id, x, w, radius, out], device="cpu")))
        for name, threads, use_for, lanes in sides:
            env = dict(os.environ, KJIT_NUM_THREADS=threads, KJIT_BENCH_QUERY_FOR=use_for, KJIT_BENCH_LANES=lanes)
            res = subprocess.run([exe, pts_file, repr(radius), os.path.join(tmp, "sums.bin"), str(a.reps)],
                                 capture_output=True, text=True, env=env, check=True)
            b, q = (float(v) for v in res.stdout.split())
            times[name + "_build"].append(b)
            times[name + "_query"].append(q)
    ours = np.fromfile(os.path.join(tmp, "sums.bin"), dtype=np.float32)
    theirs = out.numpy()
    rel = np.abs(ours - theirs) / np.maximum(1.0, np.abs(theirs))
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"{a.n} points, radius {radius} (about 30 neighbours each), 128^3 cells; {a.rounds} rounds x {a.reps} calls, "
          f"medians (ms); cpu threads: Warp 1, kjit 1 and {os.cpu_count()}")
    print("| step | Warp 1.19 | kjit, 1 thread | kjit / Warp | kjit, all cores | kjit all / Warp |")
    print("|---|---|---|---|---|---|")
    for step in ("build", "query"):
        wv, k1, k = med["warp_" + step], med["kjit1_" + step], med["kjit_" + step]
        print(f"| {step} | {wv:.1f} | {k1:.1f} | {k1 / wv:.2f} | {k:.1f} | {k / wv:.2f} |")
    for name, what in (("kjit_for", "through hash_grid_query_for (nested For loops)"),
                       ("kjit_lanes", "in 16-thread lane functions (ModuleOptions::cpu_lanes on)")):
        print(f"query {what}, all cores: {med[name + '_query']:.1f} ms ({med[name + '_query'] / med['warp_query']:.2f} of Warp's)")
    print(f"sums: {int(np.sum(ours == theirs))} of {a.n} identical, largest relative difference {rel.max():.2e}, "
          f"mean neighbours x weight {theirs.mean():.1f}")


if __name__ == "__main__":
    main()
