// reference.hpp — an independent float64 interpreter of the traced IR (ir::Function), written
// from ops.def and builtins.def alone: it shares nothing with codegen/ or its prelude.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/ir/ir.hpp"

namespace fuzz {

/// One kernel argument for the reference: an array (element lanes flattened, row-major)
/// or a scalar value (in `data[0]`).
struct RefArg {
  bool is_array = false;
  int count = 0;              ///< elements (arrays)
  std::vector<double> data;   ///< count * lanes values (arrays), or one value
};

/// What a reference run did.
struct RefResult {
  /// Hash of every decision that depends on floating values (branches, comparisons, min/max,
  /// clamp, abs, atomic min/max winners): equal hashes mean the same piecewise-smooth piece.
  uint64_t fingerprint = 0;
};

/// Runs `fn` over threads [0, n) in order, updating array arguments in place. Throws
/// std::runtime_error("reference: ...") for constructs it does not model or out-of-range
/// indices (a generator bug, not a kjit one).
RefResult run_reference(const kjit::ir::Function& fn, int n, std::vector<RefArg>& args);

}  // namespace fuzz
