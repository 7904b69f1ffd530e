"""Runs the example functions of Warp's JAX interop examples, or of their kjit ports, capturing
what each prints and timing its jitted calls; compares a run with Warp's saved outputs.

    python scripts/warp_jax_examples.py {warp|kjit} {jax_kernel|jax_callable} [--library SO]
        [--out FILE.npz] [--times FILE.json --repeat N] [--check GOLDEN.npz]

`warp` imports warp.examples.interop.example_<name> (a venv with warp and jax: .venv-bench);
`kjit` imports examples/warp/<name>.py (a venv with jax and kjit.jax, e.g. PYTHONPATH=python).
Each exampleN runs as its module defines it, with the module's `print` and `jax.jit` wrapped:
every printed array (a list's arrays one by one) is kept as "exampleN.P" or "exampleN.P.I"
(P-th print, I-th item), and every call of a jitted function is kept to be timed: warmed up
once, then the median of --repeat calls, each until its results are ready. --out saves the
arrays (and, under "__layout__", what each print was: "array", "list[n]", "tuple[n]",
"blank"); --check compares them with a saved file bit for bit, printing every difference and
exiting 1 on any (scripts/warp_examples.py makes the goldens; tests/CMakeLists.txt the ctests).
"""

import argparse
import builtins
import importlib
import importlib.util
import json
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _JaxRecorder:
    """The `jax` module, except that jit's functions remember their calls (to be timed)."""

    def __init__(self, jax, calls):
        self._jax, self._calls = jax, calls

    def __getattr__(self, name):
        return getattr(self._jax, name)

    def jit(self, fun, *args, **kwargs):
        jitted = self._jax.jit(fun, *args, **kwargs)
        calls = self._calls

        def call(*a, **k):
            calls.append((jitted, a, k))
            return jitted(*a, **k)

        return call


def _layout_and_arrays(key, objects):
    """What one print call printed: its layout word and its arrays by key."""
    if not objects:
        return "blank", {}
    if len(objects) > 1:
        raise SystemExit(f"{key}: a print of {len(objects)} objects; the examples print one")
    obj = objects[0]
    if isinstance(obj, (list, tuple)):
        word = f"{type(obj).__name__}[{len(obj)}]"
        if len(obj) == 1:  # kept as a bare array would be: a port may return either (ONE_ITEM)
            return word, {key: np.asarray(obj[0])}
        return word, {f"{key}.{i}": np.asarray(x) for i, x in enumerate(obj)}
    return "array", {key: np.asarray(obj)}


def run(module, repeat, echo):
    """Runs module.example1, example2, ... : (arrays by key, layout by key, ms by example)."""
    import jax

    arrays, layout, times = {}, {}, {}
    n = 1
    while hasattr(module, f"example{n}"):
        name = f"example{n}"
        printed, calls = [], []

        def capture(*objects, **kwargs):
            printed.append(objects)
            if echo:
                builtins.print(*objects, **kwargs)

        module.print, module.jax = capture, _JaxRecorder(jax, calls)
        try:
            if echo:
                builtins.print(f"\n{name}:")
            getattr(module, name)()
        finally:
            del module.print
            module.jax = jax
        for p, objects in enumerate(printed):
            word, got = _layout_and_arrays(f"{name}.{p}", objects)
            layout[f"{name}.{p}"] = word
            arrays.update(got)
        if repeat:
            total = 0.0
            for fun, a, k in calls:
                jax.block_until_ready(fun(*a, **k))  # warm-up (compiled by the run above already)
                ms = []
                for _ in range(repeat):
                    t0 = time.perf_counter()
                    jax.block_until_ready(fun(*a, **k))
                    ms.append((time.perf_counter() - t0) * 1e3)
                total += statistics.median(ms)
            times[name] = total
        n += 1
    return arrays, layout, times


def load_module(which, example, library):
    if which == "warp":
        import warp as wp

        wp.config.quiet = True
        wp.init()
        return importlib.import_module(f"warp.examples.interop.example_{example}")
    path = os.path.join(ROOT, "examples", "warp", f"{example}.py")
    spec = importlib.util.spec_from_file_location(f"kjit_warp_{example}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.load(library)
    return module


#: Prints of one array that Warp's jax_kernel returns in a list (its results are always a list)
#: and kjit's returns bare (one output is the array): the same value, printed with brackets.
ONE_ITEM = {"array", "list[1]"}


def check(arrays, layout, golden_path):
    """Differences from a saved run, one line each (empty: identical), and how many prints were
    of one array where the other run printed a list of it."""
    golden = np.load(golden_path)
    want_layout = json.loads(str(golden["__layout__"]))
    problems, one_item = [], 0
    for key in sorted(set(want_layout) | set(layout)):
        if want_layout.get(key) != layout.get(key) and {want_layout.get(key), layout.get(key)} == ONE_ITEM:
            one_item += 1
        elif want_layout.get(key) != layout.get(key):
            problems.append(f"{key}: printed {layout.get(key, 'nothing')}, the golden {want_layout.get(key, 'nothing')}")
    for key in sorted(set(golden.files) - {"__layout__"} | set(arrays)):
        if key not in arrays or key not in golden.files:
            problems.append(f"{key}: {'missing' if key not in arrays else 'not in the golden'}")
            continue
        got, want = arrays[key], golden[key]
        if got.shape != want.shape or got.dtype != want.dtype:
            problems.append(f"{key}: {got.dtype}{list(got.shape)}, the golden {want.dtype}{list(want.shape)}")
        elif got.tobytes() != want.tobytes():
            same = int(np.sum(got.reshape(-1).view(np.uint8 if got.dtype.itemsize == 1 else f"u{got.dtype.itemsize}")
                              == want.reshape(-1).view(np.uint8 if want.dtype.itemsize == 1 else f"u{want.dtype.itemsize}")))
            diff = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
            problems.append(f"{key}: {same} of {got.size} values bit-identical, largest difference {diff:.3g}")
    return problems, one_item


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("which", choices=["warp", "kjit"])
    ap.add_argument("example", choices=["jax_kernel", "jax_callable"])
    ap.add_argument("--library", help="kjit: the kernel library (default: the driver's)")
    ap.add_argument("--out", help="save the printed arrays (.npz)")
    ap.add_argument("--times", help="save ms per example (.json); needs --repeat")
    ap.add_argument("--repeat", type=int, default=0, help="timed calls per jitted call")
    ap.add_argument("--check", help="compare with a saved .npz; exit 1 on any difference")
    ap.add_argument("--quiet", action="store_true", help="do not echo what the examples print")
    args = ap.parse_args()

    module = load_module(args.which, args.example, args.library)
    arrays, layout, times = run(module, args.repeat, not args.quiet)
    if args.out:
        np.savez(args.out, __layout__=np.array(json.dumps(layout)), **arrays)
    if args.times:
        with open(args.times, "w") as f:
            json.dump(times, f)
    if args.check:
        problems, one_item = check(arrays, layout, args.check)
        for p in problems:
            builtins.print("DIFFERS:", p)
        if problems:
            sys.exit(1)
        builtins.print(f"{args.which} {args.example}: {len(arrays)} printed arrays in {len(layout)} prints, "
                       f"identical to {args.check}" + (f" ({one_item} printed as one array where the other run "
                                                       "printed a list of it)" if one_item else ""))


if __name__ == "__main__":
    main()
