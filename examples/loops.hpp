// examples/loops.hpp — kernels with dynamic loops and branches carrying mutable state:
// what reverse-mode autodiff must get right (and what Warp gets wrong).
#pragma once

#include <kjit/dsl.hpp>

namespace demo {
using namespace kjit::dsl;

/// Damps each velocity `steps` times by `c`, then clamps its length to 10.
KJIT_KERNEL(damp, (Array<Vec3f> v, Float c, Int steps, Array<Vec3f> out)) {
  Int i = tid();
  Var<Vec3f> w = v[i];                        // mutable local
  For(0, steps, [&](Int) { w = w * c; });     // dynamic loop, differentiable
  If(length(w) > 10.0f, [&] { w = normalize(w) * 10.0f; });
  out[i] = w;
}

/// x <- x * c + sin(x), n times: a loop-carried value through a nonlinear map.
KJIT_KERNEL(iterate, (Array<Double> x, Array<Double> c, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  Double ci = c[i];
  For(0, n, [&](Int) { y = y * ci + sin(y); });
  out[i] = y;
}

}  // namespace demo
