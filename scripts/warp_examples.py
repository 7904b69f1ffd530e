# Runs each Warp 1.19 example kjit has ported (examples/warp/) beside Warp's own on the cpu, on
# the same inputs, and writes docs/WARP_EXAMPLES.md: one row per example_*.py of the installed
# warp wheel, with what the unported ones use that kjit lacks (found in their source).
#   .venv-bench/bin/python scripts/warp_examples.py BUILD_DIR OUT_MD [--only EXAMPLE,...]
# (--only: rerun those ported examples' rows, e.g. core/example_sph.py, and replace them in OUT_MD)
# With `--goldens DIR` in place of OUT_MD it writes Warp's outputs at the ctests' sizes
# (tests/golden/warp_examples/, which the warp_example_* ctests compare the ports with).
# core/example_torch.py runs under the torch venv's Python ($KJIT_TORCH_PYTHON, else
# .venv-torch/bin/python of this checkout), Warp's side with this venv's warp package on its path.
import glob, json, os, re, subprocess, sys, time
import numpy as np
import warp as wp

import warp_port_runs
from warp_port_runs import combine, compare, compare_parts, examples_dir, kjit_run, pillow_or_disk, stepped, timed, tmp
from warp_geometry_examples import (DEM_TEST, SPH_TEST, dem, dem_run, mesh, mesh_intersect, particle_repulsion, raycast,
                                    raycast_example, sample_mesh, sph, sph_example, write_mesh_goldens,
                                    write_particle_repulsion_goldens)
from warp_diffray_example import diffray, write_diffray_goldens

build, out_md = sys.argv[1], sys.argv[2]
warp_port_runs.build = build
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def raymarch():
    """core/example_raymarch.py at 512 x 256: every pixel compared bit for bit."""
    from warp.examples.core import example_raymarch as ex
    e = ex.Example(height=256, width=512)
    warp_ms = timed(lambda: wp.launch(ex.draw, dim=e.width * e.height,
                                      inputs=[e.cam_pos, e.cam_rot, e.width, e.height, e.pixels]), 5)
    kjit_ms, out = kjit_run("raymarch", ["--width", "512", "--height", "256", "--frames", "5"])
    w = e.pixels.numpy().reshape(-1).astype(np.float32)
    k = np.fromfile(out, dtype=np.float32)
    same = int(np.sum(w.view(np.uint32) == k.view(np.uint32)))
    diff = float(np.max(np.abs(w - k))) if same != w.size else 0.0
    return {"program": "examples/warp/raymarch.cpp", "check": "pixels: %d of %d values bit-identical" % (same, w.size),
            "diff": diff, "kjit": kjit_ms, "warp": warp_ms}


def wave(frames=20):
    """core/example_wave.py (128 x 128, 16 substeps a frame): heights and vertices after 20 frames."""
    from warp.examples.core import example_wave as ex
    e = ex.Example(stage_path=None)
    warp_ms = stepped(e.step, frames)
    kjit_ms, (heights, vertices) = kjit_run("wave", ["--frames", str(frames)], ("--out", "--out-vertices"))
    check, diff = combine(compare("heights", e.sim_grid0, heights), compare("vertices", e.sim_verts, vertices))
    return {"program": "examples/warp/wave.cpp", "check": check, "diff": diff, "kjit": kjit_ms, "warp": warp_ms}


def graph_capture(frames=20):
    """core/example_graph_capture.py (128 x 128, 16 octaves in a graph): the image after 20 frames."""
    from warp.examples.core import example_graph_capture as ex
    e = ex.Example()
    warp_ms = stepped(e.step, frames)
    kjit_ms, out = kjit_run("graph_capture", ["--frames", str(frames)])
    check, diff = compare("pixels", e.pixel_values, out)
    return {"program": "examples/warp/graph_capture.cpp", "check": check, "diff": diff, "kjit": kjit_ms, "warp": warp_ms}


def fluid(frames=10):
    """core/example_fluid.py (256 x 128, the pressure solve in a graph): density and velocity
    after 10 frames."""
    from warp.examples.core import example_fluid as ex
    e = ex.Example()
    warp_ms = stepped(e.step, frames)
    kjit_ms, (rho, u) = kjit_run("fluid", ["--frames", str(frames)], ("--out", "--out-velocity"))
    check, diff = combine(compare("density", e.rho0, rho), compare("velocity", e.u0, u))
    return {"program": "examples/warp/fluid.cpp", "check": check, "diff": diff, "kjit": kjit_ms, "warp": warp_ms}


class quiet_stdout:
    """Sends the process's stdout (C printf from Warp's kernels too) to /dev/null."""
    def __enter__(self):
        sys.stdout.flush()
        self.saved = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)

    def __exit__(self, *exc):
        os.dup2(self.saved, 1)
        os.close(self.saved)


def compare_ints(what, warp_values, kjit_values):
    same = int(np.sum(warp_values == kjit_values))
    diff = float(np.max(np.abs(warp_values.astype(np.int64) - kjit_values))) if same != warp_values.size else 0.0
    return "%s: %d of %d values identical" % (what, same, warp_values.size), diff


