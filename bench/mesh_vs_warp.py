# kjit's meshes against Warp 1.19's wp.Mesh on the cpu, side by side in one run: the same
# triangles (a noisy height field of --tris triangles), the same query points and rays; rounds
# interleaved (Warp, then kjit's process, bench/mesh_side_by_side/main.cpp), medians of each
# side's times. Rows: BVH build, closest-point queries (mesh_query_point_no_sign), ray casts
# (mesh_query_ray). Results are compared: closest distances and ray t.
#   bench/mesh_vs_warp.sh [BUILD_DIR] [--rounds R] [--reps K] [--tris N] [--queries Q]
import argparse, os, statistics, subprocess, tempfile, time
import numpy as np
import warp as wp

wp.config.quiet = True
wp.init()


@wp.kernel
def closest(mesh: wp.uint64, pts: wp.array(dtype=wp.vec3), face: wp.array(dtype=int), uv: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    q = wp.mesh_query_point_no_sign(mesh, pts[i], 1.0e6)
    f = int(-1)
    if q.result:
        f = q.face
    face[i] = f
    uv[i] = wp.vec2(q.u, q.v)


@wp.kernel
def ray(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3), face: wp.array(dtype=int),
        t: wp.array(dtype=float)):
    i = wp.tid()
    q = wp.mesh_query_ray(mesh, starts[i], dirs[i], 1.0e6)
    f = int(-1)
    if q.result:
        f = q.face
    face[i] = f
    t[i] = q.t


def height_field(tris, rng):
    side = int(np.sqrt(tris / 2)) + 1
    x, y = np.meshgrid(np.linspace(-1, 1, side), np.linspace(-1, 1, side), indexing="ij")
    z = 0.1 * np.sin(6 * x) * np.cos(5 * y) + 0.01 * rng.standard_normal(x.shape)
    pts = np.stack([x, y, z], -1).reshape(-1, 3).astype(np.float32)
    i, j = np.meshgrid(np.arange(side - 1), np.arange(side - 1), indexing="ij")
    a = (i * side + j).ravel()
    b, c, d = a + side, a + 1, a + side + 1
    idx = np.stack([np.stack([a, b, c], -1), np.stack([c, b, d], -1)], 1).reshape(-1).astype(np.int32)
    return pts, idx


