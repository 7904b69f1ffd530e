# Warp 1.19's random and noise builtins on the cpu, written out as the reference that
# tests/builtins/warp_streams.cpp compares kjit with. The same inputs are made inside both kernels
# from the row index with integer-exact builtins (rand_init, randf), so no input file is needed.
#
#   .venv-bench/bin/python scripts/warp_random_reference.py DIR [ROWS]
#
# writes DIR/<table>.bin (raw little-endian 32-bit values, ROWS x columns, row-major) for the
# tables below; scripts/warp_streams.sh runs it and then the kjit test against DIR.
import os, sys
import numpy as np
import warp as wp

wp.config.quiet = True
wp.init()

out_dir = sys.argv[1]
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
os.makedirs(out_dir, exist_ok=True)
CDF = np.cumsum(np.arange(1, 17, dtype=np.float64) / 136.0).astype(np.float32)
CDF[-1] = 1.0


@wp.kernel
def integers(cdf: wp.array(dtype=wp.float32), out: wp.array2d(dtype=wp.uint32)):
    i = wp.tid()
    out[i, 0] = wp.rand_init(i)
    out[i, 1] = wp.rand_init(12345, i)
    s = wp.rand_init(i, 2)
    out[i, 2] = wp.randu(s)
    out[i, 3] = wp.randu(s, wp.uint32(5), wp.uint32(1000))
    s = wp.rand_init(i, 3)
    out[i, 4] = wp.uint32(wp.randi(s))
    out[i, 5] = wp.uint32(wp.randi(s, -100, 100))
    s = wp.rand_init(i, 4)
    out[i, 6] = wp.poisson(s, float(i % 300) * 0.1)
    out[i, 7] = wp.poisson(s, float(i % 7) * 30.0 - 30.0)  # negative, zero and large rates
    s = wp.rand_init(i, 5)
    out[i, 8] = wp.uint32(wp.sample_cdf(s, cdf))
    # One state through a chain of draws: the last value depends on how many each consumed.
    s = wp.rand_init(i, 99)
    a = wp.randn(s)
    b = wp.sample_unit_sphere(s)
    c = wp.poisson(s, 12.5)
    d = wp.sample_unit_disk(s)
    out[i, 9] = wp.randu(s)


@wp.func
def put2(out: wp.array2d(dtype=wp.float32), i: int, c: int, v: wp.vec2):
    out[i, c] = v[0]
    out[i, c + 1] = v[1]


@wp.func
def put3(out: wp.array2d(dtype=wp.float32), i: int, c: int, v: wp.vec3):
    out[i, c] = v[0]
    out[i, c + 1] = v[1]
    out[i, c + 2] = v[2]


@wp.kernel
def floats(out: wp.array2d(dtype=wp.float32)):
    i = wp.tid()
    s = wp.rand_init(i, 10)
    out[i, 0] = wp.randf(s)
    out[i, 1] = wp.randf(s, -2.0, 6.0)
    s = wp.rand_init(i, 11)
    out[i, 2] = wp.randn(s)
    out[i, 3] = wp.randn(s)
    s = wp.rand_init(i, 12)
    put2(out, i, 4, wp.sample_triangle(s))
    put2(out, i, 6, wp.sample_unit_ring(s))
    put2(out, i, 8, wp.sample_unit_disk(s))
    put2(out, i, 10, wp.sample_unit_square(s))
    s = wp.rand_init(i, 13)
    put3(out, i, 12, wp.sample_unit_sphere_surface(s))
    put3(out, i, 15, wp.sample_unit_sphere(s))
    put3(out, i, 18, wp.sample_unit_hemisphere_surface(s))
    put3(out, i, 21, wp.sample_unit_hemisphere(s))
    put3(out, i, 24, wp.sample_unit_cube(s))


@wp.func
def noise_point(i: int):
    # Coordinates in [-40, 40); every 97th row on lattice points (integer coordinates).
    s = wp.rand_init(i, 777)
    p = wp.vec4(wp.randf(s, -40.0, 40.0), wp.randf(s, -40.0, 40.0), wp.randf(s, -40.0, 40.0), wp.randf(s, -40.0, 40.0))
    if i % 97 == 0:
        p = wp.vec4(wp.floor(p[0]), wp.floor(p[1]), wp.floor(p[2]), wp.floor(p[3]))
    return p