def spin_lock(frames=5):
    """core/example_spin_lock.py (1024 threads): counter, atomic counter and lock."""
    from warp.examples.core import example_spin_lock as ex
    lock, counter, atomic = (wp.zeros(1, dtype=int) for _ in range(3))

    def run():
        for a in (lock, counter, atomic):
            a.zero_()
        wp.launch(ex.test_spinlock_counter, dim=1024, inputs=[counter, atomic, lock])
    warp_ms = timed(run, frames)
    kjit_ms, out = kjit_run("spin_lock", ["--frames", str(frames)])
    w = np.array([counter.numpy()[0], atomic.numpy()[0], lock.numpy()[0]], dtype=np.int32)
    check, diff = compare_ints("counter, atomic counter, lock", w, np.fromfile(out, dtype=np.int32))
    return {"program": "examples/warp/spin_lock.cpp", "check": check, "diff": diff, "kjit": kjit_ms, "warp": warp_ms}


def work_queue_warp():
    """Warp's process_queue on the example's queue, its buffer given the capacity (the example's
    4096 slots for a capacity of 8192 let the re-enqueued items run past the buffer's end)."""
    from warp.examples.core import example_work_queue as ex
    items = np.zeros(8192, dtype=np.int32)
    items[:4096] = np.arange(4096, dtype=np.int32)
    queue = ex.WorkQueue()
    queue.capacity = 8192
    queue.head, queue.tail, queue.buffer = wp.zeros(1, dtype=int), wp.zeros(1, dtype=int), wp.zeros(8192, dtype=int)

    def run():
        queue.buffer.assign(items)
        queue.head.fill_(0)
        queue.tail.fill_(4096)
        with quiet_stdout():
            wp.launch(ex.process_queue, dim=1024, inputs=[queue])
    return queue, run


def work_queue(frames=5):
    """core/example_work_queue.py (1024 threads draining 8192 items): head, tail and buffer,
    kjit's threads in index order (--deterministic) as Warp's cpu launch runs them."""
    queue, run = work_queue_warp()
    warp_ms = timed(run, frames)
    w = np.concatenate([queue.head.numpy(), queue.tail.numpy(), queue.buffer.numpy()]).astype(np.int32)
    kjit_ms, out = kjit_run("work_queue", ["--frames", str(frames), "--deterministic"])
    check, diff = compare_ints("head, tail, buffer", w, np.fromfile(out, dtype=np.int32))
    return {"program": "examples/warp/work_queue.cpp", "check": check, "diff": diff, "kjit": kjit_ms, "warp": warp_ms}


def import_fluid_checkpoint(module_name, grid):
    """Imports optim/example_<module_name>.py with its grid N_GRID = `grid` (a wp.constant of
    512 there; the constants derived from it are module globals too, all read when the kernels
    are built, so they are set before the first launch). Warp's example reads its target from
    nvidia_logo.png through Pillow (or the disk of pillow_or_disk). Returns (module, target source)."""
    import importlib
    source = pillow_or_disk()
    ex = importlib.import_module("warp.examples.optim.example_" + module_name)
    ex.N_GRID, ex.DH, ex.FLUID_COLUMN_WIDTH = grid, 1.0 / grid, grid / 10.0
    wp.get_module(ex.__name__).mark_modified()
    return ex, source


def train_fluid_checkpoint(ex, steps, pressure_iterations, segment_size, iters):
    """Warp's example as its __main__ trains it on the cpu (forward, backward, Adam step, tape.zero);
    returns the example, [loss per iteration, final vx, vy, last gradients of vx, vy] as float32,
    and the median ms per iteration (after the first, which compiles)."""
    e = ex.Example(sim_steps=steps, pressure_iterations=pressure_iterations, segment_size=segment_size)
    losses, ms = [], []
    for it in range(iters):
        t0 = time.perf_counter()
        e.forward()
        e.backward()
        if it == iters - 1:
            grads = [e.vx_arrays[0].grad.numpy().copy(), e.vy_arrays[0].grad.numpy().copy()]
        e.optimizer.step([e.vx_arrays[0].grad.flatten(), e.vy_arrays[0].grad.flatten()])
        e.tape.zero()
        losses.append(e.loss.numpy()[0])
        if it > 0:
            ms.append((time.perf_counter() - t0) * 1e3)
    parts = [np.array(losses, dtype=np.float32), e.vx_arrays[0].numpy(), e.vy_arrays[0].numpy()] + grads
    return e, [p.reshape(-1).astype(np.float32) for p in parts], float(np.median(ms)) if ms else 0.0


# (grid, steps, pressure iterations, segment size, iterations): the doc's run and the ctest's.
FLUID_CHECKPOINT_RUN = (64, 16, 20, 4, 6)
FLUID_CHECKPOINT_TEST = (32, 6, 5, 2, 3)


def fluid_checkpoint_args(config, target_file, deterministic=True):
    grid, steps, pressure, segment, iters = config
    return ["--grid", str(grid), "--steps", str(steps), "--pressure-iterations", str(pressure),
            "--segment-size", str(segment), "--iters", str(iters), "--target", target_file,
            "--deterministic", "1" if deterministic else "0"]


