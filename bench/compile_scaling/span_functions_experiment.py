"""An experiment, not part of kjit: each reverse span of a long adjoint moved out of line.

Rewrites the adjoint body of a module written by `bench_compile_scaling --text DIR N` so that
every reverse span ("{  // span J again ...") becomes a `__device__ __noinline__` function
that takes the span's inputs and checkpoints by value, the variables and adjoints it updates
by reference (copied into locals on entry, back on exit) and the arrays it touches by const
reference, then times NVRTC to SASS on the original and the rewritten text. Recognises the
names the emitter writes (vN, adj_vN, varN, adj_varN, kj_spanJ_varN, p_*, adj_p_*) and the
scalar types of the scaling kernel only: docs/BENCHMARKS.md (stop 27, sm_90) has its numbers.

    python3 bench/compile_scaling/span_functions_experiment.py DIR/scaling_500.cu DIR/scaling_2000.cu
"""

from __future__ import annotations

import ctypes
import re
import sys
import time

DECL = re.compile(r"^\s*(?:const )?(float|kj_int32|double)\s+(\w+)\s*(?:=|;)")
NAME = re.compile(r"\b(v\d+|adj_v\d+|var\d+|adj_var\d+|kj_span\d+_var\d+|p_\w+|adj_p_\w+|dim|kj_index)\b")


def outline_spans(text: str) -> str:
    src = text.split("\n")
    start = next(i for i, l in enumerate(src) if "_adj_body(" in l and l.startswith("template"))
    end = start + 1
    while not src[end].startswith("}"):
        end += 1
    body = src[start + 1:end]
    types = {m.group(2): m.group(1) for m in map(DECL.match, body) if m}
    for m in re.finditer(r"(float|kj_int32|double)&?\s+(p_\w+|adj_p_\w+)", src[start]):
        types[m.group(2)] = m.group(1)
    out, functions, i = [], [], 0
    while i < len(body):
        if not re.match(r"^  \{  // span \d+ again", body[i]):
            out.append(body[i])
            i += 1
            continue
        depth, j = 0, i
        while True:
            depth += body[j].count("{") - body[j].count("}")
            if depth == 0:
                break
            j += 1
        inner = body[i + 1:j]
        declared = {m.group(2) for m in map(DECL.match, inner) if m}
        used = set()
        for line in inner:
            if not line.startswith("#line"):
                used |= set(NAME.findall(line))
        params, templates, copy_in, copy_out, args = [], [], [], [], []
        for name in sorted(used - declared):
            args.append(name)
            if name == "dim":
                params.append("const kj::launch_bounds_t& dim")
            elif name == "kj_index":
                params.append("kj_int64 kj_index")
            elif name not in types:  # an array parameter
                templates.append(f"class A{len(templates)}")
                params.append(f"const A{len(templates) - 1}& {name}")
            elif name.startswith("adj_p_"):
                params.append(f"{types[name]}& {name}")
            elif name.startswith(("adj_", "var")):
                params.append(f"{types[name]}& kj_r_{name}")
                copy_in.append(f"  {types[name]} {name} = kj_r_{name};")
                copy_out.append(f"  kj_r_{name} = {name};")
            else:
                params.append(f"{types[name]} {name}")
        fn = f"kj_span_fn{len(functions)}"
        head = f"template <{', '.join(templates)}> " if templates else ""
        functions += [head + f"static __device__ __noinline__ void {fn}({', '.join(params)}) {{",
                      *copy_in, *inner, *copy_out, "}"]
        out.append(f"  {fn}({', '.join(args)});")
        i = j + 1
    return "\n".join(src[:start] + functions + [src[start]] + out + src[end:])


def nvrtc_seconds(text: str, arch: str = "sm_90") -> float:
    lib = ctypes.CDLL("libnvrtc.so")
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), text.encode(), b"m.cu", 0, None, None) == 0
    opts = [b"-w", b"--minimal", f"--gpu-architecture={arch}".encode(), b"-std=c++17", b"-DKJ_CUDA_SOURCE"]
    t = time.process_time()
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    seconds = time.process_time() - t
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    if rc != 0:
        raise RuntimeError(f"NVRTC failed ({rc})")
    return seconds


def main() -> int:
    rows = []
    for path in sys.argv[1:]:
        text = open(path).read()
        rows.append((path, nvrtc_seconds(text), nvrtc_seconds(outline_spans(text))))
    for path, a, b in rows:
        print(f"{path}: as generated {a:.2f} s, spans out of line {b:.2f} s (CPU, NVRTC to SASS)")
    if len(rows) >= 2:
        print(f"last / first: {rows[-1][1] / rows[0][1]:.2f}x as generated, {rows[-1][2] / rows[0][2]:.2f}x out of line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
