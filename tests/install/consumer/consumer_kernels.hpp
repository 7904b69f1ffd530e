// consumer_kernels.hpp — the consumer project's kernels: a dynamic loop, differentiated.
#pragma once

#include <kjit/dsl.hpp>

namespace consumer {
KJIT_MODULE(consumer)
using namespace kjit::dsl;

/// out[i] = x[i] * (1 + c + c^2 + ... + c^(steps-1)), by a loop the adjoint replays.
KJIT_KERNEL(geometric, (Array<Float> x, Float c, Int steps, Array<Float> out)) {
  Int i = tid();
  Var<Float> acc = 0.0f;
  For(0, steps, [&](Int) { acc = acc * c + x[i]; });
  out[i] = acc;
}

}  // namespace consumer
