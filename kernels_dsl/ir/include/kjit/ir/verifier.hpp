// kjit/ir/verifier.hpp — checks that a function is well-formed IR.
#pragma once

#include <string>
#include <vector>

#include "kjit/ir/ir.hpp"

namespace kjit::ir {

/// Every problem found in `fn`, each naming the statement and its source location: values
/// used outside their scope or before definition, wrong operand types or counts, Break
/// outside loops, malformed regions. Empty when `fn` is well-formed.
std::vector<std::string> check(const Function& fn);

/// Throws an Internal error listing the problems when check(fn) finds any.
void verify(const Function& fn);

}  // namespace kjit::ir
