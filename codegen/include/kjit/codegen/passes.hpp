// kjit/codegen/passes.hpp — the IR of a module's functions after each pass of codegen's
// pipeline (codegen/src/lower.cpp), for `kjit source --passes`, golden files and
// KJIT_PRINT_PASSES=1 (which prints the same to stderr whenever a module is generated).
#pragma once

#include <string>
#include <vector>

#include "kjit/codegen/codegen.hpp"

namespace kjit::codegen {

/// One function's IR after one pass.
struct PassSnapshot {
  std::string function;  ///< "kernel demo::damp" or "device function helper"
  std::string pass;      ///< "traced", "lower_jumps", ...
  std::string ir;        ///< ir::print of the function after the pass (an analysis: its result)
};

/// Runs codegen's passes over `kernels` and every device function they reach, and returns
/// what each pass left, in the order the passes ran.
std::vector<PassSnapshot> pass_snapshots(const std::vector<const ir::Function*>& kernels,
                                         const CodegenOptions& options);

}  // namespace kjit::codegen
