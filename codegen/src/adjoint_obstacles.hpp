// What stops a kernel or device function from being differentiated correctly: the checks
// the adjoint emitter relies on, each reported with the user's file:line.
#pragma once

#include <string>

#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// Why `fn` cannot be differentiated correctly, naming the user's file:line; empty when it
/// can. (An array both read and written; an element provably written twice by one thread,
/// by two stores at the same index or by a store in a loop at an index the loop does not
/// change; a used atomic result; a While condition with effects.)
std::string adjoint_obstacle(const ir::Function& fn);

}  // namespace kjit::codegen
