"""Per-call cost of a small kjit kernel called from torch (kjit.torch) against a torch built-in
op doing the same work: out = a * x + y in float32 (demo::saxpy vs torch.add(y, x, alpha=a)),
at n = 1 (overhead) and n = 1M (throughput), on the cpu, without autograd (torch.no_grad).

Rows: torch.add; kjit via the callable with a as a Python number (converted to a 0-d tensor per
call) and as a 0-d tensor; kjit's forward op called directly (no argument checks). Interleaved
rounds, the median per call of each. Usage (docs/BENCHMARKS.md, *kjit.torch*):
    KJIT_DEMO_LIBRARY=build/lib/libdemo_kernels.so PYTHONPATH=python .venv-torch/bin/python bench/torch_overhead.py
"""

from __future__ import annotations

import os
import statistics
import time

import torch

import kjit.torch as kt


def per_call(fn, calls: int) -> float:
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls


def main() -> None:
    kt.load(os.environ["KJIT_DEMO_LIBRARY"])
    saxpy = kt.kernel("demo::saxpy")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} torch threads, cpu")
    for n, calls, rounds in ((1, 3000, 7), (1_000_000, 40, 7)):
        x, y = torch.rand(n), torch.rand(n)
        a = torch.tensor(2.0)
        rows = {
            "torch.add(y, x, alpha=2)": lambda: torch.add(y, x, alpha=2.0),
            "kjit saxpy(x, y, 2.0)": lambda: saxpy(x, y, 2.0),
            "kjit saxpy(x, y, tensor)": lambda: saxpy(x, y, a),
            "kjit forward op": lambda: saxpy.forward_op(x, y, a),
        }
        with torch.no_grad():
            assert torch.allclose(saxpy(x, y, 2.0), torch.add(y, x, alpha=2.0))
            for fn in rows.values():  # warm up (module load, allocator)
                per_call(fn, 10)
            times: dict[str, list[float]] = {k: [] for k in rows}
            for _ in range(rounds):
                for k, fn in rows.items():
                    times[k].append(per_call(fn, calls))
        base = statistics.median(times["torch.add(y, x, alpha=2)"])
        print(f"n = {n}")
        for k, ts in times.items():
            m = statistics.median(ts)
            print(f"  {k:28s} {m * 1e6:9.2f} us   {m / base:5.2f}x torch.add")


if __name__ == "__main__":
    main()
