// Which parameters a kernel reads and writes as arrays, itself or through the device
// functions it passes them to (internal: gradient checks, tangent launches, tapes).
#pragma once

#include <set>
#include <vector>

#include "kjit/ir/ir.hpp"
#include "kjit/kernel.hpp"

namespace kjit::detail {

/// An array a kernel reaches from a parameter: the parameter itself (`path` empty) or a field
/// of a struct parameter at any depth (the field indices from the outermost struct in).
struct ArrayOrigin {
  size_t param = 0;
  std::vector<int64_t> path;
  bool operator<(const ArrayOrigin& o) const { return param != o.param ? param < o.param : path < o.path; }
};

/// Adds to `read` / `written` the arrays `fn` loads from / stores or atomically updates, itself
/// or through the device functions it passes them (or the structs holding them) to. An array
/// reached through a struct value the kernel made or kept in a variable is not followed.
void array_origins(const ir::Function& fn, std::set<ArrayOrigin>& read, std::set<ArrayOrigin>& written);

/// A kernel's array parameters it reads and writes, and whether its forward entry point
/// updates arrays atomically (its adjoint always may: gradients are added atomically).
struct ArrayUses {
  std::set<size_t> read, written;
  /// Arrays in fields of struct parameters that it reads and writes.
  std::vector<ArrayOrigin> field_read, field_written;
  bool atomics = false;
};
/// `fn`'s array uses (as kernel_array_uses describes them), but for `atomics`.
ArrayUses array_uses_of(const ir::Function& fn);

/// Adds to `read` / `written` the parameters `fn` loads from / stores or atomically updates.
void array_uses(const ir::Function& fn, std::set<size_t>& read, std::set<size_t>& written);

/// Whether `fn` or a device function it calls updates an array atomically.
bool has_atomics(const ir::Function& fn);

/// `kernel`'s ArrayUses, found in its IR on first use and kept with the kernel's runtime state (the tapes
/// ask on every launch they record or watch).
const ArrayUses& kernel_array_uses(const KernelDef& kernel);

}  // namespace kjit::detail
