// bench/side_by_side/kernels.hpp — the three kernels of issue 15's side-by-side cpu benchmark, in kjit's DSL.
// Their Dr.Jit, Warp, hand-loop and float64 twins are in cpu_side_by_side.py and hand_runner.cpp;
// the constants (2.0, 10.0, 1.1, the 1.5 threshold and the 0.5 radius) must match there.
#pragma once

#include <kjit/dsl.hpp>

namespace side_by_side {
using namespace kjit::dsl;
KJIT_MODULE(side_by_side)

/// out = a * x + y.
KJIT_KERNEL(saxpy, (Array<Float> x, Array<Float> y, Float a, Array<Float> out)) {
  Int i = tid();
  out[i] = a * x[i] + y[i];
}

/// Spring s pulls particles ia[s] and ib[s] towards rest length rest[s] with stiffness k: a Vec3
/// gather of both ends and two atomic adds into the per-particle force array.
KJIT_KERNEL(springs, (Array<Vec3f> x, Array<Int> ia, Array<Int> ib, Array<Float> rest, Float k,
                      Array<Vec3f> f)) {
  Int s = tid();
  Int a = ia[s], b = ib[s];
  Vec3f d = x[a] - x[b];
  Float len = length(d);
  Vec3f force = d * (k * (len - rest[s]) / len);
  atomic_add(f, a, -force);
  atomic_add(f, b, force);
}

/// `steps` steps per value with a branch inside the loop: a value longer than 1.5 is scaled
/// back to length 0.5, any other grows by c. Lanes cross the threshold at different steps.
KJIT_KERNEL(damp, (Array<Vec3f> v, Float c, Int steps, Array<Vec3f> out)) {
  Int i = tid();
  Var<Vec3f> w = v[i];
  For(0, steps, [&](Int) {
    Float n = length(w);
    If(n > 1.5f, [&] { w = w * (0.5f / n); }).Else([&] { w = w * c; });
  });
  out[i] = w;
}

}  // namespace side_by_side
