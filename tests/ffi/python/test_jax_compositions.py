"""JAX transformations composed with kjit kernel calls (docs/JAX.md, *Compositions*): grad, vjp,
jvp, jacrev, jacfwd, hessian, grad of jvp, jvp of grad, reverse over reverse, forward over
forward, user custom_vjp / custom_jvp wrappers, jax.checkpoint, and lax.scan / fori_loop /
while_loop at first and second order, each of vmap-ed calls with no operand, each operand, every
operand and (nested vmap) operands of different batch ranks batched, under every vmap_method,
for float32 and float64 scalar arrays, vec3 arrays and a traced value parameter.

Every case is checked against the same composition of a pure-JAX restatement of the kernel
(float64 kernels at 1e-9; the float32 one at float32 tolerance). Where JAX refuses the
restatement too, the combination is JAX's to forbid (any function) and kjit must raise as well;
where kjit cannot give a derivative it raises its own TransformError naming the kernel, and only
where that is expected. No other outcome passes.

The full product (28 transformations x 6 batchings x 3 vmap methods x 4 kinds) is sampled: each
transformation runs 6 cases in which every batching, every vmap method and every kind appears,
rotated so that the pairs differ between transformations. With KJIT_COMPOSITIONS_OUT=path the
outcome of every case is written there as JSON (compositions_table.py makes the docs table from
both JAX versions' files); KJIT_COMPOSITIONS_TIMES=1 prints each case's time."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
import unittest

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _common import iterate_ref, kj, load_libraries, swirl_ref  # noqa: E402

load_libraries()
# Hundreds of small programs, each run once: XLA's optimizations cost more than they save.
jax.config.update("jax_disable_most_optimizations", True)

B = 2  # batch size of every vmap (nested: 2 x 2)
N = 3  # threads

METHODS = ("broadcast_all", "sequential", "expand_dims")
BATCHINGS = ("none", "first", "second", "value", "all", "nested")
KIND_NAMES = ("float32", "float64", "vec3", "traced")

# -- the kernels (their pure-JAX restatements are _common's) ---------------------------------------


def _data(shape, seed, dtype, lo=-1.0, hi=1.0):
    return jnp.asarray(np.random.default_rng(seed).uniform(lo, hi, shape), dtype)


class Kind:
    """One element kind: a kernel, its restatement, its operands' unbatched data."""

    def __init__(self, name, kernel, call, ref, operands, rtol, atol):
        self.name = name
        self.kernel = kernel
        self._call = call  # (kernel function, *operands) -> output
        self.ref = ref  # (*operands) -> output
        self.operands = operands  # [(shape, dtype, lo, hi)]
        self.rtol = rtol
        self.atol = atol
        self._fns = {}

    def fn(self, method):
        """The kjit call of this kind made with ``method``, as a function of the operands."""
        if method not in self._fns:
            k = kj.jax_kernel(self.kernel, enable_backward=True, vmap_method=method)
            self._fns[method] = lambda *ops, k=k: self._call(k, *ops)
        return self._fns[method]


KINDS = {
    "float32": Kind("float32", "demo::saxpy", lambda k, x, y: k(x, y, 1.5), lambda x, y: 1.5 * x + y,
                    [((N,), jnp.float32, -1, 1), ((N,), jnp.float32, -1, 1)], 2e-4, 2e-5),
    "float64": Kind("float64", "demo::iterate", lambda k, x, c: k(x, c, 3), lambda x, c: iterate_ref(x, c, 3),
                    [((N,), jnp.float64, -1, 1), ((N,), jnp.float64, 0.5, 0.9)], 1e-9, 1e-11),
    "vec3": Kind("vec3", "tests::values::swirl", lambda k, p, q: k(p, q, 0.3, 2),
                 lambda p, q: swirl_ref(p, q, 0.3, 2), [((N, 3), jnp.float64, -1, 1), ((N, 3), jnp.float64, -1, 1)],
                 1e-9, 1e-11),
    "traced": Kind("traced", "tests::values::swirl", lambda k, p, q, s: k(p, q, s, 2),
                   lambda p, q, s: swirl_ref(p, q, s, 2),
                   [((N, 3), jnp.float64, -1, 1), ((N, 3), jnp.float64, -1, 1), ((), jnp.float64, 0.2, 0.4)],
                   1e-9, 1e-11),
}


def batched_axes(kind, batching):
    """Per operand: how many batch dims it gets (nested: the first array two, the rest one)."""
    n = len(kind.operands)
    if batching == "none":
        return [0] * n
    if batching == "all":
        return [1] * n
    if batching == "nested":
        return [2] + [1] * (n - 1)
    which = {"first": 0, "second": 1, "value": 2}[batching]
    return [1 if i == which else 0 for i in range(n)]


