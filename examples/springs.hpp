// examples/springs.hpp — spring forces between particle pairs: gathers positions, scatters
// forces with atomics, and calls an ordinary C++ helper on DSL values.
#pragma once

#include <kjit/dsl.hpp>

namespace demo {
using namespace kjit::dsl;

/// The force on the first end of a spring of rest length `rest` and stiffness `k` whose ends
/// are `d` apart. An ordinary C++ function: it is inlined into the trace and differentiated.
template <class S>
Value<kjit::vec<3, S>> spring_force(Value<kjit::vec<3, S>> d, Value<S> rest, Value<S> k) {
  Value<S> len = length(d);
  return d * (k * (len - rest) / len);
}

KJIT_KERNEL(springs, (Array<Vec3f> x, Array<Int> pairs, Array<Float> rest, Float k,
                      Array<Vec3f> f)) {
  Int s = tid();
  Int a = pairs[2 * s], b = pairs[2 * s + 1];
  Vec3f force = spring_force(x[a] - x[b], rest[s], k);
  atomic_add(f, a, -force);
  atomic_add(f, b, force);
}

/// The same in float64, for tight gradient checks.
KJIT_KERNEL(springs_f64, (Array<Vec3d> x, Array<Int> pairs, Array<Double> rest, Double k,
                          Array<Vec3d> f)) {
  Int s = tid();
  Int a = pairs[2 * s], b = pairs[2 * s + 1];
  Vec3d force = spring_force(x[a] - x[b], rest[s], k);
  atomic_add(f, a, -force);
  atomic_add(f, b, force);
}

}  // namespace demo
