# Warp 1.19's results for every scalar float builtin on special values (NaN, infinities, signed
# zeros, a denormal, the largest finite value, a few ordinary numbers), for
# tests/builtins/special_values.cpp. Reads the signatures and values that test lists
# (KJIT_SPECIAL_VALUES_LIST), writes one line per signature: "name arity f32|f64" and the
# results' bits in hex, one per argument tuple (every combination of the values; ternary
# builtins the first eight), or "absent" where Warp has no such builtin or signature.
#   .venv-bench/bin/python scripts/warp_special_values.py LIST OUT
import importlib.util, itertools, os, sys, tempfile
import numpy as np
import warp as wp

wp.config.quiet = True
wp.init()
list_file, out_file = sys.argv[1], sys.argv[2]
sigs = []
for line in open(list_file):
    name, arity, scalar, *values = line.split()
    vals = [float.fromhex(v) for v in values]
    sigs.append((name, int(arity), scalar, vals[:8] if int(arity) == 3 else vals))

# One module per signature: a builtin Warp rejects fails its own module only.
src = ["import warp as wp"]
for i, (name, arity, scalar, _) in enumerate(sigs):
    dt = "wp.float32" if scalar == "f32" else "wp.float64"
    params = ", ".join(f"a{k}: wp.array(dtype={dt})" for k in range(arity))
    call = ", ".join(f"a{k}[i]" for k in range(arity))
    src += [f"def make_{i}():",
            f"    @wp.kernel(module='unique')",
            f"    def k_{i}({params}, out: wp.array(dtype={dt})):",
            f"        i = wp.tid()",
            f"        out[i] = wp.{name}({call})",
            f"    return k_{i}"]
path = os.path.join(tempfile.mkdtemp(prefix="warp-special-"), "special_kernels.py")
open(path, "w").write("\n".join(src) + "\n")
spec = importlib.util.spec_from_file_location("special_kernels", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)

with open(out_file, "w") as out:
    for i, (name, arity, scalar, vals) in enumerate(sigs):
        np_t = np.float32 if scalar == "f32" else np.float64
        tuples = list(itertools.product(vals, repeat=arity))
        try:
            kernel = getattr(mod, f"make_{i}")()
            args = [wp.array(np.array([t[k] for t in tuples], dtype=np_t), device="cpu") for k in range(arity)]
            res = wp.zeros(len(tuples), dtype=wp.float32 if scalar == "f32" else wp.float64, device="cpu")
            wp.launch(kernel, dim=len(tuples), inputs=args + [res], device="cpu")
            bits = res.numpy().view(np.uint32 if scalar == "f32" else np.uint64)
            out.write(f"{name} {arity} {scalar} " + " ".join(f"{int(b):x}" for b in bits) + "\n")
        except Exception as e:  # Warp has no such builtin or signature
            out.write(f"{name} {arity} {scalar} absent\n")
            print(f"{name} {arity} {scalar}: absent in Warp ({type(e).__name__}: {str(e).splitlines()[0][:120]})", file=sys.stderr)
