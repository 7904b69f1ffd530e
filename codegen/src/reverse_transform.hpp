// Reverse mode as an IR->IR transform: a kernel's adjoint built as an ordinary IR function
// (replay, then the reverse sweep over adjoint variables) that the scalar printer prints like
// any kernel. It covers what the first increment of the transform covers (lower.cpp's one
// predicate); the adjoint emitter writes every other kernel's adjoint.
#pragma once

#include <string>

#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// What of jump-lowered kernel `fn` the transform has no rule for yet ("" when it covers all
/// of it): control flow (branches, loops), device function calls, print() of values, struct
/// components, atomic min/max on differentiable values, arrays without an adjoint parameter
/// (struct fields, addresses).
std::string reverse_transform_gap(const ir::Function& fn);

/// The adjoint kernel of jump-lowered kernel `fn` (reverse_transform_gap(fn) must be ""). Its
/// parameters are the kernel's, then one per parameter for its adjoint (named "adj_" + the
/// name): an array's adjoint array is read by Param statements numbered from
/// fn.params.size(); a value's adjoint is the sum AccumParam adds to (the entry point sums it
/// over the launch). Its body replays the kernel without effects, then sweeps back last
/// statement first, each value's and variable's adjoint a local variable of its own, zeroed
/// where the sweep first touches it, with the same additions in the same order as the adjoint
/// emitter writes (so the same bits).
ir::Function reverse_transform(const ir::Function& fn);

}  // namespace kjit::codegen