def fluid_checkpoint_example(module_name, program, config):
    grid, steps, pressure, segment, iters = config
    ex, source = import_fluid_checkpoint(module_name, grid)
    e, parts, warp_ms = train_fluid_checkpoint(ex, steps, pressure, segment, iters)
    target_file = os.path.join(tmp, module_name + "_target.bin")
    e.target_wp.numpy().astype(np.float32).tofile(target_file)
    kjit_ms, out = kjit_run(program, fluid_checkpoint_args(config, target_file))
    check, diff = compare_parts(parts, out, ["loss curve", "optimised vx", "optimised vy",
                                             "last gradient of vx", "last gradient of vy"])
    what = "%dx%d grid, %d steps in segments of %d, %d Jacobi iterations, %d Adam iterations, target %s: " % (
        grid, grid, steps, segment, pressure, iters, source)
    return {"program": "examples/warp/%s.cpp" % program, "check": what + check, "diff": diff,
            "kjit": kjit_ms, "warp": warp_ms}


def fluid_checkpoint():
    """optim/example_fluid_checkpoint.py: the loss curve, the optimised initial velocity and the
    last gradients, at FLUID_CHECKPOINT_RUN's size."""
    return fluid_checkpoint_example("fluid_checkpoint", "fluid_checkpoint", FLUID_CHECKPOINT_RUN)


def fluid_checkpoint_custom_backward():
    """optim/example_fluid_checkpoint_custom_backward.py: as fluid_checkpoint, the pressure solve's
    adjoint a recorded function."""
    return fluid_checkpoint_example("fluid_checkpoint_custom_backward", "fluid_checkpoint_custom_backward",
                                    FLUID_CHECKPOINT_RUN)
# Warp's core/example_torch.py at its defaults (1500 particles), for this many Adam steps.
TORCH_ITERS = 10


def torch_warp_run(out):
    """In the torch venv (--torch-warp): Warp's own example_torch.Example, stepped TORCH_ITERS
    times on the cpu; saves its final positions, its mean after each step and the median ms per
    step after the first (which compiles) to `out` (.npz)."""
    import torch  # noqa: F401  (Warp's example imports it; fail here, clearly, without it)
    from warp.examples.core import example_torch
    with wp.ScopedDevice("cpu"):
        e = example_torch.Example(headless=True, train_iters=TORCH_ITERS)
        means, ms = [], []
        for k in range(TORCH_ITERS):
            t0 = time.perf_counter()
            e.step()
            if k > 0:
                ms.append((time.perf_counter() - t0) * 1e3)
            means.append(e.mean_pos.copy())
    np.savez(out, xy=e.xy_np, means=np.array(means, dtype=np.float32), ms=np.float64(np.median(ms)))


def torch_run(which, out):
    """Runs Warp's example_torch (which="warp", this script's --torch-warp) or kjit's port
    (examples/warp/torch_example.py) under the torch venv; returns its npz and ms per step.
    Warp's side gets this venv's warp package (alone, so torch's numpy stays) on its path."""
    python = os.environ.get("KJIT_TORCH_PYTHON", os.path.join(root, ".venv-torch", "bin", "python"))
    warp_only = os.path.join(tmp, "warp-only")
    if not os.path.isdir(warp_only):
        os.makedirs(warp_only)
        os.symlink(os.path.dirname(wp.__file__), os.path.join(warp_only, "warp"))
    if which == "warp":
        cmd, path = [python, os.path.abspath(__file__), build, "--torch-warp", out], warp_only
    else:
        cmd = [python, os.path.join(root, "examples", "warp", "torch_example.py"), "--train-iters", str(TORCH_ITERS),
               "--library", os.path.join(build, "lib", "libwarp_torch_interop.so"), "--out", out]
        path = os.path.join(root, "python")
    r = subprocess.run(cmd, env=dict(os.environ, PYTHONPATH=path), capture_output=True, text=True, check=True)
    result = np.load(out)
    ms = float(result["ms"]) if "ms" in result.files else float(re.search(r"([0-9.]+) ms per iteration", r.stdout).group(1))
    return result, ms


def torch_example():
    """core/example_torch.py: Warp's example and kjit's port, each in its own process under the
    torch venv, TORCH_ITERS Adam steps from the same particles: final positions and the mean
    after each step compared bit for bit; ms per step (forward, backward, Adam)."""
    (w, w_ms), (k, k_ms) = (torch_run(which, os.path.join(tmp, "torch_%s.npz" % which)) for which in ("warp", "kjit"))
    parts, diff = [], 0.0
    for key, what in (("xy", "positions after %d steps" % TORCH_ITERS), ("means", "mean after each step")):
        same = int(np.sum(w[key].view(np.uint32) == k[key].view(np.uint32)))
        diff = max(diff, float(np.max(np.abs(w[key] - k[key]))))
        parts.append("%s: %d of %d values bit-identical" % (what, same, w[key].size))
    return {"program": "`examples/warp/torch_example.py`, `examples/warp/torch_interop/`",
            "check": "; ".join(parts) + " (1500 particles, torch 2.15.0 Adam on both sides)", "diff": diff,
            "kjit": k_ms, "warp": w_ms, "quote": False}


# Frames of core/example_cupy.py compared and timed (its default is 10: more, for a steadier median).
CUPY_FRAMES = 200


