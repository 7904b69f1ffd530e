# The driver of Warp's optim/example_diffray.py for scripts/warp_examples.py: Warp's example
# (its reference render, then SGD on the mesh's rotation through the differentiable ray caster)
# and kjit's port (examples/warp/diffray.cpp) on the same bunny, image size and iterations.
import contextlib, io, math, os, time

import numpy as np
import warp as wp

from warp_port_runs import compare_parts, kjit_run, tmp

# (image height, iterations): the doc's run and the ctest's (warp_example_diffray). Warp's
# example renders at height 1024 (1820 x 1024 pixels, 3640 x 2048 rays) for 150 iterations.
DIFFRAY_RUN = (128, 20)
DIFFRAY_TEST = (12, 3)

PARTS = ["target image", "loss curve", "last image", "optimised rotation", "last gradient of the rotation",
         "of the position", "of the light directions", "of the light intensities", "of the vertex normals",
         "of the texture coordinates"]


def example_module(static_lights):
    """Warp's example module; with `static_lights`, its copy (in tmp) whose loop over the two
    lights is unrolled (`range(2)`): Warp's adjoint of the example's dynamic loop, which adds
    into `lambert`, gives a wrong gradient (Warp's codegen itself notes "detected mutated
    variable lambert during a dynamic for-loop ... may not be a differentiable operation");
    unrolled, the program's values are the same and its gradient is right."""
    from warp.examples.optim import example_diffray as ex
    if not static_lights:
        return ex
    import importlib.util
    src = open(ex.__file__, encoding="utf-8").read()
    loop = "for i in range(lights.num_lights):"
    assert src.count(loop) == 1, "example_diffray.py's lights loop changed"
    path = os.path.join(tmp, "example_diffray_static_lights.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(src.replace(loop, "for i in range(2):"))
    spec = importlib.util.spec_from_file_location("example_diffray_static_lights", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def train_diffray(height, iters, static_lights=False):
    """Warp's __main__ on the cpu: the reference example's render as the target, then `iters`
    of the rotated example's steps (tape, backward, SGD, normalize, tape.zero). Returns the
    example, PARTS as float32 arrays, and the median ms per step after the first (which
    compiles). `static_lights`: example_module's."""
    ex = example_module(static_lights)
    reference = ex.Example(height=height)
    reference.ray_cast()
    e = ex.Example(train_iters=iters, height=height,
                   rot_array=[0.0, (math.sqrt(3) - 1) / (2.0 * math.sqrt(2.0)), 0.0,
                              (math.sqrt(3) + 1) / (2.0 * math.sqrt(2.0))])
    wp.copy(e.target_pixels, reference.pixels)
    losses, grads = [], []
    sgd_step = e.optimizer.step

    def step(g):
        # After backward, before tape.zero(): the loss and, at the last step, every gradient.
        losses.append(e.loss.numpy()[0])
        if len(losses) == iters:
            m, lights = e.render_mesh, e.lights
            grads[:] = [a.grad.numpy().copy() for a in (m.rot, m.pos, lights.dirs, lights.intensities,
                                                         m.vertex_normals, m.tex_coords)]
        sgd_step(g)
    e.optimizer.step = step
    ms = []
    for it in range(iters):
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            e.step()
        if it > 0:
            ms.append((time.perf_counter() - t0) * 1e3)
    parts = [reference.pixels.numpy(), np.array(losses), e.pixels.numpy(), e.render_mesh.rot.numpy()] + grads
    parts = [p.reshape(-1).astype(np.float32) for p in parts]
    return e, parts, float(np.median(ms)) if ms else 0.0


def mesh_files(e, prefix):
    """The example's bunny (points, indices) as files for kjit's --points and --indices."""
    points, indices = (os.path.join(tmp, prefix + name) for name in ("_points.bin", "_indices.bin"))
    e.mesh.points.numpy().astype(np.float32).tofile(points)
    e.mesh.indices.numpy().astype(np.int32).tofile(indices)
    return points, indices


def diffray():
    """optim/example_diffray.py at DIFFRAY_RUN's size: the target image, the loss curve, the last
    image, the optimised rotation and the last iteration's gradients, against Warp's example with
    its lights loop unrolled (example_module: Warp's gradient right); against the example as
    published, the target image and the first loss (its gradient is wrong). The time is the
    published example's."""
    height, iters = DIFFRAY_RUN
    e, published, warp_ms = train_diffray(height, iters)
    _, unrolled, _ = train_diffray(height, iters, static_lights=True)
    points, indices = mesh_files(e, "diffray")
    kjit_ms, out = kjit_run("diffray", ["--points", points, "--indices", indices, "--height", str(height),
                                        "--iters", str(iters)])
    check, diff = compare_parts(unrolled, out, PARTS)
    k = np.fromfile(out, dtype=np.float32)
    n = published[0].size
    same_target = int(np.sum(published[0].view(np.uint32) == k[:n].view(np.uint32)))
    first_loss = "bit-identical" if published[1][0] == k[n] else "%.3g apart" % abs(published[1][0] - k[n])
    g0 = sum(p.size for p in published[:4])
    w_grad, k_grad = published[4], k[g0:g0 + 4]
    off = float(np.max(np.abs(w_grad - k_grad)) / np.max(np.abs(k_grad)))
    what = ("%d x %d pixels (%d x %d rays) against the bunny's %d triangles, %d SGD iterations. Against Warp's "
            "example with its loop over the lights unrolled (`range(2)`; Warp's adjoint of the example's dynamic "
            "loop, which adds into `lambert`, is wrong, as Warp's codegen warns): " % (
                e.width, e.height, e.rays_width, e.rays_height, e.mesh.indices.shape[0] // 3, iters))
    tail = ("; against the example as published: target image %d of %d values bit-identical, first loss %s, its "
            "last gradient of the rotation off kjit's by %.2g of kjit's largest component (kjit's agrees with "
            "float64 central differences: ctest warp_example_diffray). kjit's adjoint formulas (mesh_query_ray's, "
            "quat_rotate's, normalize's) round otherwise than Warp's, by about 1e-6 of the gradients' size, "
            "and so do the rotations after SGD steps with them; the mesh's points get no gradient buffer (Warp's "
            "mesh adjoint drops theirs)" % (same_target, n, first_loss, off))
    return {"program": "examples/warp/diffray.cpp", "check": what + check + tail, "diff": diff, "kjit": kjit_ms,
            "warp": warp_ms}


def write_diffray_goldens(directory):
    """Warp's outputs at DIFFRAY_TEST's size, its lights loop unrolled (example_module: the
    gradients right), for the warp_example_diffray ctest, which reads raycast's bunny files
    (checked to be this example's mesh); the names written."""
    height, iters = DIFFRAY_TEST
    e, parts, _ = train_diffray(height, iters, static_lights=True)
    for name, a in (("raycast_bunny_points.bin", e.mesh.points.numpy().astype(np.float32)),
                    ("raycast_bunny_indices.bin", e.mesh.indices.numpy().astype(np.int32))):
        assert np.array_equal(np.fromfile(os.path.join(directory, name), dtype=a.dtype), a.reshape(-1)), name
    name = "diffray_%d_%d_iters.bin" % DIFFRAY_TEST
    np.concatenate(parts).tofile(os.path.join(directory, name))
    return [name]
