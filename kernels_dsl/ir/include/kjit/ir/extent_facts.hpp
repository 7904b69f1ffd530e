// kjit/ir/extent_facts.hpp — what a kernel's IR proves about the array extents a launch needs:
// the accesses every thread makes, unguarded, at an affine function of its thread index.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/ir/ir.hpp"

namespace kjit::ir {

/// An access that every thread of a launch makes on every path, with no guard before it:
/// array parameter `param`, dimension `dim`, at index `scale * t + offset`, where t is the
/// thread's flat index (`launch_dim` == -1) or its launch index component `launch_dim`.
/// Only scale >= 1 and offset >= 0 are recorded: the largest thread indexes furthest.
struct ExtentFact {
  int param = 0;
  int dim = 0;
  int launch_dim = -1;
  int64_t scale = 1;
  int64_t offset = 0;
  SourceLoc loc;  ///< the first such access

  /// The smallest extent that holds the indices of `threads` values of t (0 for none);
  /// saturates at INT64_MAX.
  int64_t needed(int64_t threads) const;
  /// "tid()", "2*tid() + 1", "tid(1)": the index as the kernel computes it.
  std::string index_str() const;
};

/// The extent facts of one kernel.
struct ExtentFacts {
  std::vector<ExtentFact> unguarded;  ///< distinct (param, dim, launch_dim, scale, offset)
  /// Per parameter: whether the kernel may touch the array's elements at all (a load, store
  /// or atomic anywhere, or the array passed to a device function). Only the extent is read
  /// otherwise, so a null or empty array is harmless.
  std::vector<bool> accessed;
};

/// Analyses `fn` (a traced kernel, after dead code elimination). Conservative: an access
/// inside any If, loop or after a statement that may return early is not recorded, nor one
/// whose index is not an affine function of the thread index, so a fact is always a real
/// unguarded access; where nothing can be proven, nothing is recorded.
ExtentFacts extent_facts(const Function& fn);

}  // namespace kjit::ir