def cupy_warp_frames(frames):
    """Warp's own example_cupy.Example on the cpu, where it keeps NumPy arrays (importing it
    imports CuPy: the bench venv has it), stepped `frames` times: y after each frame, and the
    median ms per frame after the first (which compiles)."""
    from warp.examples.core import example_cupy as ex
    ys, ms = [], []
    with wp.ScopedDevice("cpu"), quiet_stdout():
        e = ex.Example()
        for f in range(frames):
            t0 = time.perf_counter()
            e.step()
            wp.synchronize()
            if f > 0:
                ms.append((time.perf_counter() - t0) * 1e3)
            ys.append(np.array(e.y, dtype=np.float32))
    return np.stack(ys), float(np.median(ms))


def cupy_example():
    """core/example_cupy.py: saxpy launched in place on the example's own arrays (NumPy's on the
    cpu; CuPy's on a GPU) by Warp and by kjit.arrays (examples/warp/cupy_example.py, in its own
    process), CUPY_FRAMES frames: y after every frame compared bit for bit; ms per frame (a launch)."""
    w, w_ms = cupy_warp_frames(CUPY_FRAMES)
    out = os.path.join(tmp, "cupy_kjit.npz")
    # Its prints go where Warp's go (nowhere): with each frame's print going into a pipe a
    # frame's launch measured 24 us, into /dev/null 9 us.
    subprocess.run([sys.executable, os.path.join(root, "examples", "warp", "cupy_example.py"), "--library",
                    os.path.join(build, "lib", "libwarp_cupy_interop.so"), "--num-frames", str(CUPY_FRAMES), "--out",
                    out], env=dict(os.environ, PYTHONPATH=os.path.join(root, "python")), stdout=subprocess.DEVNULL,
                   check=True)
    result = np.load(out)
    k, k_ms = result["y"], float(result["ms"])
    same = int(np.sum(w.view(np.uint32) == k.view(np.uint32))) if k.shape == w.shape else 0
    diff = float(np.max(np.abs(w - k))) if k.shape == w.shape and same != w.size else (0.0 if same else float("nan"))
    return {"program": "`examples/warp/cupy_example.py`, `examples/warp/cupy_interop/`",
            "check": "y after each of %d frames: %d of %d values bit-identical (NumPy arrays on the cpu, as the "
                     "example keeps them there; CuPy's on a GPU: not run, no GPU)" % (CUPY_FRAMES, same, w.size),
            "diff": diff, "kjit": k_ms, "warp": w_ms, "quote": False}


def jax_interop(example, repeat=50):
    """interop/example_<example>.py: Warp's example functions and the kjit port's
    (examples/warp/<example>.py), each in its own process under this venv's JAX
    (scripts/warp_jax_examples.py): every array each example function prints, compared bit for
    bit, and the median of its jitted calls (after a warm-up one)."""
    harness = os.path.join(root, "scripts", "warp_jax_examples.py")
    runs = {}
    for which in ("warp", "kjit"):
        out, times = (os.path.join(tmp, "%s_%s.%s" % (which, example, ext)) for ext in ("npz", "json"))
        env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"),
                   KJIT_WARP_JAX_LIBRARY=os.path.join(build, "lib", "libwarp_jax_interop.so"))
        subprocess.run([sys.executable, harness, which, example, "--quiet", "--out", out, "--times", times,
                        "--repeat", str(repeat)], env=env, check=True, capture_output=True, text=True)
        runs[which] = (np.load(out), json.load(open(times)))
    (w, w_ms), (k, k_ms) = runs["warp"], runs["kjit"]
    keys = sorted(set(w.files) - {"__layout__"}, key=lambda key: [int(x) if x.isdigit() else x
                                                                 for x in re.split(r"(\d+)", key)])
    parts, diff = [], 0.0
    for name in sorted(w_ms, key=lambda n: int(n[len("example"):])):
        mine = [key for key in keys if key.split(".")[0] == name]
        values = sum(w[key].size for key in mine)
        same = 0
        for key in mine:
            if key not in k.files or w[key].shape != k[key].shape or w[key].dtype != k[key].dtype:
                diff = float("nan")  # and none of its values counts as the same
                continue
            bits = "u%d" % w[key].dtype.itemsize
            same += int(np.sum(w[key].reshape(-1).view(bits) == k[key].reshape(-1).view(bits)))
            diff = max(diff, float(np.max(np.abs(w[key].astype(np.float64) - k[key].astype(np.float64)), initial=0)))
        parts.append("%s: %d of %d values bit-identical (kjit %.4f, Warp %.4f ms)" % (name, same, values, k_ms[name], w_ms[name]))
    wl, kl = json.loads(str(w["__layout__"])), json.loads(str(k["__layout__"]))
    one_item = sum(1 for key in wl if wl[key] != kl.get(key) and {wl[key], kl.get(key)} == {"array", "list[1]"})
    other = sorted(key for key in wl if wl[key] != kl.get(key) and {wl[key], kl.get(key)} != {"array", "list[1]"})
    check = "; ".join(parts)
    if one_item:
        check += "; %d prints of one array that Warp prints as a list of it (its jax_kernel returns a list)" % one_item
    if other:
        check += "; printed otherwise: " + ", ".join(other)
    return {"program": "`examples/warp/%s.py`, `examples/warp/jax_interop/`" % example, "check": check, "diff": diff,
            "kjit": sum(k_ms.values()), "warp": sum(w_ms.values()), "quote": False}