def vmapped(f, kind, batching):
    """``f`` under the vmaps of ``batching``."""
    n = len(kind.operands)
    if batching == "none":
        return f
    if batching == "nested":
        return jax.vmap(jax.vmap(f), in_axes=(0,) + (None,) * (n - 1))
    return jax.vmap(f, in_axes=tuple(0 if b else None for b in batched_axes(kind, batching)))


def operands(kind, batching, seed):
    out = []
    for i, ((shape, dtype, lo, hi), nb) in enumerate(zip(kind.operands, batched_axes(kind, batching))):
        out.append(_data((B,) * nb + shape, seed + 17 * i, dtype, lo, hi))
    return out


def weights(shape, dtype):
    size = int(np.prod(shape)) if shape else 1
    return jnp.cos(0.7 * jnp.arange(size, dtype=dtype).reshape(shape) + 0.3)


# -- the transformations ------------------------------------------------------------------------

def _reduce_to(y, shape):
    """``y`` summed over the leading dims it has beyond ``shape`` (a loop carry's type)."""
    return y if y.shape == tuple(shape) else y.reshape((-1,) + tuple(shape)).sum(0)


def _step(F):
    def step(c, rest):
        return 0.5 * c + 0.3 * jnp.sin(_reduce_to(F(c, *rest), c.shape))
    return step


def looped(F, loop):
    """x0 -> the first operand after two steps c <- c/2 + 0.3 sin(F(c, rest)) of ``loop``."""
    step = _step(F)

    def run(*ops):
        c0, rest = ops[0], ops[1:]
        if loop == "scan":
            return jax.lax.scan(lambda c, _: (step(c, rest), None), c0, None, length=2)[0]
        if loop == "fori":
            return jax.lax.fori_loop(0, 2, lambda i, c: step(c, rest), c0)
        return jax.lax.while_loop(lambda s: s[0] < 2, lambda s: (s[0] + 1, step(s[1], rest)), (0, c0))[1]

    return run


def loss(F):
    def L(*ops):
        y = F(*ops)
        return jnp.sum(jnp.sin(y) * weights(y.shape, y.dtype))
    return L


def custom_vjp_of(F):
    @jax.custom_vjp
    def G(*ops):
        return F(*ops)

    def fwd(*ops):
        return jax.vjp(F, *ops)

    def bwd(pullback, ct):
        return pullback(ct)

    G.defvjp(fwd, bwd)
    return G


def custom_jvp_of(F):
    @jax.custom_jvp
    def G(*ops):
        return F(*ops)

    @G.defjvp
    def G_jvp(primals, tangents):
        return jax.jvp(F, primals, tangents)

    return G


def _all(ops):
    return tuple(range(len(ops)))


def _tangents(ops):
    return tuple(jnp.asarray(np.random.default_rng(99 + i).uniform(-1, 1, np.shape(a)), a.dtype)
                 for i, a in enumerate(ops))


def _t_grad(F, ops):
    return jax.grad(loss(F), argnums=_all(ops))(*ops)


def _t_vjp(F, ops):
    y, pullback = jax.vjp(F, *ops)
    return y, pullback(weights(y.shape, y.dtype))


def _t_jvp(F, ops):
    return jax.jvp(F, tuple(ops), _tangents(ops))


def _t_hessian(F, ops):
    return jax.hessian(loss(F), argnums=_all(ops))(*ops)


def _t_grad_of_jvp(F, ops):
    def g(*a):
        t = jax.jvp(F, a, _tangents(ops))[1]
        return jnp.sum(jnp.sin(t) * weights(t.shape, t.dtype))
    return jax.grad(g, argnums=_all(ops))(*ops)


def _t_jvp_of_grad(F, ops):
    return jax.jvp(jax.grad(loss(F), argnums=_all(ops)), tuple(ops), _tangents(ops))


