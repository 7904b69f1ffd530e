// Which parameters a kernel reads and writes as arrays, itself or through the device
// functions it passes them to (internal: gradient checks, tangent launches, tapes).
#pragma once

#include <set>

#include "kjit/ir/ir.hpp"
#include "kjit/kernel.hpp"

namespace kjit::detail {

/// Adds to `read` / `written` the parameters `fn` loads from / stores or atomically updates.
void array_uses(const ir::Function& fn, std::set<size_t>& read, std::set<size_t>& written);

/// Whether `fn` or a device function it calls updates an array atomically.
bool has_atomics(const ir::Function& fn);

/// A kernel's array parameters it reads and writes, and whether its forward entry point
/// updates arrays atomically (its adjoint always may: gradients are added atomically).
struct ArrayUses {
  std::set<size_t> read, written;
  bool atomics = false;
};
/// `kernel`'s, found in its IR on first use and kept with the kernel's runtime state (the tapes
/// ask on every launch they record or watch).
const ArrayUses& kernel_array_uses(const KernelDef& kernel);

}  // namespace kjit::detail
