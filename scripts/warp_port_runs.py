# What scripts/warp_examples.py's drivers share: Warp on the cpu, running a kjit port
# (build/examples/warp_NAME) and timing Warp's side, comparing outputs as numpy's bytes.
# warp_examples.py sets `build` before any driver runs.
import os, re, subprocess, sys, tempfile, time, types
import numpy as np
import warp as wp

wp.config.quiet = True
wp.init()
wp.ScopedTimer.enabled = False  # the examples time their steps and print; this script times them
wp.set_device("cpu")
build = None  # the kjit build directory (warp_examples.py sets it)
examples_dir = os.path.dirname(__import__("warp.examples", fromlist=["x"]).__file__)
tmp = tempfile.mkdtemp(prefix="warp-examples-")


def kjit_run(name, args, outputs=("--out",)):
    """Runs examples/warp/NAME; returns (ms per frame or iteration, output file), or (ms, [files]) for several
    outputs (one per option in `outputs`)."""
    files = [os.path.join(tmp, "%s%d.bin" % (name, k)) for k in range(len(outputs))]
    r = subprocess.run([os.path.join(build, "examples", "warp_" + name)] + args +
                       [x for o, f in zip(outputs, files) for x in (o, f)], capture_output=True, text=True, check=True)
    ms = float(re.search(r"([0-9.]+) ms per (?:frame|iteration)", r.stdout).group(1))
    return ms, (files[0] if len(outputs) == 1 else files)


def stepped(step, frames):
    """Runs `step` `frames` times (the simulation's frames), timing each but the first (it
    compiles): the median in ms, as the ports time themselves."""
    ms = []
    for f in range(frames):
        t0 = time.perf_counter()
        step()
        wp.synchronize()
        if f > 0:
            ms.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ms))


def compare(what, warp_array, kjit_file):
    """(check text, largest difference) of Warp's array and the float32 values in kjit_file."""
    w = warp_array.numpy().reshape(-1).astype(np.float32)
    k = np.fromfile(kjit_file, dtype=np.float32)
    if k.size != w.size:
        return "%s: %d values from kjit, %d from Warp" % (what, k.size, w.size), float("nan")
    same = int(np.sum(w.view(np.uint32) == k.view(np.uint32)))
    diff = float(np.max(np.abs(w - k))) if same != w.size else 0.0
    return "%s: %d of %d values bit-identical" % (what, same, w.size), diff


def combine(*checks):
    return "; ".join(c for c, _ in checks), max(d for _, d in checks)


def timed(f, frames):
    f()
    ms = []
    for _ in range(frames):
        t0 = time.perf_counter()
        f()
        wp.synchronize()
        ms.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ms))


def compare_parts(warp_parts, kjit_file, names):
    """Compares Warp's parts with kjit's file (the same parts, concatenated)."""
    k = np.fromfile(kjit_file, dtype=np.float32)
    sizes = [p.size for p in warp_parts]
    if k.size != sum(sizes):
        return "%d values from kjit, %d from Warp" % (k.size, sum(sizes)), float("nan")
    checks, offset = [], 0
    for name, w in zip(names, warp_parts):
        kp = k[offset:offset + w.size]
        offset += w.size
        same = int(np.sum(w.view(np.uint32) == kp.view(np.uint32)))
        diff = float(np.max(np.abs(w - kp))) if same != w.size else 0.0
        rel = diff / max(float(np.max(np.abs(w))), 1e-30)
        checks.append(("%s: %d of %d values bit-identical" % (name, same, w.size) +
                       ("" if same == w.size else " (largest difference %.3g, %.2g of its largest value)" % (diff, rel)),
                       diff))
    return combine(*checks)


def disk_target(n):
    """The image the ports use where Pillow is missing: a disk of radius n / 4 (as
    examples/warp/fluid_checkpoint.cpp makes its target without --target)."""
    x = np.arange(n, dtype=np.float64)[:, None] - n / 2.0
    y = np.arange(n, dtype=np.float64)[None, :] - n / 2.0
    return (x * x + y * y < n * n / 16.0).astype(np.float32)


def pillow_or_disk():
    """Warp's optim examples read nvidia_logo.png through Pillow; where Pillow is missing (the
    bench venv) this installs a stand-in PIL module whose resized image is disk_target's disk.
    Returns what the examples' image is."""
    try:
        import PIL.Image
        if not getattr(PIL, "kjit_stand_in", False):  # not an earlier call's
            return "nvidia_logo.png resized by Pillow"
    except ImportError:
        class Stand_in:
            def resize(self, size):
                return np.repeat((disk_target(size[0]) * 255.0)[:, :, None], 3, axis=2)
        pil = types.ModuleType("PIL")
        pil.kjit_stand_in = True
        pil.Image = types.SimpleNamespace(open=lambda path: Stand_in())
        sys.modules["PIL"], sys.modules["PIL.Image"] = pil, pil.Image
    return "a disk (no Pillow here for Warp's nvidia_logo.png)"