def warp_cpu_allocators():
    """Lets Warp's set_device_allocator and ScopedAllocator take the cpu (Warp 1.19 allows them
    on CUDA devices only; its cpu arrays ask device.get_allocator() all the same)."""
    from warp._src import context
    if getattr(context.Device.get_allocator, "kjit_cpu", False):
        return
    builtin = context.Device.get_allocator

    def get_allocator(self, pinned=False):
        custom = getattr(self, "_custom_allocator", None)
        return custom if self.is_cpu and not pinned and custom is not None else builtin(self, pinned)
    get_allocator.kjit_cpu = True
    context.Device.get_allocator = get_allocator

    def set_device_allocator(device, allocator):
        wp.get_device(device)._custom_allocator = allocator

    class ScopedAllocator:
        def __init__(self, device, allocator):
            self.device, self.allocator = wp.get_device(device), allocator

        def __enter__(self):
            self.saved = getattr(self.device, "_custom_allocator", None)
            self.device._custom_allocator = self.allocator

        def __exit__(self, *exc):
            self.device._custom_allocator = self.saved
    wp.set_device_allocator, wp.ScopedAllocator = set_device_allocator, ScopedAllocator


def allocator_calls(text):
    """The allocator's calls and totals as the example prints them, one line each ("alloc 4000"),
    pointers left out (they are addresses of two processes)."""
    lines = ["%s %s" % m for m in re.findall(r"\[(alloc|dealloc)\]\s+(\d+) bytes", text)]
    lines += ["total %s %s" % m for m in re.findall(r"Total (allocated|deallocated):\s+(\d+) bytes", text)]
    return "\n".join(lines) + "\n"


def warp_custom_allocator_calls():
    """Warp's example on the cpu (warp_cpu_allocators): the calls its logging allocator printed."""
    import contextlib, io
    warp_cpu_allocators()
    from warp.examples.core import example_custom_allocator as ex
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        ex.Example()
    return allocator_calls(text.getvalue())


def custom_allocator(frames=19):
    """core/example_custom_allocator.py: the sizes and order of the logging allocator's calls and
    its totals; the time of the whole example, quiet."""
    import contextlib, io
    warp_calls = warp_custom_allocator_calls()
    from warp.examples.core import example_custom_allocator as ex

    def quiet_example():
        with contextlib.redirect_stdout(io.StringIO()):
            ex.Example()
    warp_ms = timed(quiet_example, frames)
    kjit_ms, out = kjit_run("custom_allocator", ["--frames", str(frames)])
    w, k = warp_calls.splitlines(), open(out).read().splitlines()
    same = sum(1 for a, b in zip(w, k) if a == b) if len(w) == len(k) else 0
    check = "allocator calls and totals (%s): %d of %d identical" % (", ".join(w), same, len(w))
    return {"program": "examples/warp/custom_allocator.cpp", "check": check, "diff": 0.0 if same == len(w) else float("nan"),
            "kjit": kjit_ms, "warp": warp_ms}


class WarpWithoutPinned:
    """`wp` for an example whose pinned host buffers are plain cpu ones (pinned memory needs CUDA)."""
    def __getattr__(self, name):
        return getattr(wp, name)

    @staticmethod
    def zeros(*args, pinned=False, **kwargs):
        return wp.zeros(*args, **kwargs)


def warp_alloc_tracker(n):
    """Warp's example (both parts, their reports silenced) on the cpu with its global tracking on
    and `n` particles: returns the initial positions, the positions at the end of each part and
    each report's (allocations, bytes, peak bytes, live allocations, live bytes). Its pinned
    staging buffer is a plain cpu one here (pinned memory needs CUDA)."""
    import weakref
    from warp.examples.core import example_alloc_tracker as ex
    core = wp._src.context.runtime.core
    state = {"init": None, "sim": None, "positions": {}, "reports": []}

    class Sim(ex.ParticleSim):
        def __init__(self, *args):
            super().__init__(*args)
            state["init"] = self.positions.numpy().copy()
            state["sim"] = weakref.ref(self)

    def record():
        state["reports"].append([core.wp_alloc_tracker_get_total_alloc_count(), core.wp_alloc_tracker_get_total_alloc_bytes(),
                                 core.wp_alloc_tracker_get_peak_bytes(), core.wp_alloc_tracker_get_live_count(),
                                 core.wp_alloc_tracker_get_current_bytes()])
        sim = state["sim"]() if state["sim"] else None
        if sim is not None:  # the positions at a part's last report with the simulation alive
            state["positions"][state["part"]] = sim.positions.numpy().reshape(-1).copy()

    class Tracker(wp.ScopedMemoryTracker):
        def report(self, *args, **kwargs):
            record()

    class Warp(WarpWithoutPinned):  # the example's `wp`, its reports recorded
        ScopedMemoryTracker = Tracker
        print_memory_report = staticmethod(record)
    saved_wp, saved_sim = ex.wp, ex.ParticleSim
    ex.wp, ex.ParticleSim = Warp(), Sim
    core.wp_alloc_tracker_reset()
    core.wp_alloc_tracker_enable(1)  # as wp.config.track_memory does at wp.init()
    core.wp_alloc_tracker_push_scope(b"global")
    import contextlib, io
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            state["part"] = 1
            ex.run_global("cpu", n_particles=n)
            state["part"] = 2
            ex.run_scoped("cpu", n_particles=n)
    finally:
        core.wp_alloc_tracker_pop_scope()
        core.wp_alloc_tracker_enable(0)
        core.wp_alloc_tracker_reset()
        ex.wp, ex.ParticleSim = saved_wp, saved_sim
    positions = np.concatenate([state["positions"][1], state["positions"][2]]).astype(np.float32)
    return state["init"].astype(np.float32), positions, np.array(state["reports"], dtype=np.int64)


