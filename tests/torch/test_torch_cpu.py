"""kjit.torch on the cpu: values, reverse and forward mode against pure-torch restatements,
gradcheck, opcheck, vmap, torch.compile, value parameters, vec3 arrays, atomics, loops,
in/out arrays and bad input (each error naming the argument)."""

from __future__ import annotations

import os
import subprocess
import sys
import traceback

import torch

import kjit.torch as kt

# ctest points the tests at the package pip installed for the torch venv; kjit.torch never
# imports JAX.
_expected = os.environ.get("KJIT_EXPECT_PACKAGE_DIR")
if _expected and os.path.dirname(os.path.abspath(kt.__file__)) != os.path.join(os.path.abspath(_expected), "torch"):
    raise SystemExit(f"kjit.torch was imported from {kt.__file__}, not from the installed {_expected}")
assert "jax" not in sys.modules, "importing kjit.torch imported jax"
print(f"kjit.torch from {os.path.dirname(kt.__file__)}, torch {torch.__version__}", flush=True)
torch.manual_seed(0)
kt.load(os.environ["KJIT_DEMO_LIBRARY"])
kt.load(os.environ["KJIT_TEST_LIBRARY"])
F64 = torch.float64


def rnd(*shape, dtype=F64, requires_grad=False):
    return torch.randn(*shape, dtype=dtype, requires_grad=requires_grad)


def close(a, b, tol=1e-10):
    assert a.shape == b.shape, (a.shape, b.shape)
    assert torch.allclose(a, b, atol=tol, rtol=tol), (a, b)


def raises(exc, text, fn, *args):
    try:
        fn(*args)
    except exc as e:
        assert text in str(e), f"expected {text!r} in {str(e)!r}"
        return
    raise AssertionError(f"no {exc.__name__} ({text!r})")


daxpy = kt.kernel("demo::daxpy")
saxpy = kt.kernel("demo::saxpy")
iterate = kt.kernel("demo::iterate")
decay = kt.kernel("tests::values::decay")
affine = kt.kernel("tests::values::affine")


def daxpy_ref(x, y, a):
    return a * x + y


def iterate_ref(x, c, n):
    y = x
    for _ in range(n):
        y = y * c + torch.sin(y)
    return y


def decay_ref(x, k, n):
    y = x
    for _ in range(n):
        y = y * k + torch.sin(y)
    return torch.where(y > 0, y, y * k)


def affine_ref(v, d, m, s):
    return ((v + d) @ m.T) * s


def springs_ref(x, pairs, rest, k, n):
    a, b = pairs[0::2].long(), pairs[1::2].long()
    d = x[a] - x[b]
    ln = torch.linalg.norm(d, dim=1, keepdim=True)
    force = d * (k * (ln - rest[:, None]) / ln)
    f = torch.zeros(n, 3, dtype=x.dtype)
    f = f.index_add(0, a, -force)
    return f.index_add(0, b, force)


def test_forward_values():
    x, y = rnd(1000), rnd(1000)
    close(daxpy(x, y, 2.5), daxpy_ref(x, y, 2.5))
    xs, ys = rnd(7, dtype=torch.float32), rnd(7, dtype=torch.float32)
    close(saxpy(xs, ys, 0.5), 0.5 * xs + ys, 1e-6)
    c = rnd(50) * 0.3
    close(iterate(x[:50], c, 4), iterate_ref(x[:50], c, 4))
    close(decay(x, 0.7, 3), decay_ref(x, 0.7, 3))
    # Empty arrays launch nothing.
    assert daxpy(rnd(0), rnd(0), 1.0).shape == (0,)


def test_values_as_numbers_and_tensors():
    x, y = rnd(5), rnd(5)
    a = torch.tensor(1.5, dtype=F64, requires_grad=True)
    out = daxpy(x, y, a)
    close(out, daxpy_ref(x, y, 1.5))
    out.sum().backward()
    close(a.grad, x.sum())
    # vec3 and mat33 values: a number list or a (3,) / (3, 3) tensor.
    v = rnd(6, 3)
    d, m, s = rnd(3), rnd(3, 3), 0.5
    close(affine(v, d, m, s), affine_ref(v, d, m, s))
    close(affine(v, d.tolist(), m.tolist(), s), affine_ref(v, d, m, s))
    # An int value given as a number and as a 0-d int32 tensor.
    close(decay(x, 0.5, torch.tensor(2, dtype=torch.int32)), decay_ref(x, 0.5, 2))


