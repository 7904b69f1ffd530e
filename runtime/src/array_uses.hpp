// Which parameters a kernel reads and writes as arrays, itself or through the device
// functions it passes them to (internal: gradient checks, tangent launches, tapes).
#pragma once

#include <set>

#include "kjit/ir/ir.hpp"
#include "kjit/kernel.hpp"

namespace kjit::detail {

/// Adds to `read` / `written` the parameters `fn` loads from / stores or atomically updates.
void array_uses(const ir::Function& fn, std::set<size_t>& read, std::set<size_t>& written);

/// A kernel's array parameters it reads and writes.
struct ArrayUses {
  std::set<size_t> read, written;
};
/// `kernel`'s, found in its IR on first use and kept with the kernel's runtime state (the tapes
/// ask on every launch they record or watch).
const ArrayUses& kernel_array_uses(const KernelDef& kernel);

}  // namespace kjit::detail
