# Warp 1.19's wp.optim.Adam and SGD on the cpu against a numpy float32 restatement of their kernels
# (the restatement tests/autodiff/optimizers.cpp holds kjit to, bit for bit): differing
# components per case, 0 expected. Run: .venv-bench/bin/python bench/optim_vs_warp.py (bench/bench_venv.sh)
import numpy as np, warp as wp, math
import warp.optim
wp.config.quiet = True
wp.init()
rng = np.random.default_rng(5)
f32 = np.float32
def oracle(p, gs, vector, lr, b1, b2, eps):
    p = p.astype(f32).copy(); m = np.zeros_like(p); v = np.zeros_like(p)
    lr, b1, b2, eps = f32(lr), f32(b1), f32(b2), f32(eps)
    one = f32(1)
    for t, g in enumerate(gs):
        m = b1*m + (one-b1)*g
        v = b2*v + (one-b2)*(g*g) if vector else b2*v + (one-b2)*g*g
        mhat = m / (one - np.power(b1, f32(t)+one, dtype=f32))
        vhat = v / (one - np.power(b2, f32(t)+one, dtype=f32))
        den = np.sqrt(vhat) + eps
        p = p - lr*(mhat/den) if vector else p - lr*mhat/den
    return p
for vector in (False, True):
    shape = (64, 3) if vector else (192,)
    p0 = rng.uniform(-2, 2, shape).astype(f32)
    gs = [rng.uniform(-1, 1, shape).astype(f32) for _ in range(5)]
    dt = wp.vec3 if vector else wp.float32
    wp_p = wp.array(p0, dtype=dt, device="cpu")
    opt = wp.optim.Adam([wp_p], lr=0.01, betas=(0.8, 0.99), eps=1e-6)
    for g in gs:
        opt.step([wp.array(g, dtype=dt, device="cpu")])
    res = wp_p.numpy().reshape(shape)
    o = oracle(p0, gs, vector, 0.01, 0.8, 0.99, 1e-6)
    print("adam vector" if vector else "adam scalar", "differing components:", int(np.sum(res.view(np.uint32) != o.view(np.uint32))), "of", res.size)
# SGD
for mom, damp, wd, nest in [(0.9, 0.25, 0.01, True), (0.9, 0.0, 0.0, False), (0.0, 0.0, 0.01, False)]:
    p0 = rng.uniform(-2, 2, (100,)).astype(f32); gs = [rng.uniform(-1, 1, (100,)).astype(f32) for _ in range(4)]
    wp_p = wp.array(p0, dtype=wp.float32, device="cpu")
    opt = wp.optim.SGD([wp_p], lr=0.05, momentum=mom, dampening=damp, weight_decay=wd, nesterov=nest)
    for g in gs: opt.step([wp.array(g, dtype=wp.float32, device="cpu")])
    p = p0.copy(); b = np.zeros_like(p); lr, m_, d_, w_ = f32(0.05), f32(mom), f32(damp), f32(wd)
    for t, g in enumerate(gs):
        gt = g.copy()
        if w_ != 0: gt = gt + w_*p
        if m_ != 0:
            bt = m_*b + (f32(1)-d_)*gt if t > 0 else gt
            gt = gt + m_*bt if nest else bt
            b = bt
        p = p - lr*gt
    print("sgd", mom, damp, wd, nest, "differing:", int(np.sum(wp_p.numpy().view(np.uint32) != p.view(np.uint32))))
