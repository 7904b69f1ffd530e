// The kernel and device function of Warp 1.19's core/example_torch.py, ported one to one (names,
// parameters and arithmetic as Warp's), for the PyTorch driver examples/warp/torch_example.py.
#pragma once

#include <kjit/dsl.hpp>

namespace warp_torch {
using namespace kjit::dsl;
KJIT_MODULE(warp_torch_interop)

/// The Rosenbrock function, minimum 0 at (1, 1). Warp's `a ** 2.0` is its pow builtin (not a
/// product), so pow here too: the same forward values and the same adjoint formula.
inline const auto rosenbrock = func("rosenbrock", [](Float x, Float y) {
  return pow(1.0f - x, 2.0f) + 100.0f * pow(y - pow(x, 2.0f), 2.0f);
});

/// z[i] = rosenbrock of particle i's position.
KJIT_KERNEL(eval_rosenbrock, (Array<Vec2f> xs, Array<Float> z)) {
  Int i = tid();
  Vec2f x = xs[i];
  z[i] = rosenbrock(x[0], x[1]);
}

}  // namespace warp_torch
