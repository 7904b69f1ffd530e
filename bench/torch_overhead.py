"""Per-call cost of a small kjit kernel called from torch (kjit.torch) against a torch built-in
op doing the same work: out = a * x + y in float32 (demo::saxpy vs torch.add(y, x, alpha=a)),
at n = 1 (overhead) and n = 1M (throughput), on the cpu.

Rows, each against its torch.add row: without autograd (torch.no_grad) kjit via the callable
with a as a Python number and as a 0-d tensor, and kjit's forward op called directly (the
dispatcher, no argument checks); with x requiring grad, the forward call, and forward plus
backward of the sum; at n = 1, both under torch.compile(fullgraph=True). Interleaved rounds,
the median per call of each. Usage (docs/BENCHMARKS.md, *kjit.torch*):
    KJIT_DEMO_LIBRARY=build/lib/libdemo_kernels.so PYTHONPATH=python .venv-torch/bin/python bench/torch_overhead.py
(--no-compile leaves out the compiled rows, whose first call compiles with inductor.)
--steady: instead, at n = 1M only, many short interleaved rounds (400 of 3 calls), whose
quantiles hold still where the 1M medians above swing with the machine: the call and the
prepared launch into a preallocated output against torch.add and torch.add(out=).
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import torch

import kjit.torch as kt


def per_call(fn, calls: int) -> float:
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls


def steady(saxpy) -> None:
    n = 1_000_000
    x, y, out, out_t = torch.rand(n), torch.rand(n), torch.empty(n), torch.empty(n)
    a = torch.tensor(2.0)
    with torch.no_grad():
        saxpy(x, y, 2.0)  # makes the layout's plan
        prepared = next(iter(saxpy._eager_plans.values()))[0]
        ptrs = [x.data_ptr(), y.data_ptr(), a.data_ptr(), out.data_ptr()]
        rows = {"torch.add(out=)": lambda: torch.add(y, x, alpha=2.0, out=out_t),
                "kjit launch, output given": lambda: prepared.launch(ptrs),
                "torch.add": lambda: torch.add(y, x, alpha=2.0),
                "kjit saxpy(x, y, 2.0)": lambda: saxpy(x, y, 2.0)}
        times: dict[str, list[float]] = {k: [] for k in rows}
        for _ in range(400):
            for name, fn in rows.items():
                times[name].append(per_call(fn, 3))
    print(f"n = {n}, 400 rounds of 3 calls, kjit's cpu threads: {kt.cpu_threads()}")
    for name, t in times.items():
        t.sort()
        print(f"  {name:28s} min {t[0] * 1e6:8.1f}  p10 {t[40] * 1e6:8.1f}  median {t[200] * 1e6:8.1f} us")


def main() -> None:
    kt.load(os.environ["KJIT_DEMO_LIBRARY"])
    saxpy = kt.kernel("demo::saxpy")
    if "--steady" in sys.argv:
        steady(saxpy)
        return
    compiled = "--no-compile" not in sys.argv
    print(f"torch {torch.__version__}, {torch.get_num_threads()} torch threads, cpu, kjit.torch from "
          f"{os.path.dirname(kt.__file__)}")
    for n, calls, rounds in ((1, 2000, 7), (1_000_000, 20, 7)):
        x, y = torch.rand(n), torch.rand(n)
        xg = x.clone().requires_grad_()
        a = torch.tensor(2.0)
        # (row, function, grad enabled, the torch.add row it is compared with)
        rows = [
            ("torch.add(y, x, alpha=2)", lambda: torch.add(y, x, alpha=2.0), False, None),
            ("kjit saxpy(x, y, 2.0)", lambda: saxpy(x, y, 2.0), False, "torch.add(y, x, alpha=2)"),
            ("kjit saxpy(x, y, tensor)", lambda: saxpy(x, y, a), False, "torch.add(y, x, alpha=2)"),
            ("kjit forward op", lambda: saxpy.forward_op(x, y, a), False, "torch.add(y, x, alpha=2)"),
            ("grad: torch.add", lambda: torch.add(y, xg, alpha=2.0), True, None),
            ("grad: kjit saxpy", lambda: saxpy(xg, y, 2.0), True, "grad: torch.add"),
            ("grad: torch.add + backward", lambda: torch.add(y, xg, alpha=2.0).sum().backward(), True, None),
            ("grad: kjit + backward", lambda: saxpy(xg, y, 2.0).sum().backward(), True, "grad: torch.add + backward"),
        ]
        if compiled and n == 1:
            ct = torch.compile(lambda x, y: torch.add(y, x, alpha=2.0), fullgraph=True)
            ck = torch.compile(lambda x, y: saxpy(x, y, 2.0), fullgraph=True)
            rows += [("compiled torch.add", lambda: ct(x, y), False, None),
                     ("compiled kjit saxpy", lambda: ck(x, y), False, "compiled torch.add")]
        with torch.no_grad():
            assert torch.allclose(saxpy(x, y, 2.0), torch.add(y, x, alpha=2.0))
        for _, fn, grad, _ in rows:  # warm up (module load, allocator, compilation)
            with torch.set_grad_enabled(grad):
                per_call(fn, 5)
        times: dict[str, list[float]] = {r[0]: [] for r in rows}
        for _ in range(rounds):
            for name, fn, grad, _ in rows:
                with torch.set_grad_enabled(grad):
                    times[name].append(per_call(fn, calls))
        print(f"n = {n}")
        for name, _, _, base in rows:
            m = statistics.median(times[name])
            ratio = f"{m / statistics.median(times[base]):5.2f}x {base}" if base else ""
            print(f"  {name:28s} {m * 1e6:9.2f} us   {ratio}")


if __name__ == "__main__":
    main()
