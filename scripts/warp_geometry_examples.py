# The drivers of Warp's geometry examples (hash grids, meshes) for scripts/warp_examples.py:
# each runs Warp's example and kjit's port (examples/warp/) on the same inputs.
import os

import numpy as np

from warp_port_runs import combine, compare, examples_dir, kjit_run, stepped, timed, tmp


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
    return positions_velocities("examples/warp/sph.cpp", e, out, kjit_ms, warp_ms)


def positions_velocities(program, e, out, kjit_ms, warp_ms):
    """The row of a particle port whose --out holds positions then velocities (float32 xyz),
    compared with Warp's e.x and e.v."""
    k = np.fromfile(out, dtype=np.float32)
    half = k.size // 2
    k[:half].tofile(out + ".x")
    k[half:].tofile(out + ".v")
    check, diff = combine(compare("positions", e.x, out + ".x"), compare("velocities", e.v, out + ".v"))
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
    return positions_velocities("examples/warp/dem.cpp", e, out, kjit_ms, warp_ms)


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
