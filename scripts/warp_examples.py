# Runs each Warp 1.19 example kjit has ported (examples/warp/) beside Warp's own on the cpu, on
# the same inputs, and writes docs/WARP_EXAMPLES.md: one row per example_*.py of the installed
# warp wheel, with what the unported ones use that kjit lacks (found in their source).
#   .venv-bench/bin/python scripts/warp_examples.py BUILD_DIR OUT_MD
import glob, os, re, subprocess, sys, tempfile, time
import numpy as np
import warp as wp

wp.config.quiet = True
wp.init()
wp.set_device("cpu")
build, out_md = sys.argv[1], sys.argv[2]
examples_dir = os.path.dirname(__import__("warp.examples", fromlist=["x"]).__file__)
tmp = tempfile.mkdtemp(prefix="warp-examples-")


def kjit_run(name, args):
    """Runs examples/warp/NAME; returns (ms per frame, output file)."""
    out = os.path.join(tmp, name + ".bin")
    r = subprocess.run([os.path.join(build, "examples", "warp_" + name)] + args + ["--out", out],
                       capture_output=True, text=True, check=True)
    return float(re.search(r"([0-9.]+) ms per frame", r.stdout).group(1)), out


def timed(f, frames):
    f()
    ms = []
    for _ in range(frames):
        t0 = time.perf_counter()
        f()
        wp.synchronize()
        ms.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ms))


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


PORTED = {"core/example_raymarch.py": raymarch}
# What an unported example uses that kjit lacks, found in its source (first match wins).
NEEDS = [("tiles", r"wp\.tile_|wp\.tile\b"), ("fem/sparse", r"warp\.fem|warp\.sparse|import fem"),
         ("geometry", r"wp\.(Mesh|Bvh|HashGrid|Volume|MarchingCubes)\b|warp\.geometry"),
         ("USD", r"from pxr|import pxr"), ("PyTorch", r"import torch"), ("CuPy", r"import cupy"),
         ("multi-GPU/MPI", r"mpi4py|nccl|nvshmem")]

# Where the source search would mislead: rendering is what this example shows.
OVERRIDES = {"core/example_render_opengl.py": "needs rendering (an OpenGL renderer is the example)"}

rows = []
for path in sorted(glob.glob(os.path.join(examples_dir, "*", "example_*.py"))):
    rel = os.path.relpath(path, examples_dir)
    if rel in PORTED:
        r = PORTED[rel]()
        rows.append("| `%s` | ported | `%s` | %s; largest difference %.3g | %.2f | %.2f | %.3f |" %
                    (rel, r["program"], r["check"], r["diff"], r["kjit"], r["warp"], r["kjit"] / r["warp"]))
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
tiles, FEM/sparse, geometry, USD, PyTorch, CuPy, multi-GPU), or that they are not ported yet
(kjit has no `warp.render`; where an example only displays its state with it, the rest ports).
Written by:

```
scripts/warp_examples.sh
```

Times are milliseconds per frame on this machine's cpu (kjit on all cores, Warp's cpu launches
on one), medians of 5 after a warm-up, in one run.

| example | status | kjit program | checked outputs | kjit ms | Warp ms | kjit / Warp |
|---|---|---|---|---|---|---|
""")
    f.write("\n".join(rows) + "\n")
print("%d examples, %d ported; wrote %s" % (len(rows), len(PORTED), out_md))