def alloc_tracker(n=200_000, frames=20):
    """core/example_alloc_tracker.py (200,000 particles): every report's counts and bytes and the
    positions at the end of both parts; the time of a simulation step."""
    from warp.examples.core import example_alloc_tracker as ex
    init, positions, reports = warp_alloc_tracker(n)
    init_file = os.path.join(tmp, "alloc_tracker_init.bin")
    init.tofile(init_file)
    saved_wp, ex.wp = ex.wp, WarpWithoutPinned()
    try:
        sim = ex.ParticleSim(n, "cpu")
    finally:
        ex.wp = saved_wp
    warp_ms = stepped(sim.step, frames)
    kjit_ms, out = kjit_run("alloc_tracker", ["--particles", str(n), "--init", init_file, "--frames", str(frames)])
    raw = open(out, "rb").read()
    k_pos = np.frombuffer(raw[:positions.size * 4], dtype=np.float32)
    k_rep = np.frombuffer(raw[positions.size * 4:], dtype=np.int64)
    same = int(np.sum(positions.view(np.uint32) == k_pos.view(np.uint32))) if k_pos.size == positions.size else 0
    diff = float(np.max(np.abs(positions - k_pos))) if same != positions.size and k_pos.size == positions.size else 0.0
    rep_same = int(np.sum(reports.reshape(-1) == k_rep)) if k_rep.size == reports.size else 0
    check = ("positions after 31 and 91 steps: %d of %d values bit-identical; %d reports' allocations, bytes, "
             "peak, live allocations and live bytes: %d of %d values identical (Warp's pinned staging buffer a "
             "plain cpu one on both sides)" % (same, positions.size, len(reports), rep_same, reports.size))
    if rep_same != reports.size:
        diff = float("nan")
    return {"program": "examples/warp/alloc_tracker.cpp", "check": check, "diff": diff, "kjit": kjit_ms, "warp": warp_ms}


# The alloc tracker's particles in the ctest (warp_example_alloc_tracker).
ALLOC_TRACKER_TEST = 1000

PORTED = {"core/example_raymarch.py": raymarch, "core/example_wave.py": wave,
          "core/example_graph_capture.py": graph_capture, "core/example_fluid.py": fluid,
          "optim/example_fluid_checkpoint.py": fluid_checkpoint,
          "optim/example_fluid_checkpoint_custom_backward.py": fluid_checkpoint_custom_backward,
          "core/example_spin_lock.py": spin_lock, "core/example_work_queue.py": work_queue,
          "interop/example_jax_kernel.py": lambda: jax_interop("jax_kernel"),
          "interop/example_jax_callable.py": lambda: jax_interop("jax_callable"),
          "core/example_torch.py": torch_example, "core/example_cupy.py": cupy_example,
          "core/example_custom_allocator.py": custom_allocator, "core/example_sph.py": sph,
          "core/example_dem.py": dem,
          "core/example_sample_mesh.py": sample_mesh,
          "core/example_raycast.py": raycast, "core/example_alloc_tracker.py": alloc_tracker,
          "core/example_mesh.py": mesh, "core/example_mesh_intersect.py": mesh_intersect,
          "optim/example_diffray.py": diffray,
          "optim/example_particle_repulsion.py": particle_repulsion}
# What an unported example uses that kjit lacks, found in its source (first match wins).
NEEDS = [("tiles", r"wp\.tile_|wp\.tile\b"), ("fem/sparse", r"warp\.fem|warp\.sparse|import fem"),
         ("NanoVDB volumes", r"wp\.Volume\b"),
         ("warp.geometry (iso-surfaces, marching cubes)", r"wp\.MarchingCubes\b|warp\.geometry|wp\.geometry"),
         ("PyTorch", r"import torch"), ("CuPy", r"import cupy"),
         ("multi-GPU/MPI", r"mpi4py|nccl|nvshmem")]

# Where the source search would mislead: rendering is what this example shows.
OVERRIDES = {"core/example_render_opengl.py": "needs rendering (an OpenGL renderer is the example)"}