def test_gradcheck_and_second_order():
    x, y = rnd(6, requires_grad=True), rnd(6, requires_grad=True)
    a = torch.tensor(0.7, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(daxpy, (x, y, a))
    c = (rnd(6) * 0.3).requires_grad_()
    assert torch.autograd.gradcheck(lambda x, c: iterate(x, c, 3), (x, c))
    k = torch.tensor(0.6, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, k: decay(x, k, 2), (x, k))
    v, d, m = rnd(4, 3, requires_grad=True), rnd(3, requires_grad=True), rnd(3, 3, requires_grad=True)
    assert torch.autograd.gradcheck(lambda v, d, m: affine(v, d, m, 0.5), (v, d, m))
    # Forward-mode gradcheck goes through the tangent kernel.
    assert torch.autograd.gradcheck(lambda x, c: iterate(x, c, 3), (x, c), check_forward_ad=True,
                                    check_backward_ad=False, check_undefined_grad=False)
    # Second order: the adjoint's and the tangent's derivatives through the tangent kernel's adjoint.
    assert torch.autograd.gradgradcheck(daxpy, (x, y, a))
    assert torch.autograd.gradgradcheck(lambda x, c: iterate(x, c, 3), (x, c))
    assert torch.autograd.gradgradcheck(lambda x, k: decay(x, k, 2), (x, k))
    s = torch.tensor(0.5, dtype=F64, requires_grad=True)
    assert torch.autograd.gradgradcheck(affine, (v, d, m, s))


def test_hessians():
    x, c = rnd(5), rnd(5) * 0.3
    f = lambda x: iterate(x, c, 3).pow(2).sum()  # noqa: E731
    R = torch.func.hessian(lambda x: iterate_ref(x, c, 3).pow(2).sum())(x)
    close(torch.func.hessian(f)(x), R)                                   # forward over reverse
    close(torch.func.jacrev(torch.func.jacrev(f))(x), R)                 # reverse over reverse
    close(torch.func.jacrev(torch.func.jacfwd(f))(x), R)                 # reverse over forward
    # Two kernels, the input twice and a vector output: a Jacobian of Jacobians, both ways.
    g = lambda x: daxpy(iterate(x, c, 2), x, 0.7)  # noqa: E731
    G = torch.func.jacrev(torch.func.jacrev(lambda x: 0.7 * iterate_ref(x, c, 2) + x))(x)
    close(torch.func.jacrev(torch.func.jacfwd(g))(x), G)
    close(torch.func.jacfwd(torch.func.jacrev(g))(x), G)
    # A value parameter that depends on the input: second derivatives through it too.
    y = rnd(5)
    close(torch.func.hessian(lambda x: daxpy(x, y, x[0]).pow(2).sum())(x),
          torch.func.hessian(lambda x: (x[0] * x + y).pow(2).sum())(x))
    raises(kt.KjitError, "forward over forward mode", lambda: torch.func.jacfwd(torch.func.jacfwd(f))(x))


def test_func_transforms():
    x, c = rnd(5), rnd(5) * 0.3
    f = lambda x, c: iterate(x, c, 3)  # noqa: E731
    g = lambda x, c: iterate_ref(x, c, 3)  # noqa: E731
    dx, dc = rnd(5), rnd(5)
    out, tan = torch.func.jvp(f, (x, c), (dx, dc))
    rout, rtan = torch.func.jvp(g, (x, c), (dx, dc))
    close(out, rout)
    close(tan, rtan)
    for jac in (torch.func.jacfwd, torch.func.jacrev):
        for argnums in (0, 1, (0, 1)):
            J, R = jac(f, argnums=argnums)(x, c), jac(g, argnums=argnums)(x, c)
            for a, b in zip(J if isinstance(J, tuple) else (J,), R if isinstance(R, tuple) else (R,)):
                close(a, b)
    # torch.autograd.forward_ad
    import torch.autograd.forward_ad as fwAD
    want = torch.func.jvp(g, (x, c), (dx, torch.zeros(5, dtype=F64)))[1]
    with fwAD.dual_level():
        out = f(fwAD.make_dual(x, dx), c)
        close(fwAD.unpack_dual(out).tangent, want)
    # vec3 arrays and values: jacrev and jacfwd against torch.
    v, d, m = rnd(3, 3), rnd(3), rnd(3, 3)
    for jac in (torch.func.jacfwd, torch.func.jacrev):
        J = jac(lambda v, d, m: affine(v, d, m, 0.5), argnums=(0, 1, 2))(v, d, m)
        R = jac(lambda v, d, m: affine_ref(v, d, m, 0.5), argnums=(0, 1, 2))(v, d, m)
        for a, b in zip(J, R):
            close(a, b)


def test_vmap():
    x, y = rnd(4, 6), rnd(6)
    close(torch.func.vmap(daxpy, in_dims=(0, None, None))(x, y, 2.0), 2.0 * x + y)
    a = rnd(4)
    close(torch.func.vmap(daxpy, in_dims=(0, None, 0))(x, y, a), a[:, None] * x + y)
    # Batch dim not first, nested.
    xx = rnd(6, 3, 2)
    close(torch.func.vmap(torch.func.vmap(lambda x: daxpy(x, y, 3.0), in_dims=1), in_dims=1)(xx),
          (3.0 * xx + y[:, None, None]).permute(1, 2, 0))


def test_opcheck():
    x, y = rnd(5, requires_grad=True), rnd(5, requires_grad=True)
    a = torch.tensor(2.0, dtype=F64, requires_grad=True)
    for k, args in [(daxpy, (x, y, a)), (saxpy, (rnd(5, dtype=torch.float32), rnd(5, dtype=torch.float32),
                                                  torch.tensor(1.5))),
                    (iterate, (x, rnd(5), torch.tensor(2, dtype=torch.int32))),
                    (decay, (x, a, torch.tensor(2, dtype=torch.int32))),
                    (affine, (rnd(4, 3, requires_grad=True), rnd(3), rnd(3, 3), torch.tensor(0.5, dtype=F64)))]:
        torch.library.opcheck(k.forward_op, args)
        # The derivative ops have no derivatives of their own (docs/TORCH.md): plain tensors.
        args = [a.detach() for a in args]
        outs = k.forward_op(*args)
        torch.library.opcheck(k.adjoint_op, (*args, *outs, *[torch.ones_like(o) for o in outs]))
        dirs = [torch.ones_like(args[i]) for i in k.diff_in]
        torch.library.opcheck(k.tangent_op, (*args, *dirs))
        cts = [torch.ones_like(outs[j]) for j in k.diff_out]
        torch.library.opcheck(k.tangent_adjoint_op, (*args, *dirs, *cts, *cts))
        # With inputs that require grad: the derivative ops' own autograd formulas.
        req = [a.clone().requires_grad_() if a.is_floating_point() else a for a in args]
        torch.library.opcheck(k.adjoint_op, (*req, *outs, *[c.clone().requires_grad_() for c in cts]))


def test_compile_training_step():
    x, c0, y = rnd(64), rnd(64) * 0.3, rnd(64)

    def loss_fn(a, c):
        h = daxpy(x, y, a)           # kernel 1
        out = iterate(h, c, 2)       # kernel 2
        return (out ** 2).mean()

    def run(fn):  # a training step: the (compiled) forward, its backward, an SGD update
        a = torch.tensor(0.5, dtype=F64, requires_grad=True)
        c = c0.clone().requires_grad_()
        opt = torch.optim.SGD([a, c], lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            loss = fn(a, c)
            loss.backward()
            opt.step()
        return loss.detach(), a.detach(), c.detach()

    eager = run(loss_fn)
    torch._dynamo.reset()
    compiled = run(torch.compile(loss_fn, fullgraph=True))
    for e, cpl in zip(eager, compiled):
        close(e, cpl, 1e-9)
    # No graph break: fullgraph=True would have raised; count the graphs too.
    from torch._dynamo.utils import counters
    assert counters["stats"]["unique_graphs"] >= 1 and not counters["graph_break"], dict(counters["graph_break"])


def test_atomics_loop_and_in_out():
    n, s = 8, 12
    x = rnd(n, 3)
    pairs = torch.randint(0, n, (2 * s,), dtype=torch.int32)
    pairs[1::2] = (pairs[0::2] + 1 + torch.randint(0, n - 1, (s,), dtype=torch.int32)) % n
    rest = rnd(s).abs() + 0.5
    springs = kt.kernel("demo::springs_f64", launch_dims=s, output_dims=n)
    close(springs(x, pairs, rest, 2.0), springs_ref(x, pairs, rest, 2.0, n))
    xg = x.clone().requires_grad_()
    springs(xg, pairs, rest, 2.0).pow(2).sum().backward()
    xr = x.clone().requires_grad_()
    springs_ref(xr, pairs, rest, 2.0, n).pow(2).sum().backward()
    close(xg.grad, xr.grad)
    assert torch.autograd.gradcheck(lambda x, r: springs(x, pairs, r, 2.0), (x.clone().requires_grad_(),
                                                                             rest.clone().requires_grad_()))
    # in/out: the kernel adds into f itself (declared mutated); the call returns that tensor.
    inout = kt.kernel("demo::springs_f64", launch_dims=s, in_out_argnames=("f",))
    f = torch.ones(n, 3, dtype=F64)
    ptr = f.data_ptr()
    res = inout(x, pairs, rest, 2.0, f)
    assert res is f and f.data_ptr() == ptr
    close(f, 1 + springs_ref(x, pairs, rest, 2.0, n))
    torch.library.opcheck(inout.forward_op, (x, pairs, rest, torch.tensor(2.0, dtype=F64), torch.ones(n, 3, dtype=F64)))
    # Mutated in place under torch.compile too.
    f2 = torch.zeros(n, 3, dtype=F64)
    torch.compile(lambda f: inout(x, pairs, rest, 2.0, f), fullgraph=True)(f2)
    close(f2, springs_ref(x, pairs, rest, 2.0, n))
    raises(kt.KjitError, "in/out arguments", lambda: torch.func.vmap(lambda f: inout(x, pairs, rest, 2.0, f))(
        torch.zeros(2, n, 3, dtype=F64)))


def test_zero_copy_and_meta():
    x, y = rnd(4), rnd(4)
    out = daxpy(x, y, 1.0)
    assert out.is_contiguous()
    # Meta tensors: shapes and dtypes from the description, no launch.
    m = daxpy.forward_op(torch.empty(9, dtype=F64, device="meta"), torch.empty(9, dtype=F64, device="meta"),
                         torch.empty((), dtype=F64, device="meta"))
    assert m[0].shape == (9,) and m[0].device.type == "meta"
    v = affine.forward_op(*(torch.empty(s, dtype=F64, device="meta") for s in ((5, 3), (3,), (3, 3), ())))
    assert v[0].shape == (5, 3)
    # The callable under FakeTensorMode goes through the op (its fake), not the direct launch.
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        fo = affine(torch.empty(7, 3, dtype=F64), [1.0, 2.0, 3.0], torch.empty(3, 3, dtype=F64), 2.0)
    assert fo.shape == (7, 3) and type(fo) is not torch.Tensor
    # The numbers' tensors made under the mode are fake ones: not kept for later calls.
    v, m = rnd(7, 3), rnd(3, 3)
    close(affine(v, [1.0, 2.0, 3.0], m, 2.0), affine_ref(v, torch.tensor([1.0, 2.0, 3.0], dtype=F64), m, 2.0))
    # Numbers are converted once and kept: a new number is a new value.
    close(daxpy(x, y, 1.0), x + y)
    close(daxpy(x, y, 2.0), 2 * x + y)
    close(daxpy(x, y, 1.0), x + y)
    close(daxpy(x, y, True), x + y)


def test_repeated_calls():
    """The second call of a layout launches from the first one's plan (KernelOp._eager): it must
    check, convert and differentiate exactly as the first one did."""
    k = kt.kernel("demo::daxpy")
    x, y = rnd(5), rnd(5)
    for _ in range(3):  # the first call prepares, the next ones reuse
        close(k(x, y, 2.0), 2 * x + y)
    assert len(k._eager_plans) == 1
    close(k._eager((x, y, 2.0)), 2 * x + y)  # the plan's launch itself
    assert k._eager((x, y.float(), 2.0)) is None and k._eager((x.clone().requires_grad_(), y, 2.0)) is None
    close(k(x, y, 3.0), 3 * x + y)  # a new number is a new value, same plan
    close(k(x, y, torch.tensor(0.5, dtype=F64)), 0.5 * x + y)
    x2, y2 = rnd(7), rnd(7)  # a new shape is a new plan; the old one stays right
    close(k(x2, y2, 2.0), 2 * x2 + y2)
    close(k(x, y, 2.0), 2 * x + y)
    assert len(k._eager_plans) == 2
    out = k(x, y, 2.0)
    assert out is not k(x, y, 2.0) and out.data_ptr() != k(x, y, 2.0).data_ptr()  # fresh outputs
    # Seen layouts still get every check, with the first call's messages.
    raises(TypeError, "Invalid data type for array argument 'y', expected float64, got float32", k, x, y.float(), 2.0)
    raises(ValueError, "array argument 'x' has strides (2,) for shape (5,)", k, rnd(10)[::2], y, 2.0)
    raises(ValueError, "Invalid device for array argument 'y', expected cpu (the device of 'x'), got meta",
           k, x, torch.empty(5, dtype=F64, device="meta"), 1.0)
    raises(kt.KjitError, "array argument 'y' has extent 2", k, x, y[:2].clone(), 2.0)
    # Seen layouts with autograd: a gradient, then a plain call again.
    xg = x.clone().requires_grad_()
    k(xg, y, 2.0).sum().backward()
    close(xg.grad, torch.full_like(x, 2.0))
    assert not k(x, y, 2.0).requires_grad and k(xg, y, 2.0).requires_grad
    with torch.no_grad():
        assert not k(xg, y, 2.0).requires_grad
    # The adjoint's plan, reused: gradients of new cotangents; affine's gradients come back
    # from the launch reordered (arrays v, m, then values d, s).
    seen = len(affine._adj_plans)  # other tests' layouts
    for scale in (1.0, 3.0, -2.0):
        xg, ag = x.clone().requires_grad_(), torch.tensor(0.5, dtype=F64, requires_grad=True)
        (k(xg, y, ag) * scale).sum().backward()
        close(xg.grad, torch.full_like(x, 0.5 * scale))
        close(ag.grad, (x * scale).sum())
        args = [t.requires_grad_() for t in (rnd(4, 3), rnd(3), rnd(3, 3), torch.tensor(1.5, dtype=F64))]
        ref = [t.detach().clone().requires_grad_() for t in args]
        w = rnd(4, 3) * scale
        (affine(*args) * w).sum().backward()
        (affine_ref(*ref) * w).sum().backward()
        for t, r in zip(args, ref):
            close(t.grad, r.grad)
    assert len(k._adj_plans) == 1 and len(affine._adj_plans) <= seen + 1
    # Several outputs and a value before the arrays (operands reordered): decay(x, k, n) -> y;
    # affine's vec3 arrays and vector value.
    for _ in range(2):
        close(decay(x, 0.5, 3), decay_ref(x, 0.5, 3))
        raises(ValueError, "Invalid value for static argument 'n': 4294967296 is out of range for int32", decay, x,
               0.5, 2 ** 32)
        v, d, m = rnd(4, 3), rnd(3), rnd(3, 3)
        close(affine(v, d, m, 2.0), affine_ref(v, d, m, 2.0))
        close(affine(v, [1.0, 2.0, 3.0], m, 2.0), affine_ref(v, torch.tensor([1.0, 2.0, 3.0], dtype=F64), m, 2.0))
    # A default device elsewhere (a function mode): the outputs still on the inputs' device.
    ones, two = torch.ones(5, dtype=F64), torch.tensor(2.0, dtype=F64)
    torch.set_default_device("meta")
    try:
        out = k(x, y, 2.0)
        g = k.adjoint_op(x, y, two, out, ones)
    finally:
        torch.set_default_device(None)
    assert out.device.type == "cpu" and g[0].device.type == "cpu"
    close(out, 2 * x + y)
    close(g[0], torch.full_like(x, 2.0))
    # A function mode sees the op (the plan's direct launch would hide it).
    from torch.overrides import TorchFunctionMode

    class Seen(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.calls.append(str(func))
            return func(*args, **(kwargs or {}))

    with Seen() as seen:
        close(k(x, y, 2.0), 2 * x + y)
    assert any(c.startswith("kjit.") for c in seen.calls), seen.calls
    # Under vmap and torch.func.grad, the op, not the plan.
    xb = rnd(3, 5)
    close(torch.func.vmap(lambda x: k(x, y, 2.0))(xb), 2 * xb + y)
    close(torch.func.grad(lambda x: k(x, y, 2.0).sum())(x), torch.full_like(x, 2.0))


def test_bad_input():
    x, y = rnd(4), rnd(4)
    raises(TypeError, "Invalid data type for array argument 'y', expected float64, got float32",
           daxpy, x, y.float(), 1.0)
    raises(TypeError, "Invalid dimensionality for array argument 'x', expected 1 dimensions, got 2",
           daxpy, x[None], y, 1.0)
    raises(TypeError, "Invalid inner dimensions for array argument 'v', expected (3,), got (4,)",
           affine, rnd(2, 4), rnd(3), rnd(3, 3), 1.0)
    raises(ValueError, "array argument 'x' has strides (2,) for shape (4,)", daxpy, rnd(8)[::2], y, 1.0)
    raises(ValueError, "Invalid device for array argument 'y', expected cpu (the device of 'x'), got meta",
           daxpy, x, torch.empty(4, dtype=F64, device="meta"), 1.0)
    raises(TypeError, "Invalid type for array argument 'x', expected a tensor of float64, got list", daxpy,
           [1.0], y, 1.0)
    raises(TypeError, "Invalid data type for value argument 'a', expected float64, got float32", daxpy, x, y,
           torch.tensor(1.0))
    raises(TypeError, "Invalid shape for value argument 'a', expected () for float64, got (1,)", daxpy, x, y,
           torch.ones(1, dtype=F64))
    raises(ValueError, "Invalid value for static argument 'n': 4294967296 is out of range for int32", decay, x, 0.5,
           2 ** 32)
    raises(ValueError, "expected 3 inputs (x, y, a), got 2", daxpy, x, y)
    raises(kt.KjitError, "kjit kernel 'demo::daxpy': array argument 'y' has extent 2", daxpy, x, y[:2], 1.0)
    raises(kt.KjitError, "no kernel named 'demo::nope'", kt.kernel, "demo::nope")
    raises(ValueError, "in_out_argnames: 'q' is not a parameter", lambda: kt.kernel("demo::daxpy", in_out_argnames=("q",)))
    # An integer output is not differentiable: it never requires grad, and asking is torch's error.
    xi = rnd(4, requires_grad=True)
    out = daxpy(xi, y, 1.0)
    assert out.requires_grad
    echo = kt.kernel("tests::robust::echo_vectors", num_outputs=3, launch_dims=4)
    h = torch.rand(3, dtype=torch.float16, requires_grad=True)
    ul = torch.tensor([1, 2, 2 ** 64 - 1], dtype=torch.uint64)
    oh, obf, oul = echo(h, torch.rand(3, dtype=torch.bfloat16), ul)
    assert oh.requires_grad and not oul.requires_grad and obf.dtype == torch.bfloat16
    assert oul[3].tolist() == [1, 2, 2 ** 64 - 1]
    oh.float().sum().backward()
    assert h.grad.tolist() == [4.0, 4.0, 4.0]  # four threads echo h
    raises(RuntimeError, "only Tensors of floating point dtype can require gradients", oul.requires_grad_)
    # A tensor that requires grad for an integer parameter: the dtype error, naming it.
    springs = kt.kernel("demo::springs_f64", launch_dims=1, output_dims=2)
    raises(TypeError, "Invalid data type for array argument 'pairs', expected int32, got float64", springs,
           rnd(2, 3), rnd(2, requires_grad=True), rnd(1), 2.0)


def test_shared_cpu_threads():
    """kt.load puts kjit's pooled cpu work on torch's OpenMP team (kjit::share_cpu_threads):
    large launches, forward and adjoint, give torch's values there; KJIT_TORCH_SHARE_THREADS=0
    keeps kjit's own threads."""
    where = kt.cpu_threads()
    if "parallel backend: OpenMP" in torch.__config__.parallel_info():
        assert os.path.basename(where).startswith(("libgomp", "libomp", "libiomp5")), where
        with open("/proc/self/maps") as maps:
            assert where in maps.read(), f"{where} is not loaded in this process"
    else:
        assert where == "kjit", where
    n = (1 << 20) + 3  # pooled, with a partial last block
    x, y = rnd(n), rnd(n)
    for _ in range(3):  # unmeasured, then measured launches
        close(daxpy(x, y, 2.0), 2 * x + y)
    xg = x.clone().requires_grad_()
    a = torch.tensor(2.0, dtype=F64, requires_grad=True)
    (daxpy(xg, y, a) * y).sum().backward()
    close(xg.grad, 2 * y)
    close(a.grad, (x * y).sum(), tol=1e-9)
    script = "import os, kjit.torch as kt; kt.load(os.environ['KJIT_DEMO_LIBRARY']); print(kt.cpu_threads())"
    own = subprocess.run([sys.executable, "-c", script], env={**os.environ, "KJIT_TORCH_SHARE_THREADS": "0"},
                         capture_output=True, text=True, check=True)
    assert own.stdout.strip() == "kjit", own.stdout


def main() -> int:
    tests = [(n, f) for n, f in globals().items() if n.startswith("test_") and callable(f)]
    args = sys.argv[1:]
    skip = set(args[1:]) if args[:1] == ["--except"] else set()
    only = set() if skip else set(args)
    passed = failed = 0
    for name, fn in tests:
        if (only and name not in only) or name in skip:
            continue
        try:
            fn()
            passed += 1
            print(f"PASS {name}", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL {name}", flush=True)
            traceback.print_exc()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
