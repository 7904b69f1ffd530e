// A kernel's tangent kernel with what launches need to know about it (internal).
#pragma once

#include <vector>

#include "kjit/kernel.hpp"

namespace kjit::detail {

/// The tangent kernel of a kernel, and how it uses each tangent array: per parameter of the
/// kernel, whether the tangent kernel reads and writes that parameter's tangent slot.
struct TangentKernel {
  const KernelDef* kernel = nullptr;
  std::vector<bool> reads, writes;
};

/// tangent_of's lookup, with the uses (valid until the kernel's module changes).
const TangentKernel& tangent_kernel(const KernelDef& kernel);

}  // namespace kjit::detail