def write_goldens(directory):
    """Warp's own outputs at the small sizes of the warp_example_* ctests (tests/CMakeLists.txt)."""
    from warp.examples.core import example_fluid, example_graph_capture, example_raymarch, example_wave
    e = example_raymarch.Example(height=32, width=64)
    wp.launch(example_raymarch.draw, dim=e.width * e.height, inputs=[e.cam_pos, e.cam_rot, e.width, e.height, e.pixels])
    outputs = {"raymarch_64x32.bin": e.pixels}
    e = example_wave.Example(stage_path=None)
    for _ in range(10):
        e.step()
    outputs["wave_10_frames.bin"] = e.sim_grid0
    e = example_graph_capture.Example()
    for _ in range(10):
        e.step()
    outputs["graph_capture_10_frames.bin"] = e.pixel_values
    e = example_fluid.Example()
    for _ in range(3):
        e.step()
    outputs["fluid_3_frames.bin"] = e.rho0
    for name, array in outputs.items():
        array.numpy().astype(np.float32).tofile(os.path.join(directory, name))
    # The checkpointed optimisation: its target (an input of the ctest) and its outputs.
    grid = FLUID_CHECKPOINT_TEST[0]
    ex, _ = import_fluid_checkpoint("fluid_checkpoint", grid)
    e, parts, _ = train_fluid_checkpoint(ex, *FLUID_CHECKPOINT_TEST[1:])
    e.target_wp.numpy().astype(np.float32).tofile(os.path.join(directory, "fluid_checkpoint_target_%d.bin" % grid))
    np.concatenate(parts).tofile(os.path.join(directory, "fluid_checkpoint_%d.bin" % grid))
    outputs["fluid_checkpoint_target_%d.bin" % grid] = outputs["fluid_checkpoint_%d.bin" % grid] = None
    ex, _ = import_fluid_checkpoint("fluid_checkpoint_custom_backward", grid)
    e, parts, _ = train_fluid_checkpoint(ex, *FLUID_CHECKPOINT_TEST[1:])
    np.concatenate(parts).tofile(os.path.join(directory, "fluid_checkpoint_custom_backward_%d.bin" % grid))
    outputs["fluid_checkpoint_custom_backward_%d.bin" % grid] = None
    from warp.examples.core import example_spin_lock
    lock, counter, atomic = (wp.zeros(1, dtype=int) for _ in range(3))
    wp.launch(example_spin_lock.test_spinlock_counter, dim=1024, inputs=[counter, atomic, lock])
    np.array([counter.numpy()[0], atomic.numpy()[0], lock.numpy()[0]], dtype=np.int32).tofile(
        os.path.join(directory, "spin_lock.bin"))
    outputs["spin_lock.bin"] = None
    queue, run = work_queue_warp()
    run()
    np.concatenate([queue.head.numpy(), queue.tail.numpy(), queue.buffer.numpy()]).astype(np.int32).tofile(
        os.path.join(directory, "work_queue.bin"))
    outputs["work_queue.bin"] = None
    with open(os.path.join(directory, "custom_allocator.txt"), "w") as f:
        f.write(warp_custom_allocator_calls())
    init, positions, reports = warp_alloc_tracker(ALLOC_TRACKER_TEST)
    init.tofile(os.path.join(directory, "alloc_tracker_init_%d.bin" % ALLOC_TRACKER_TEST))
    with open(os.path.join(directory, "alloc_tracker_%d.bin" % ALLOC_TRACKER_TEST), "wb") as f:
        f.write(positions.tobytes() + reports.tobytes())
    outputs["custom_allocator.txt"] = outputs["alloc_tracker_init_%d.bin" % ALLOC_TRACKER_TEST] = None
    outputs["alloc_tracker_%d.bin" % ALLOC_TRACKER_TEST] = None
    e = sph_example(SPH_TEST[0])
    for _ in range(SPH_TEST[1]):
        e.step()
    name = "sph_%g_%d_frames.bin" % SPH_TEST
    np.concatenate([e.x.numpy().reshape(-1), e.v.numpy().reshape(-1)]).astype(np.float32).tofile(
        os.path.join(directory, name))
    outputs[name] = None
    e, init, _ = dem_run(*DEM_TEST)
    for _ in range(DEM_TEST[1]):
        e.step()
    tag = "%d_%d_%d" % DEM_TEST[0]
    init.tofile(os.path.join(directory, "dem_init_%s.bin" % tag))
    name = "dem_%s_%d_frames.bin" % (tag, DEM_TEST[1])
    np.concatenate([e.x.numpy().reshape(-1), e.v.numpy().reshape(-1)]).astype(np.float32).tofile(
        os.path.join(directory, name))
    outputs[name] = outputs["dem_init_%s.bin" % tag] = None
    from warp.examples.core import example_sample_mesh
    e = example_sample_mesh.Example(stage_path=None)
    for _ in range(16):
        e.step()
    np.concatenate([e.cdf.numpy().reshape(-1), e.points.numpy().reshape(-1)]).astype(np.float32).tofile(
        os.path.join(directory, "sample_mesh_16_frames.bin"))
    outputs["sample_mesh_16_frames.bin"] = None
    e, _ = raycast_example(64, 48)
    e.render()
    e.mesh.points.numpy().astype(np.float32).tofile(os.path.join(directory, "raycast_bunny_points.bin"))
    e.mesh.indices.numpy().astype(np.int32).tofile(os.path.join(directory, "raycast_bunny_indices.bin"))
    e.pixels.numpy().astype(np.float32).tofile(os.path.join(directory, "raycast_64x48.bin"))
    outputs["raycast_bunny_points.bin"] = outputs["raycast_bunny_indices.bin"] = outputs["raycast_64x48.bin"] = None
    outputs.update((name, None) for name in write_mesh_goldens(directory))
    outputs.update((name, None) for name in write_diffray_goldens(directory))
    outputs.update((name, None) for name in write_particle_repulsion_goldens(directory))
    # Every array the JAX interop examples print (warp_example_jax_* ctests).
    for example in ("jax_kernel", "jax_callable"):
        subprocess.run([sys.executable, os.path.join(root, "scripts", "warp_jax_examples.py"), "warp", example, "--quiet",
                        "--out", os.path.join(directory, example + ".npz")], check=True, capture_output=True)
    # Warp's CuPy example on the cpu (warp_example_cupy ctest): y after each of 10 frames.
    cupy_frames, _ = cupy_warp_frames(10)
    cupy_frames.tofile(os.path.join(directory, "cupy_10_frames.bin"))
    outputs["cupy_10_frames.bin"] = None
    # Warp's torch example (warp_example_torch ctest), under the torch venv.
    w, _ = torch_run("warp", os.path.join(tmp, "torch_warp.npz"))
    np.savez(os.path.join(directory, "torch_%d_iters.npz" % TORCH_ITERS), xy=w["xy"], means=w["means"])
    print("wrote %s, jax_kernel.npz, jax_callable.npz, torch_%d_iters.npz to %s" % (", ".join(outputs), TORCH_ITERS,
                                                                                   directory))


