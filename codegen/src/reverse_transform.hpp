// Reverse mode as an IR->IR transform: a kernel's adjoint built as an ordinary IR function
// (replay, then the reverse sweep over adjoint variables) that the scalar printer prints like
// any kernel. It covers the kernels and device functions lower.cpp's one predicate hands it
// (straight-line code, branches, loops, device function calls, swept back in one span); the
// adjoint emitter writes every other adjoint.
#pragma once

#include <string>

#include "adjoint_loops.hpp"
#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// What of jump-lowered kernel or device function `fn` the transform has no rule for (""
/// when it covers all of it): statements no adjoint takes (a gradient, a tangent, a jump
/// lower_jumps left, the transform's own).
std::string reverse_transform_gap(const ir::Function& fn);

/// The adjoint kernel of jump-lowered kernel `fn` (reverse_transform_gap(fn) must be ""). Its
/// parameters are the kernel's, then one per parameter for its adjoint (named "adj_" + the
/// name): an array's adjoint array is read by Param statements numbered from
/// fn.params.size(); a value's adjoint is the sum AccumParam adds to (the entry point sums it
/// over the launch). Of a device function (is_function), the body of its adjoint adj_<f>
/// (is_function too): AccumParam hands a value parameter's adjoint to the caller in its own
/// type, and where the result has an adjoint, a last parameter, kj_adj_ret, the caller's
/// adjoint of it, starts the sweep. Its body replays the kernel without effects (device functions through
/// their replays, when printed as a replay), then sweeps back last statement first, a branch
/// as a branch on the replay's condition, each value's and variable's adjoint a local variable
/// of its own, zeroed where the sweep first touches it (inside a branch for the branch's
/// values), with the same additions in the same order as the adjoint emitter writes (so the
/// same bits). A value a branch defines and its sweep reads is kept in a variable by the
/// replay and loaded at the top of the sweep's branch. A loop (one of `loops`, the kernel's
/// AdjointLoops) is replayed keeping checkpoints of what it changes (Checkpoint) and swept back
/// segment by segment (ReverseSegments), each iteration replayed again as a copy of its body
/// with values of its own, then swept back, as the emitter's; a thread whose loop passed its
/// checkpoint bound sweeps nothing back.
ir::Function reverse_transform(const ir::Function& fn, const AdjointLoops& loops);

}  // namespace kjit::codegen