TRANSFORMS = {
    "grad": _t_grad,
    "vjp": _t_vjp,
    "jvp": _t_jvp,
    "jacrev": lambda F, ops: jax.jacrev(F, argnums=_all(ops))(*ops),
    "jacfwd": lambda F, ops: jax.jacfwd(F, argnums=_all(ops))(*ops),
    "hessian": _t_hessian,
    "grad of jvp": _t_grad_of_jvp,
    "jvp of grad": _t_jvp_of_grad,
    "jacrev of jacrev": lambda F, ops: jax.jacrev(jax.jacrev(loss(F), argnums=_all(ops)), argnums=_all(ops))(*ops),
    "jacfwd of jacfwd": lambda F, ops: jax.jacfwd(jax.jacfwd(loss(F), argnums=_all(ops)), argnums=_all(ops))(*ops),
    "custom_vjp wrapper, grad": lambda F, ops: _t_grad(custom_vjp_of(F), ops),
    "custom_vjp wrapper, hessian": lambda F, ops: _t_hessian(custom_vjp_of(F), ops),
    "custom_jvp wrapper, grad": lambda F, ops: _t_grad(custom_jvp_of(F), ops),
    "custom_jvp wrapper, hessian": lambda F, ops: _t_hessian(custom_jvp_of(F), ops),
    "checkpoint, grad": lambda F, ops: _t_grad(jax.checkpoint(F), ops),
    "checkpoint, hessian": lambda F, ops: _t_hessian(jax.checkpoint(F), ops),
}
for _loop in ("scan", "fori_loop", "while_loop"):
    _l = _loop.split("_")[0]
    TRANSFORMS[f"{_loop}, jvp"] = lambda F, ops, _l=_l: _t_jvp(looped(F, _l), ops)
    TRANSFORMS[f"{_loop}, grad"] = lambda F, ops, _l=_l: _t_grad(looped(F, _l), ops)
    TRANSFORMS[f"{_loop}, hessian"] = lambda F, ops, _l=_l: _t_hessian(looped(F, _l), ops)
    TRANSFORMS[f"{_loop}, jvp of grad"] = lambda F, ops, _l=_l: _t_jvp_of_grad(looped(F, _l), ops)

#: Where kjit's own error is the expected outcome (no launch computes what JAX asks for).
KJIT_REFUSES = {"jacfwd of jacfwd": "forward over forward mode"}


def cases():
    """(transformation, batching, vmap method, kind) sampled from the product: per
    transformation every batching once, every method twice, every kind at least once."""
    out = []
    for ti, t in enumerate(TRANSFORMS):
        j = 0
        for i, b in enumerate(BATCHINGS):
            method = METHODS[(i + ti) % len(METHODS)]
            if b == "value":
                kind = "traced"
            else:
                kind = KIND_NAMES[(j + ti) % len(KIND_NAMES)]
                j += 1
            out.append((t, b, method, kind))
    return out


def _first_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


RESULTS = []


class CompositionTests(unittest.TestCase):
    def check(self, t, batching, method, kind_name, seed):
        kind = KINDS[kind_name]
        ops = operands(kind, batching, seed)
        F = vmapped(kind.fn(method), kind, batching)
        R = vmapped(kind.ref, kind, batching)
        record = {"transformation": t, "batching": batching, "vmap_method": method, "kind": kind_name}
        run = lambda G: jax.jit(lambda *a: TRANSFORMS[t](G, a))(*ops)  # noqa: E731
        try:
            want = run(R)
            jax.block_until_ready(want)
            ref_error = None
        except Exception as e:  # JAX refuses the restatement: JAX forbids the combination
            ref_error = e
        try:
            got = run(F)
            jax.block_until_ready(got)
            error = None
        except Exception as e:
            error = e
        if ref_error is not None:
            record.update(outcome="jax-forbids", message=_first_line(ref_error))
        elif error is not None:
            record.update(outcome="kjit-error", message=_first_line(error))
        else:
            record.update(outcome="supported")
        RESULTS.append(record)
        try:
            if ref_error is not None:
                self.assertIsNotNone(error, f"JAX refuses the restatement ({_first_line(ref_error)}), kjit does not")
                # kjit adds nothing of its own: the same refusal as for any function.
                self.assertEqual(_first_line(error), _first_line(ref_error))
            elif error is not None:
                self.assertIsInstance(error, kj.TransformError, f"not kjit's error: {_first_line(error)}")
                self.assertIn(f"kjit kernel '{kind.kernel}'", str(error))
                self.assertIn(t, KJIT_REFUSES, f"kjit refuses a combination it should give: {error}")
                self.assertIn(KJIT_REFUSES[t], str(error))
            else:
                self.assertNotIn(t, KJIT_REFUSES, "kjit gave what it says it cannot")
                self.assertEqual(jax.tree_util.tree_structure(got), jax.tree_util.tree_structure(want))
                for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                    self.assertEqual(np.shape(g), np.shape(w))
                    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=kind.rtol, atol=kind.atol)
        except AssertionError as e:
            record.update(outcome="failed", message=_first_line(e))
            raise

    def test_compositions(self):
        start = time.time()
        for n, (t, batching, method, kind) in enumerate(cases()):
            t0 = time.time()
            with self.subTest(transformation=t, batching=batching, vmap_method=method, kind=kind):
                self.check(t, batching, method, kind, seed=n)
            if os.environ.get("KJIT_COMPOSITIONS_TIMES"):
                print(f"  {time.time() - t0:6.2f} s  {t} / {batching} / {method} / {kind}", flush=True)
        print(f"{len(cases())} cases in {time.time() - start:.1f} s", flush=True)


