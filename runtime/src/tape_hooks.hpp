// What the launch paths tell the tapes (internal): forward launches to record, and writes
// to array memory a tape watches.
#pragma once

#include <vector>

#include "kjit/runtime/launch.hpp"

namespace kjit::detail {

/// After a forward launch of `kernel` on `device`: notes its writes of watched
/// memory and records it on the tapes this thread is recording. Costs a thread-local and an
/// atomic read when no tape records or watches.
void after_forward_launch(const KernelDef& kernel, const Dims& dims, const std::vector<LaunchArg>& args,
                          const LaunchOptions& options, const Device& device);

}  // namespace kjit::detail
