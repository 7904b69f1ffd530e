# kjit's noise and random builtins against Warp 1.19's on the cpu, side by side in one run:
# the same kernels (bench/noise_side_by_side/main.cpp is kjit's side) over the same 2^20 points,
# rounds interleaved, medians of each side's per-launch times; kjit with one thread (Warp's cpu
# launches run on one) and with all cores. Each kernel's outputs are compared bit for bit.
#   bench/noise_vs_warp.sh [BUILD_DIR] [--rounds R] [--n N]
import argparse, os, subprocess, tempfile, time
import numpy as np
import warp as wp

wp.config.quiet = True
wp.init()


@wp.kernel
def noise2(p: wp.array(dtype=wp.vec4), out: wp.array(dtype=float)):
    i = wp.tid()
    q = p[i]
    out[i] = wp.noise(wp.uint32(42), wp.vec2(q[0], q[1]))


@wp.kernel
def noise3(p: wp.array(dtype=wp.vec4), out: wp.array(dtype=float)):
    i = wp.tid()
    q = p[i]
    out[i] = wp.noise(wp.uint32(42), wp.vec3(q[0], q[1], q[2]))


@wp.kernel
def noise4(p: wp.array(dtype=wp.vec4), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.noise(wp.uint32(42), p[i])


@wp.kernel
def pnoise3(p: wp.array(dtype=wp.vec4), out: wp.array(dtype=float)):
    i = wp.tid()
    q = p[i]
    out[i] = wp.pnoise(wp.uint32(42), wp.vec3(q[0], q[1], q[2]), 8, 8, 8)


@wp.kernel
def curlnoise3(p: wp.array(dtype=wp.vec4), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    q = p[i]
    out[i] = wp.curlnoise(wp.uint32(42), wp.vec3(q[0], q[1], q[2]), wp.uint32(3), 2.0, 0.5)


@wp.kernel
def fbm3(p: wp.array(dtype=wp.vec4), out: wp.array(dtype=float)):
    i = wp.tid()
    q = p[i]
    x = wp.vec3(q[0], q[1], q[2])
    s = float(0.0)
    amp = float(1.0)
    freq = float(1.0)
    for k in range(4):
        s = s + amp * wp.noise(wp.uint32(42), x * freq)
        amp = amp * 0.5
        freq = freq * 2.0
    out[i] = s


@wp.kernel
def randn_draws(p: wp.array(dtype=wp.vec4), out: wp.array(dtype=float)):
    i = wp.tid()
    s = wp.rand_init(42, i)
    out[i] = wp.randn(s) + wp.randn(s) + wp.randn(s) + wp.randn(s)


KERNELS = {"noise2": noise2, "noise3": noise3, "noise4": noise4, "pnoise3": pnoise3,
           "curlnoise3": curlnoise3, "fbm3": fbm3, "randn": randn_draws}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n", type=int, default=1 << 20)
    a = ap.parse_args()
    exe = os.path.join(a.build, "bench", "bench_noise_side_by_side")
    rng = np.random.default_rng(7)
    pts = rng.uniform(-20, 20, (a.n, 4)).astype(np.float32)
    tmp = tempfile.mkdtemp(prefix="noise-bench-")
    pts_file = os.path.join(tmp, "points.bin")
    pts.tofile(pts_file)
    p = wp.array(pts, dtype=wp.vec4, device="cpu")
    times = {k: {"warp": [], "kjit1": [], "kjit": []} for k in KERNELS}
    same = {}
    for r in range(a.rounds):
        for name, kernel in KERNELS.items():
            out = wp.zeros(a.n, dtype=wp.vec3 if name == "curlnoise3" else float, device="cpu")
            wp.launch(kernel, dim=a.n, inputs=[p, out], device="cpu")  # compile, warm up
            wp.synchronize()
            ms = []
            for _ in range(a.reps):
                t0 = time.perf_counter()
                wp.launch(kernel, dim=a.n, inputs=[p, out], device="cpu")
                wp.synchronize()
                ms.append((time.perf_counter() - t0) * 1e3)
            times[name]["warp"].append(float(np.median(ms)))
            for side, threads in (("kjit1", "1"), ("kjit", str(os.cpu_count()))):
                out_file = os.path.join(tmp, f"{name}.{side}.bin")
                env = dict(os.environ, KJIT_NUM_THREADS=threads)
                res = subprocess.run([exe, name, pts_file, out_file, str(a.reps)], capture_output=True, text=True, env=env, check=True)
                times[name][side].append(float(res.stdout.split()[0]))
            ours = np.fromfile(os.path.join(tmp, f"{name}.kjit.bin"), dtype=np.float32)
            theirs = out.numpy().reshape(-1).astype(np.float32)
            same[name] = int(np.sum(ours.view(np.uint32) == theirs.view(np.uint32))), ours.size
    print(f"{a.n} points, {a.rounds} rounds x {a.reps} launches, medians of the rounds' medians (ms per launch); "
          f"cpu threads: Warp 1, kjit 1 and {os.cpu_count()}")
    print("| kernel | Warp 1.19 | kjit, 1 thread | kjit / Warp | kjit, all cores | identical outputs |")
    print("|---|---|---|---|---|---|")
    for name in KERNELS:
        w, k1, k = (float(np.median(times[name][s])) for s in ("warp", "kjit1", "kjit"))
        print(f"| {name} | {w:.2f} | {k1:.2f} | {k1 / w:.2f} | {k:.2f} | {same[name][0]} of {same[name][1]} |")


if __name__ == "__main__":
    main()
