// Which parameters a kernel reads and writes as arrays, itself or through the device
// functions it passes them to (internal: gradient checks, tangent launches).
#pragma once

#include <set>

#include "kjit/ir/ir.hpp"

namespace kjit::detail {

/// Adds to `read` / `written` the parameters `fn` loads from / stores or atomically updates.
void array_uses(const ir::Function& fn, std::set<size_t>& read, std::set<size_t>& written);

}  // namespace kjit::detail