class ErrorTests(unittest.TestCase):
    """kjit's own messages where it cannot differentiate (the kernel, what is missing, what to do)."""

    def test_a_kernel_without_enable_backward(self):
        saxpy = kj.jax_kernel("demo::saxpy")
        x = jnp.linspace(0, 1, 4, dtype=jnp.float32)
        msg = ("kjit kernel 'demo::saxpy' cannot be differentiated: it was made without enable_backward=True, so kjit "
               "gave JAX no derivative rule for it. Make it with kjit.jax.jax_kernel('demo::saxpy', "
               "enable_backward=True)")
        for f in (jax.grad(lambda x: jnp.sum(saxpy(x, x, 2.0))), jax.jacrev(lambda x: saxpy(x, x, 2.0)),
                  lambda x: jax.jvp(lambda x: saxpy(x, x, 2.0), (x,), (x,))):
            with self.assertRaises(kj.TransformError) as e:
                f(x)
            self.assertIn(msg, str(e.exception))
        # Constants are fine: nothing is differentiated through the call.
        np.testing.assert_allclose(jax.grad(lambda a: a * jnp.sum(saxpy(x, x, 2.0)))(1.0), np.sum(3 * np.asarray(x)),
                                   rtol=1e-6)

    def test_a_reverse_only_kernel(self):
        springs = kj.jax_kernel("demo::springs", num_outputs=1, in_out_argnames=("f",), enable_backward=True,
                                launch_dims=2)
        xs = jnp.arange(9.0, dtype=jnp.float32).reshape(3, 3)
        pairs, rest, f0 = jnp.array([0, 1, 1, 2], jnp.int32), jnp.ones(2, jnp.float32), jnp.zeros((3, 3), jnp.float32)
        loss = lambda xs: jnp.sum(springs(xs, pairs, rest, 1.0, f0) ** 2)  # noqa: E731
        self.assertEqual(jax.grad(loss)(xs).shape, (3, 3))
        self.assertEqual(jax.jacrev(lambda xs: springs(xs, pairs, rest, 1.0, f0))(xs).shape, (3, 3, 3, 3))
        why = ("kernel 'demo::springs' has in/out arguments (f), which forward mode from JAX does not take: it is "
               "differentiated in reverse mode only")
        self.assertEqual(springs.forward_mode_error, why)
        fix = ("; for forward mode and second derivatives, pass the in/out arrays as separate inputs and outputs "
               "(jax_kernel without in_out_argnames)")
        msg = (f"kjit kernel 'demo::springs' has no forward mode and no second derivatives: {why}. Forward-mode "
               "derivatives (jax.jvp, jax.jacfwd, jax.linearize) and second derivatives (jax.hessian, jax.jvp of "
               "jax.grad, jax.grad of jax.jvp, jax.jacrev of jax.jacrev) need its tangent kernel "
               f"'demo::springs.tangent'. Use reverse mode (jax.grad, jax.vjp, jax.jacrev){fix}")
        cases = {
            "jvp": lambda: jax.jvp(lambda xs: springs(xs, pairs, rest, 1.0, f0), (xs,), (xs,)),
            "jacfwd": lambda: jax.jacfwd(loss)(xs),
            "jit(jvp)": lambda: jax.jit(lambda xs: jax.jvp(loss, (xs,), (xs,)))(xs),
            "linearize": lambda: jax.linearize(loss, xs)[1](xs),
            "hessian": lambda: jax.hessian(loss)(xs),
            "jvp of grad": lambda: jax.jvp(jax.grad(loss), (xs,), (xs,)),
            "jacrev of jacrev": lambda: jax.jacrev(jax.grad(loss))(xs),
            "grad of jvp": lambda: jax.grad(lambda xs: jax.jvp(loss, (xs,), (xs,))[1])(xs),
            "scan, hessian": lambda: jax.hessian(lambda xs: jax.lax.scan(
                lambda c, _: (c + 1e-3 * loss(c * xs), None), jnp.float32(1), None, length=2)[0])(xs),
        }
        for what, f in cases.items():
            with self.subTest(what=what):
                with self.assertRaises(kj.TransformError) as e:
                    f()
                self.assertEqual(str(e.exception), msg)

    def test_forward_over_forward_and_third_order(self):
        iterate = kj.jax_kernel("demo::iterate", enable_backward=True)
        x, c = jnp.linspace(-1, 1, 5), jnp.linspace(0.5, 0.9, 5)
        f = lambda x: jnp.sum(jnp.sin(iterate(x, c, 3)))  # noqa: E731
        fof = ("kjit kernel 'demo::iterate': forward over forward mode (jax.jacfwd of jax.jacfwd, jax.jvp of jax.jvp, "
               "or evaluating jax.linearize of a jvp) needs second-order tangents of the kernel, which kjit does not "
               "generate (it has the tangent kernel and the adjoints). Take second derivatives with reverse mode on "
               "one side: jax.hessian (jax.jacfwd of jax.jacrev), jax.jacrev of jax.jacfwd, jax.jacrev of "
               "jax.jacrev, jax.jvp of jax.grad or jax.grad of jax.jvp")
        third = ("kjit kernel 'demo::iterate': third and higher derivatives are not available: kjit generates the "
                 "kernel's first derivatives (its tangent kernel and adjoint) and second derivatives (the adjoint of "
                 "the tangent kernel) only. Differentiate it at most twice (jax.hessian, jax.jvp of jax.grad, ...)")
        for what, g, msg in (("jacfwd of jacfwd", lambda: jax.jacfwd(jax.jacfwd(f))(x), fof),
                             ("jvp of jvp", lambda: jax.jvp(lambda x: jax.jvp(f, (x,), (x,))[1], (x,), (x,)), fof),
                             ("jacrev of hessian", lambda: jax.jacrev(jax.hessian(f))(x), third),
                             ("grad of grad of jvp", lambda: jax.grad(lambda x: jnp.sum(jax.grad(
                                 lambda x: jax.jvp(f, (x,), (x,))[1])(x)))(x), third)):
            with self.subTest(what=what):
                with self.assertRaises(kj.TransformError) as e:
                    g()
                self.assertEqual(str(e.exception), msg)
        # What is available: second derivatives with reverse mode on one side, all equal.
        h = jax.hessian(f)(x)
        np.testing.assert_allclose(jax.jacrev(jax.jacfwd(f))(x), h, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(jax.jacrev(jax.jacrev(f))(x), h, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(jax.jacfwd(jax.grad(f))(x), h, rtol=1e-9, atol=1e-12)

    def test_a_callable(self):
        f = kj.jax_callable("tests::saxpy_twice")
        x = jnp.ones(4, jnp.float32)
        with self.assertRaises(kj.TransformError) as e:
            jax.grad(lambda x: jnp.sum(f(x, x, 2.0)))(x)
        self.assertEqual(str(e.exception), (
            "kjit callable 'tests::saxpy_twice' cannot be differentiated: a jax_callable runs C++ code of which kjit "
            "has no derivative. Differentiate the kernels it launches instead (jax_kernel(..., "
            "enable_backward=True)), give it a derivative with jax.custom_vjp or jax.custom_jvp, or keep its inputs "
            "out of the differentiation (jax.lax.stop_gradient)"))
        np.testing.assert_allclose(jax.grad(lambda a: a * jnp.sum(f(x, x, 2.0)))(1.0), 28.0)

    def test_vmap_without_a_vmap_method(self):
        saxpy = kj.jax_kernel("demo::saxpy", vmap_method=None)
        xs = jnp.ones((2, 4), jnp.float32)
        with self.assertRaises(kj.TransformError) as e:
            jax.vmap(lambda x: saxpy(x, x, 1.0))(xs)
        self.assertEqual(str(e.exception), (
            "kjit kernel 'demo::saxpy' cannot be batched by jax.vmap: it was made with vmap_method=None. Pass "
            "vmap_method='broadcast_all' (the default: one launch over the batch), 'expand_dims' or 'sequential' to "
            "jax_kernel, or to the call"))
        np.testing.assert_allclose(saxpy(xs[0], xs[0], 1.0), 2 * np.ones(4))


def tearDownModule():
    out = os.environ.get("KJIT_COMPOSITIONS_OUT")
    if not out:
        return
    import jaxlib

    doc = {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "python": platform.python_version(),
           "cases": RESULTS}
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(RESULTS)} outcomes to {out}", file=sys.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
