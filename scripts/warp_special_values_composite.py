# Warp 1.19's results for kjit's vector, matrix, quaternion and transform builtins on special
# values, for tests/builtins/special_values_composite.cpp. Reads the signatures and input rows
# that test lists (KJIT_SPECIAL_VALUES_LIST: "name result args... f32|f64 ; values..."), writes
# one line per signature: "name args... f32|f64 : " and one hash per row of the output
# components' bits (NaNs canonical; the test computes the same hash), or "... absent" where
# Warp has no such signature. With a third argument, also writes every row's output bits there
# (for diagnosing a difference).
#   .venv-bench/bin/python scripts/warp_special_values_composite.py LIST OUT [VERBOSE]
import importlib.util, os, sys, tempfile
import numpy as np
import warp as wp

wp.config.quiet = True
wp.init()
list_file, out_file = sys.argv[1], sys.argv[2]
verbose = open(sys.argv[3], "w") if len(sys.argv) > 3 else None

LANES = {"s": 1, "b": 1, "u": 1, "i": 1, "v2": 2, "v3": 3, "v4": 4, "v6": 6, "m22": 4, "m33": 9, "m44": 16, "q": 4, "t": 7}


def wp_type(code, scalar):
    """Warp's type for a code, as source text."""
    f = "f" if scalar == "f32" else "d"
    return {"s": "wp.float32" if scalar == "f32" else "wp.float64", "b": "wp.bool", "u": "wp.uint32", "i": "wp.int32",
            "v6": f"wp.spatial_vector{f}", "q": f"wp.quat{f}", "t": f"wp.transform{f}"}.get(
        code, f"wp.vec{code[1]}{f}" if code[0] == "v" else f"wp.mat{code[1:]}{f}")


sigs = []
for line in open(list_file):
    head, values = line.split(" ; ")
    name, result, *args, scalar = head.split()
    vals = [float.fromhex(v) if v != "nan" else float("nan") for v in values.split()]
    k = sum(LANES[a] for a in args)
    sigs.append((name, result, args, scalar, np.array(vals).reshape(-1, k)))

# One module per signature: a signature Warp rejects fails its own module only.
OPERATORS = {"eq": "==", "ne": "!="}
src = ["import warp as wp"]
for i, (name, result, args, scalar, _) in enumerate(sigs):
    params = ", ".join(f"a{k}: wp.array(dtype={wp_type(a, scalar)})" for k, a in enumerate(args))
    call = f"a0[i] {OPERATORS[name]} a1[i]" if name in OPERATORS else f"wp.{name}(" + ", ".join(f"a{k}[i]" for k in range(len(args))) + ")"
    src += [f"def make_{i}():",
            f"    @wp.kernel(module='unique')",
            f"    def k_{i}({params}, out: wp.array(dtype={wp_type(result, scalar)})):",
            f"        i = wp.tid()",
            f"        out[i] = {call}",
            f"    return k_{i}"]
path = os.path.join(tempfile.mkdtemp(prefix="warp-special-composite-"), "special_composite_kernels.py")
open(path, "w").write("\n".join(src) + "\n")
spec = importlib.util.spec_from_file_location("special_composite_kernels", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)


def lane_bits(res, result, scalar):
    """Each row's output lanes as integers, NaNs canonical (as the test's lane_bits)."""
    a = res.numpy().reshape(len(res), -1)
    if result in ("b", "u", "i"):
        return a.astype(np.uint64) if result != "i" else a.view(np.uint32).astype(np.uint64)
    if scalar == "f32":
        return np.where(np.isnan(a), 0x7fc00000, a.view(np.uint32)).astype(np.uint64)
    return np.where(np.isnan(a), np.uint64(0x7ff8000000000000), a.view(np.uint64)).astype(np.uint64)


def row_hash(lanes):
    """FNV-1a over each lane's 8 little-endian bytes, the low 24 bits (as the test's row_hash)."""
    h = 0xcbf29ce484222325
    for l in lanes:
        for b in int(l).to_bytes(8, "little"):
            h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h & 0xFFFFFF


with open(out_file, "w") as out:
    out.write("# Warp 1.19's results for tests/builtins/special_values_composite.cpp "
              "(scripts/warp_special_values_composite.sh): a hash of each input row's output bits\n")
    for i, (name, result, args, scalar, rows) in enumerate(sigs):
        key = " ".join([name] + args + [scalar])
        np_t = np.float32 if scalar == "f32" else np.float64
        try:
            kernel = getattr(mod, f"make_{i}")()
            inputs, col = [], 0
            for a in args:
                part = rows[:, col:col + LANES[a]].astype(np_t)
                col += LANES[a]
                shape = {"m22": (2, 2), "m33": (3, 3), "m44": (4, 4)}.get(a)
                part = part.reshape(len(rows), *shape) if shape else (part[:, 0] if a == "s" else part)
                inputs.append(wp.array(part, dtype=eval(wp_type(a, scalar)), device="cpu"))
            res = wp.zeros(len(rows), dtype=eval(wp_type(result, scalar)), device="cpu")
            wp.launch(kernel, dim=len(rows), inputs=inputs + [res], device="cpu")
            bits = lane_bits(res, result, scalar)
            out.write(key + " : " + " ".join(f"{row_hash(b):06x}" for b in bits) + "\n")
            if verbose:
                for r, b in enumerate(bits):
                    verbose.write(f"{key} row {r}: " + " ".join(f"{int(x):x}" for x in b) + "\n")
        except Exception as e:  # Warp has no such builtin or signature
            out.write(key + " absent\n")
            print(f"{key}: absent in Warp ({type(e).__name__}: {str(e).splitlines()[0][:160]})", file=sys.stderr)
