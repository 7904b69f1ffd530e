# The drivers of Warp's geometry examples (hash grids, meshes) for scripts/warp_examples.py:
# each runs Warp's example and kjit's port (examples/warp/) on the same inputs.
import os

import numpy as np

from warp_port_runs import combine, compare, examples_dir, kjit_run, pillow_or_disk, stepped, timed, tmp


def sph_example(smoothing_length):
    """core/example_sph.py's Example with its smoothing length (0.8 there: 62,500 particles, 40
    steps a frame; the particle count grows as its inverse cube), its source run with that one
    constant changed, without a renderer."""
    import types
    path = os.path.join(examples_dir, "core", "example_sph.py")
    src = open(path, encoding="utf-8").read()
    assert "self.smoothing_length = 0.8" in src
    src = src.replace("self.smoothing_length = 0.8", "self.smoothing_length = %r" % smoothing_length)
    module = types.ModuleType("example_sph_%s" % str(smoothing_length).replace(".", "_"))
    module.__file__ = path
    exec(compile(src, path, "exec"), module.__dict__)
    return module.Example(stage_path=None)


def sph(frames=3):
    """core/example_sph.py (62,500 particles, 40 steps a frame, the hash grid rebuilt every
    step): positions and velocities after 3 frames."""
    e = sph_example(0.8)
    warp_ms = stepped(e.step, frames)
    kjit_ms, out = kjit_run("sph", ["--frames", str(frames)])
    return positions_velocities("examples/warp/sph.cpp", e.x, e.v, out, kjit_ms, warp_ms)


def positions_velocities(program, x, v, out, kjit_ms, warp_ms):
    """The row of a particle port whose --out holds positions then velocities (float32 xyz),
    compared with Warp's arrays x and v."""
    k = np.fromfile(out, dtype=np.float32)
    half = k.size // 2
    k[:half].tofile(out + ".x")
    k[half:].tofile(out + ".v")
    check, diff = combine(compare("positions", x, out + ".x"), compare("velocities", v, out + ".v"))
    return {"program": program, "check": check, "diff": diff, "kjit": kjit_ms, "warp": warp_ms}


def dem_example(dims):
    """core/example_dem.py's Example with a block of dims = (x, y, z) particles (32 x 64 x 32
    there), its lattice and numpy jitter as the example draws them, without a renderer."""
    from warp.examples.core import example_dem as ex

    class Example(ex.Example):
        def particle_grid(self, dim_x, dim_y, dim_z, lower, radius, jitter):
            return super().particle_grid(*dims, lower, radius, jitter)
    return Example(stage_path=None)


def dem_run(dims, frames):
    """(Example after `frames` frames, initial positions as float32, kjit's --init file)."""
    e = dem_example(dims)
    init = e.x.numpy().astype(np.float32)
    init_file = os.path.join(tmp, "dem_init_%d_%d_%d.bin" % dims)
    init.tofile(init_file)
    return e, init, init_file


def dem(frames=3, dims=(32, 64, 32)):
    """core/example_dem.py (65,536 particles, 64 substeps a frame, the grid rebuilt every frame):
    positions and velocities after 3 frames, from Warp's initial positions."""
    e, _, init_file = dem_run(dims, frames)
    warp_ms = stepped(e.step, frames)
    kjit_ms, out = kjit_run("dem", ["--init", init_file, "--frames", str(frames)])
    return positions_velocities("examples/warp/dem.cpp", e.x, e.v, out, kjit_ms, warp_ms)


def particle_repulsion_run(grid):
    """optim/example_particle_repulsion.py's Example in an N x N box (N_GRID = `grid`, 128 there: a
    module global its kernels read when they are built, set before the first launch), its
    particles on the image's dark pixels (pillow_or_disk); returns (Example, what the image is,
    kjit's --init file of Warp's initial positions)."""
    import importlib
    import warp as wp
    source = pillow_or_disk()
    ex = importlib.import_module("warp.examples.optim.example_particle_repulsion")
    ex.N_GRID = grid
    wp.get_module(ex.__name__).mark_modified()
    e = ex.Example()
    init_file = os.path.join(tmp, "particle_repulsion_init_%d.bin" % grid)
    e.positions.numpy().astype(np.float32).tofile(init_file)
    return e, source, init_file


def particle_repulsion(frames=5, grid=128):
    """optim/example_particle_repulsion.py (a 128 x 128 box, 32 substeps a frame, forces from
    wp.grad of the potential): positions and velocities after 5 frames, from Warp's initial
    positions."""
    e, source, init_file = particle_repulsion_run(grid)
    warp_ms = stepped(e.step, frames)
    kjit_ms, out = kjit_run("particle_repulsion", ["--init", init_file, "--grid", str(grid), "--frames", str(frames)])
    r = positions_velocities("examples/warp/particle_repulsion.cpp", e.positions, e.velocities, out, kjit_ms, warp_ms)
    r["check"] = "%d particles from %s, %d frames: %s" % (e.positions.shape[0], source, frames, r["check"])
    return r


# (box size, frames) of the warp_example_particle_repulsion ctest.
PARTICLE_REPULSION_TEST = (32, 10)