def positions(pts, idx, face, uv):
    f = np.maximum(face, 0)
    tri = pts[idx.reshape(-1, 3)[f]]
    u, v = uv[:, 0:1], uv[:, 1:2]
    return tri[:, 0] * u + tri[:, 1] * v + tri[:, 2] * (1 - u - v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tris", type=int, default=1 << 20)
    ap.add_argument("--queries", type=int, default=1 << 20)
    a = ap.parse_args()
    exe = os.path.join(a.build, "bench", "bench_mesh_side_by_side")
    rng = np.random.default_rng(7)
    pts, idx = height_field(a.tris, rng)
    n = a.queries
    queries = (rng.uniform(-1.1, 1.1, (n, 3)) * [1, 1, 0.5]).astype(np.float32)
    starts = np.concatenate([rng.uniform(-1.2, 1.2, (n, 2)), np.full((n, 1), 2.0)], 1).astype(np.float32)
    dirs = np.concatenate([rng.uniform(-0.3, 0.3, (n, 2)), np.full((n, 1), -1.0)], 1).astype(np.float32)
    tmp = tempfile.mkdtemp(prefix="kjit_mesh_bench_")
    for name, arr in [("points", pts), ("indices", idx), ("queries", queries), ("starts", starts), ("dirs", dirs)]:
        arr.tofile(os.path.join(tmp, name + ".bin"))
    dev = "cpu"
    wpts, widx = wp.array(pts, dtype=wp.vec3, device=dev), wp.array(idx, dtype=int, device=dev)
    mesh = wp.Mesh(points=wpts, indices=widx)
    wq, ws, wd = (wp.array(x, dtype=wp.vec3, device=dev) for x in (queries, starts, dirs))
    face, uv, t = wp.zeros(n, dtype=int, device=dev), wp.zeros(n, dtype=wp.vec2, device=dev), wp.zeros(n, dtype=float, device=dev)
    wp.launch(closest, n, inputs=[mesh.id, wq, face, uv], device=dev)  # compile both kernels
    wp.launch(ray, n, inputs=[mesh.id, ws, wd, face, t], device=dev)

    def warp_time(what):
        times = []
        for r in range(a.reps):
            t0 = time.perf_counter()
            if what == "build":
                m = wp.Mesh(points=wpts, indices=widx)
            elif what == "closest":
                wp.launch(closest, n, inputs=[mesh.id, wq, face, uv], device=dev)
            else:
                wp.launch(ray, n, inputs=[mesh.id, ws, wd, face, t], device=dev)
            wp.synchronize_device(dev)
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    def kjit_time(what):
        out = subprocess.run([exe, what, tmp, str(a.reps)], check=True, capture_output=True, text=True).stdout.split()
        return float(out[0])

    # Embree (bench_mesh_rays_embree, built where libembree-dev is installed): the same mesh and
    # rays in its input format, its BVH build and rtcIntersect1 on every core.
    embree = os.path.join(a.build, "bench", "bench_mesh_rays_embree")
    embree_input = os.path.join(tmp, "embree_input.bin")
    with open(embree_input, "wb") as f:
        np.array([len(pts), len(idx) // 3, n], np.int64).tofile(f)
        for arr in (pts, idx.astype(np.int32), starts, dirs):
            arr.tofile(f)

    def embree_time():
        out = subprocess.run([embree, embree_input, str(a.reps)], check=True, capture_output=True, text=True).stdout.split()
        return float(out[2]), float(out[4]), int(out[12])

    rows = {}
    for r in range(a.rounds):
        if os.path.exists(embree):
            b, t_ms, embree_hits = embree_time()
            rows.setdefault("embree", ([], [], []))
            rows["embree"][0].append(b)
            rows["embree"][1].append(t_ms)
        for what in ("build", "closest", "ray"):
            w = warp_time(what)
            k = kjit_time(what)
            rows.setdefault(what, ([], []))
            rows[what][0].append(w)
            rows[what][1].append(k)
    # Results: closest-point distances and ray parameters from both sides.
    subprocess.run([exe, "closest", tmp, "1"], check=True, capture_output=True)
    kf, kuv = np.fromfile(os.path.join(tmp, "kjit_face.bin"), np.int32), np.fromfile(os.path.join(tmp, "kjit_uv.bin"), np.float32).reshape(-1, 2)
    wp.launch(closest, n, inputs=[mesh.id, wq, face, uv], device=dev)
    wf, wuv = face.numpy().copy(), uv.numpy().copy()  # numpy() views the cpu memory the next launch overwrites
    dk = np.linalg.norm(positions(pts, idx, kf, kuv) - queries, axis=1)
    dw = np.linalg.norm(positions(pts, idx, wf, wuv) - queries, axis=1)
    subprocess.run([exe, "ray", tmp, "1"], check=True, capture_output=True)
    kf_r, kt = np.fromfile(os.path.join(tmp, "kjit_face.bin"), np.int32), np.fromfile(os.path.join(tmp, "kjit_t.bin"), np.float32)
    wp.launch(ray, n, inputs=[mesh.id, ws, wd, face, t], device=dev)
    wf_r, wt = face.numpy(), t.numpy()
    both = (kf_r >= 0) & (wf_r >= 0)
    print(f"{a.tris} triangles ({len(idx) // 3}), {n} queries, {os.cpu_count()} cores, {a.rounds} rounds x {a.reps} reps, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'row':10s} {'Warp ms':>10s} {'kjit ms':>10s} {'kjit/Warp':>10s}")
    for what, (w, k, *_) in rows.items():
        if what == "embree":
            continue
        wm, km = statistics.median(w), statistics.median(k)
        print(f"{what:10s} {wm:10.1f} {km:10.1f} {km / wm:10.3f}")
    if "embree" in rows:
        eb, et = statistics.median(rows["embree"][0]), statistics.median(rows["embree"][1])
        kb, kr = statistics.median(rows["build"][1]), statistics.median(rows["ray"][1])
        print(f"Embree 3 (rtcIntersect1, every core): build {eb:.1f} ms (kjit/Embree {kb / eb:.2f}), rays {et:.1f} ms "
              f"(kjit/Embree {kr / et:.2f}), hits {embree_hits} (kjit {int(np.sum(kf_r >= 0))})")
    print(f"closest: max |distance kjit - Warp| {np.max(np.abs(dk - dw)):.2e}, same face {np.mean(kf == wf):.4f} (ties at shared edges and vertices go either way)")
    print(f"ray: hit agreement {np.mean((kf_r >= 0) == (wf_r >= 0)):.5f}, max |t kjit - Warp| on common hits "
          f"{np.max(np.abs(kt[both] - wt[both])) if both.any() else 0:.2e}")


if __name__ == "__main__":
    main()
