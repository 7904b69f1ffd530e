// The kernel of Warp 1.19's core/example_cupy.py, ported one to one (name, parameters and
// arithmetic as Warp's), for the driver examples/warp/cupy_example.py (kjit.arrays).
#pragma once

#include <kjit/dsl.hpp>

namespace warp_cupy {
using namespace kjit::dsl;
KJIT_MODULE(warp_cupy_interop)

/// y = a x + y, in place.
KJIT_KERNEL(saxpy, (Array<Float> x, Array<Float> y, Float a)) {
  Int i = tid();
  y[i] = a * x[i] + y[i];
}

}  // namespace warp_cupy