def sample_mesh(frames=16):
    """core/example_sample_mesh.py (140 triangles, 100 points a frame): the area distribution and
    the last frame's points, kjit's area sum in index order (--deterministic) as Warp's cpu adds."""
    from warp.examples.core import example_sample_mesh as ex
    e = ex.Example(stage_path=None)
    warp_ms = stepped(e.step, frames)
    kjit_ms, out = kjit_run("sample_mesh", ["--frames", str(frames), "--deterministic"])
    k = np.fromfile(out, dtype=np.float32)  # the distribution, then the points
    n = e.cdf.shape[0]
    k[:n].tofile(out + ".cdf")
    k[n:].tofile(out + ".points")
    check, diff = combine(compare("distribution", e.cdf, out + ".cdf"), compare("points", e.points, out + ".points"))
    return {"program": "examples/warp/sample_mesh.cpp", "check": check, "diff": diff, "kjit": kjit_ms, "warp": warp_ms}


def raycast_example(width, height):
    """core/example_raycast.py's Example (the bunny of bunny.usd, read with usd-core) and the
    files of its mesh's points and indices for kjit's port."""
    from warp.examples.core import example_raycast as ex
    e = ex.Example(height=height, width=width)
    points, indices = os.path.join(tmp, "bunny_points.bin"), os.path.join(tmp, "bunny_indices.bin")
    e.mesh.points.numpy().astype(np.float32).tofile(points)
    e.mesh.indices.numpy().astype(np.int32).tofile(indices)
    return e, ["--points", points, "--indices", indices]