@wp.kernel
def points(x1: wp.array(dtype=float), x2: wp.array(dtype=wp.vec2), x3: wp.array(dtype=wp.vec3), x4: wp.array(dtype=wp.vec4)):
    i = wp.tid()
    p = noise_point(i)
    x1[i] = p[0]
    x2[i] = wp.vec2(p[0], p[1])
    x3[i] = wp.vec3(p[0], p[1], p[2])
    x4[i] = p


@wp.kernel
def noises(x1: wp.array(dtype=float), x2: wp.array(dtype=wp.vec2), x3: wp.array(dtype=wp.vec3), x4: wp.array(dtype=wp.vec4),
           n: wp.array2d(dtype=float), c2: wp.array(dtype=wp.vec2), c3: wp.array(dtype=wp.vec3), c4: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    seed = wp.rand_init(i)
    px = 1 + i % 7
    py = 2 + i % 5
    pz = 3 + i % 3
    pt = 1 + i % 4
    octaves = wp.uint32(1 + i % 4)
    n[i, 0] = wp.noise(seed, x1[i])
    n[i, 1] = wp.noise(seed, x2[i])
    n[i, 2] = wp.noise(seed, x3[i])
    n[i, 3] = wp.noise(seed, x4[i])
    n[i, 4] = wp.pnoise(seed, x1[i], px)
    n[i, 5] = wp.pnoise(seed, x2[i], px, py)
    n[i, 6] = wp.pnoise(seed, x3[i], px, py, pz)
    n[i, 7] = wp.pnoise(seed, x4[i], px, py, pz, pt)
    c2[i] = wp.curlnoise(seed, x2[i], octaves, 2.0, 0.5)
    c3[i] = wp.curlnoise(seed, x3[i], octaves, 2.0, 0.5)
    c4[i] = wp.curlnoise(seed, x4[i], octaves, 2.0, 0.5)


def run(kernel, arrays):
    wp.launch(kernel, dim=rows, inputs=arrays, device="cpu")


ints = wp.zeros((rows, 10), dtype=wp.uint32, device="cpu")
run(integers, [wp.array(CDF, dtype=wp.float32, device="cpu"), ints])
ints.numpy().astype("<u4").tofile(os.path.join(out_dir, "random_integers.bin"))
flts = wp.zeros((rows, 27), dtype=wp.float32, device="cpu")
run(floats, [flts])
flts.numpy().astype("<f4").tofile(os.path.join(out_dir, "random_floats.bin"))

xs = [wp.zeros(rows, dtype=t, device="cpu", requires_grad=True) for t in (float, wp.vec2, wp.vec3, wp.vec4)]
run(points, xs)
n = wp.zeros((rows, 8), dtype=float, device="cpu", requires_grad=True)
cs = [wp.zeros(rows, dtype=t, device="cpu", requires_grad=True) for t in (wp.vec2, wp.vec3, wp.vec3)]
tape = wp.Tape()
with tape:
    run(noises, xs + [n] + cs)
np.concatenate([n.numpy(), cs[0].numpy(), cs[1].numpy(), cs[2].numpy()], axis=1).astype("<f4").tofile(
    os.path.join(out_dir, "noise_values.bin"))


def gradients(seeds):
    """Each input's gradient for output seeds (n's 8 columns, then the curls): one backward."""
    tape.zero()
    tape.backward(grads=dict(zip([n] + cs, seeds)))
    return np.concatenate([x.grad.numpy().reshape(rows, -1) for x in xs], axis=1)


ones = lambda a: wp.array(np.ones(a.shape + ((a.dtype._length_,) if hasattr(a.dtype, "_length_") else ()), dtype=np.float32), dtype=a.dtype, device="cpu")
zeros = lambda a: wp.zeros_like(a)
# The noise columns' gradients (curls seeded 0), then the curls' (noise seeded 0): 10 + 10 columns.
np.concatenate([gradients([ones(n)] + [zeros(c) for c in cs]), gradients([zeros(n)] + [ones(c) for c in cs])], axis=1).astype(
    "<f4").tofile(os.path.join(out_dir, "noise_gradients.bin"))
print(f"wrote {rows} rows to {out_dir}")
