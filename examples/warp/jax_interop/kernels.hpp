// Kernels of Warp 1.19's interop/example_jax_kernel.py and example_jax_callable.py, ported one
// to one (names, parameters and arithmetic as Warp's), for the JAX drivers beside this folder.
#pragma once

#include <kjit/dsl.hpp>

namespace warp_jax {
using namespace kjit::dsl;
KJIT_MODULE(warp_jax_interop)

/// output = a + b (example_jax_kernel.py example1: two inputs, one output).
KJIT_KERNEL(add_kernel, (Array<Int> a, Array<Int> b, Array<Int> output)) {
  Int i = tid();
  output[i] = a[i] + b[i];
}

/// sin and cos of every angle (example2: one input, two outputs).
KJIT_KERNEL(sincos_kernel, (Array<Float> angle, Array<Float> sin_out, Array<Float> cos_out)) {
  Int i = tid();
  sin_out[i] = sin(angle[i]);
  cos_out[i] = cos(angle[i]);
}

/// diag(d, 2d, 3d) with d = tid + 1 (example7: no inputs; the launch dims size the output).
KJIT_KERNEL(diagonal_kernel, (Array<Mat33f> output)) {
  Int i = tid();
  Float d = Float(i + 1);
  output[i] = Mat33f(d, 0.0f, 0.0f, 0.0f, d * 2.0f, 0.0f, 0.0f, 0.0f, d * 3.0f);
}

/// c = a b for a (N x K), b (K x M), launched over (N, M) (examples 5 and 6).
KJIT_KERNEL(matmul_kernel, (Array<Float, 2> a, Array<Float, 2> b, Array<Float, 2> c)) {
  auto [i, j] = tid<2>();
  Int n = a.shape[0];
  Int k = a.shape[1];
  Int m = b.shape[1];
  If(i < n && j < m, [&] {
    Var<Float> s = 0.0f;
    For(0, k, [&](Int kk) { s += a(i, kk) * b(kk, j); });
    c(i, j) = s;
  });
}

/// output = a * s for vec2 elements (examples 3 and 4; example_jax_callable.py's scale_func).
KJIT_KERNEL(scale_vec_kernel, (Array<Vec2f> a, Float s, Array<Vec2f> output)) {
  Int i = tid();
  output[i] = a[i] * s;
}

/// b += a (in/out, atomic as Warp's +=) and c = 2 a (example8).
KJIT_KERNEL(in_out_kernel, (Array<Float> a, Array<Float> b, Array<Float> c)) {
  Int i = tid();
  b[i] += a[i];
  c[i] = 2.0f * a[i];
}

/// output = a * s (example_jax_callable.py).
KJIT_KERNEL(scale_kernel, (Array<Float> a, Float s, Array<Float> output)) {
  Int i = tid();
  output[i] = a[i] * s;
}

/// b += a (example_jax_callable.py's in_out_func).
KJIT_KERNEL(accum_kernel, (Array<Float> a, Array<Float> b)) {
  Int i = tid();
  b[i] += a[i];
}

}  // namespace warp_jax