def raycast_hits(e):
    """Warp's hit per pixel of core/example_raycast.py's rays: (t, u, v, face), face -1 on a miss."""
    import warp as wp

    @wp.kernel
    def hits(mesh: wp.uint64, cam_pos: wp.vec3, width: int, height: int, out: wp.array(dtype=wp.vec4)):
        tid = wp.tid()
        sx = 2.0 * float(tid % width) / float(height) - 1.0
        sy = 2.0 * float(tid // width) / float(height) - 1.0
        q = wp.mesh_query_ray(mesh, cam_pos, wp.normalize(wp.vec3(sx, sy, -1.0)), 1.0e6)
        out[tid] = wp.vec4(0.0, 0.0, 0.0, -1.0)
        if q.result:
            out[tid] = wp.vec4(q.t, q.u, q.v, float(q.face))

    out = wp.zeros(e.width * e.height, dtype=wp.vec4)
    wp.launch(hits, dim=e.width * e.height, inputs=[e.mesh.id, e.cam_pos, e.width, e.height, out])
    return out.numpy().reshape(-1, 4)


def raycast(frames=5):
    """core/example_raycast.py (1024 x 1024 rays against the bunny's 12,200 triangles): every
    pixel, and each ray's hit (t, u, v and face) against Warp's mesh_query_ray's."""
    e, mesh_args = raycast_example(1024, 1024)
    warp_ms = timed(e.render, frames)
    kjit_ms, (out, hits) = kjit_run("raycast", mesh_args + ["--width", "1024", "--height", "1024", "--frames", str(frames)],
                                    outputs=("--out", "--hits"))
    check, diff = compare("pixels", e.pixels, out)
    w, k = raycast_hits(e), np.fromfile(hits, dtype=np.float32).reshape(-1, 4)
    same_face = w[:, 3] == k[:, 3]
    same_tuv = same_face & (w[:, :3].view(np.uint32) == k[:, :3].view(np.uint32)).all(axis=1)
    check += "; hits: %d of %d rays the same face with bit-identical t, u, v (%d another face)" % (
        int(np.sum(same_tuv)), w.shape[0], int(np.sum(~same_face)))
    return {"program": "examples/warp/raycast.cpp", "check": check, "diff": diff, "kjit": kjit_ms, "warp": warp_ms}


# The SPH ctest's smoothing length and frames (warp_example_sph: 4,000 particles, 16 steps a frame).
SPH_TEST = (2.0, 2)
# The DEM ctest's block and frames (warp_example_dem_warp: 128 particles, 64 substeps a frame).
DEM_TEST = ((4, 8, 4), 20)


def write_floats(name, array, dtype=np.float32):
    """Writes `array` (a Warp or numpy array) as `dtype` elements to a file of tmp; its path."""
    path = os.path.join(tmp, name)
    (array.numpy() if hasattr(array, "numpy") else np.asarray(array)).astype(dtype).tofile(path)
    return path


def mesh_example():
    """core/example_mesh.py's Example (the bunny of bunny.usd scaled by 10, 1000 particles from
    numpy's generator) and kjit's arguments: the unscaled bunny (the port scales it as Warp's
    example does: float32 products, checked equal here) and Warp's initial positions."""
    from warp.examples.core import example_mesh as ex
    e = ex.Example(stage_path=None)
    raw, _ = raycast_example(1, 1)  # the same bunny.usd, unscaled
    unscaled = raw.mesh.points.numpy().astype(np.float32)
    assert np.array_equal(unscaled * np.float32(10.0), e.mesh.points.numpy()), "bunny scaled otherwise than float32 x 10"
    args = ["--points", write_floats("mesh_points.bin", unscaled),
            "--indices", write_floats("mesh_indices.bin", e.mesh.indices, np.int32),
            "--init", write_floats("mesh_init.bin", e.positions)]
    return e, args


def mesh(frames=500):
    """core/example_mesh.py (1000 particles falling onto the waving bunny, 500 frames as the
    example's default): positions and velocities after the frames."""
    e, args = mesh_example()
    warp_ms = stepped(e.step, frames)
    kjit_ms, out = kjit_run("mesh", args + ["--frames", str(frames)])
    row = positions_velocities("examples/warp/mesh.cpp", e.positions, e.velocities, out, kjit_ms, warp_ms)
    k = np.fromfile(out, dtype=np.float32).reshape(2, -1, 3)
    w = np.stack([e.positions.numpy(), e.velocities.numpy()])
    differ = int(np.sum((k.view(np.uint32) != w.view(np.uint32)).any(axis=(0, 2))))
    if differ:
        row["check"] += (" (%d particles differ: one that slid along an edge, exactly as close to both faces "
                         "there, took the other face of the two, Warp breaking the tie by its tree's order, kjit "
                         "by its own; identical through the first 200 frames)" % differ)
    return row


def mesh_intersect_example():
    """core/example_mesh_intersect.py's Example (cube.usd against sphere.usd under 1024 transforms
    from numpy's generator) and kjit's arguments: both meshes and the transforms."""
    from warp.examples.core import example_mesh_intersect as ex
    e = ex.Example(stage_path=None)
    args = ["--query-points", write_floats("cube_points.bin", e.mesh_0.points),
            "--query-indices", write_floats("cube_indices.bin", e.mesh_0.indices, np.int32),
            "--points", write_floats("sphere_points.bin", e.mesh_1.points),
            "--indices", write_floats("sphere_indices.bin", e.mesh_1.indices, np.int32),
            "--xforms", write_floats("xforms.bin", e.array_xforms)]
    return e, args


def mesh_intersect(frames=9):
    """core/example_mesh_intersect.py (the cube's faces x 1024 transforms against the sphere's
    BVH): the mark of every transform, integers compared exactly."""
    e, args = mesh_intersect_example()
    warp_ms = timed(e.step, frames)
    kjit_ms, out = kjit_run("mesh_intersect", args + ["--frames", str(frames)])
    w, k = e.array_result.numpy().astype(np.int32), np.fromfile(out, dtype=np.int32)
    same = int(np.sum(w == k)) if k.size == w.size else 0
    check = "marks: %d of %d identical (%d pairs meet in Warp, %d in kjit)" % (same, w.size, int(w.sum()), int(k.sum()))
    return {"program": "examples/warp/mesh_intersect.cpp", "check": check, "diff": float(np.max(np.abs(w - k))),
            "kjit": kjit_ms, "warp": warp_ms}


# The mesh ctest's frames (warp_example_mesh: the particles reach the bunny after about 100).
MESH_TEST = 200


def write_particle_repulsion_goldens(directory):
    """Warp's initial positions and its positions then velocities at PARTICLE_REPULSION_TEST's
    size; returns the files' names."""
    grid, frames = PARTICLE_REPULSION_TEST
    e, _, init_file = particle_repulsion_run(grid)
    for _ in range(frames):
        e.step()
    init = "particle_repulsion_init_%d.bin" % grid
    np.fromfile(init_file, dtype=np.float32).tofile(os.path.join(directory, init))
    name = "particle_repulsion_%d_%d_frames.bin" % (grid, frames)
    np.concatenate([e.positions.numpy().reshape(-1), e.velocities.numpy().reshape(-1)]).astype(np.float32).tofile(
        os.path.join(directory, name))
    return [init, name]


def write_mesh_goldens(directory):
    """The inputs and Warp's outputs of the warp_example_mesh and warp_example_mesh_intersect
    ctests (the bunny's points and indices are raycast's files); the names written."""
    e, args = mesh_example()
    for _ in range(MESH_TEST):
        e.step()
    init = np.fromfile(args[args.index("--init") + 1], dtype=np.float32)
    init.tofile(os.path.join(directory, "mesh_init_1000.bin"))
    name = "mesh_%d_frames.bin" % MESH_TEST
    np.concatenate([e.positions.numpy().reshape(-1), e.velocities.numpy().reshape(-1)]).astype(np.float32).tofile(
        os.path.join(directory, name))
    e, args = mesh_intersect_example()
    e.step()
    names = ["mesh_init_1000.bin", name]
    for option, file in (("--query-points", "cube_points.bin"), ("--query-indices", "cube_indices.bin"),
                         ("--points", "sphere_points.bin"), ("--indices", "sphere_indices.bin"),
                         ("--xforms", "mesh_intersect_xforms.bin")):
        with open(args[args.index(option) + 1], "rb") as src, open(os.path.join(directory, file), "wb") as dst:
            dst.write(src.read())
        names.append(file)
    e.array_result.numpy().astype(np.int32).tofile(os.path.join(directory, "mesh_intersect.bin"))
    return names + ["mesh_intersect.bin"]
