// The launch checks that need the kernel's IR: extents its unguarded accesses need
// (kjit/ir/extent_facts.hpp), and arrays it touches that are empty or have no data.
#pragma once

#include <vector>

#include "kjit/abi.h"
#include "kjit/runtime/launch.hpp"

namespace kjit::detail {

/// Throws a User error naming the kernel, the parameter and both sizes when the launch
/// `bounds` reaches past an array that the kernel indexes by the thread index with no guard,
/// or when a non-empty launch passes an array whose elements the kernel touches that is
/// empty or has no data. `adj_args` (the adjoint arrays of an adjoint launch) may be null.
void check_extents(const KernelDef& kernel, const kj::launch_bounds_t& bounds, const std::vector<LaunchArg>& args,
                   const std::vector<LaunchArg>* adj_args);

}  // namespace kjit::detail