if out_md == "--torch-warp":
    torch_warp_run(sys.argv[3])
    sys.exit(0)
if out_md == "--goldens":
    write_goldens(sys.argv[3])
    sys.exit(0)

def ported_row(rel):
    """The table row of ported example `rel`: run beside Warp's now."""
    r = PORTED[rel]()
    program = r["program"] if r.get("quote") is False else "`%s`" % r["program"]
    ms = "%.2f | %.2f" if r["kjit"] >= 0.1 else "%.4f | %.4f"  # the JAX calls take microseconds
    return ("| `%s` | ported | %s | %s; largest difference %.3g | " + ms + " | %.3f |") % (
        rel, program, r["check"], r["diff"], r["kjit"], r["warp"], r["kjit"] / r["warp"])


if len(sys.argv) > 3 and sys.argv[3] == "--only":
    # Reruns the rows of the ported examples named (comma-separated, as the table names them) and
    # replaces those rows of OUT_MD, leaving the rest as the last full run wrote them.
    text = open(out_md, encoding="utf-8").read()
    for rel in sys.argv[4].split(","):
        row = ported_row(rel)
        text, count = re.subn(r"^\| `%s` \|.*$" % re.escape(rel), lambda _: row, text, flags=re.M)
        assert count == 1, "%s: no row of its own in %s" % (rel, out_md)
        print(row)
    open(out_md, "w", encoding="utf-8").write(text)
    sys.exit(0)

load_at_start = os.getloadavg()[0]
rows = []
for path in sorted(glob.glob(os.path.join(examples_dir, "*", "example_*.py"))):
    rel = os.path.relpath(path, examples_dir)
    if rel in PORTED:
        rows.append(ported_row(rel))
        continue
    if rel in OVERRIDES:
        rows.append("| `%s` | %s | | | | | |" % (rel, OVERRIDES[rel]))
        continue
    src = open(path, encoding="utf-8").read()
    need = next((n for n, pat in NEEDS if re.search(pat, src)), None)
    status = "needs " + need if need else "not yet ported" + (" (warp.render only displays it)" if "warp.render" in src else "")
    rows.append("| `%s` | %s | | | | | |" % (rel, status))

with open(out_md, "w") as f:
    f.write("""# Warp's examples in kjit

Every `example_*.py` of the Warp 1.19 wheel (`warp/examples/`): the ones ported to kjit under
`examples/warp/` run beside Warp's own on the cpu, on the same inputs, with their outputs
compared; the others say what they use that kjit lacks (found in their source: the first of
tiles, FEM/sparse, NanoVDB volumes, `warp.geometry`, PyTorch, CuPy, multi-GPU), or that they are not ported yet
(kjit has no `warp.render`; where an example only displays its state with it, the rest ports).
Written by:

```
scripts/warp_examples.sh
```

(`scripts/warp_examples.sh build --only core/example_sph.py,...` reruns the rows named and
replaces them; the load below is the full run's.)

Times are milliseconds per frame on this machine's cpu (kjit on all cores, Warp's cpu launches
on one), medians of the frames each driver runs (2 to 499) after a warm-up one, in one run. For `optim/` examples, per
optimisation iteration (forward, backward, Adam or SGD step; the fluid ones checkpointed), kjit's launches
deterministic to get Warp's bits (in index order on one thread, adding plainly, as Warp's cpu
does). For the JAX interop examples, the sum over the example functions of each one's jitted
call (the median of 50 after a warm-up one, each function's own times in its check; both under
JAX 0.7.2 on the cpu platform, Warp's launch a Python callback, kjit's a C++ handler). For
`core/example_torch.py`, per Adam step (kernel, its adjoint, torch's Adam) of 1500 particles,
the median of 9 after a first one, both under torch 2.15.0 in the torch venv. The
machine's load average (other work on its %d cores) was %.1f when it started: kjit's pool gains
little from a second core another process keeps busy.

| example | status | kjit program | checked outputs | kjit ms | Warp ms | kjit / Warp |
|---|---|---|---|---|---|---|
""" % (os.cpu_count(), load_at_start))
    f.write("\n".join(rows) + "\n")
print("%d examples, %d ported; wrote %s" % (len(rows), len(PORTED), out_md))
