// Removes Break, Continue and Return from a function: each becomes a flag variable, the
// statements after it are guarded by the flags, and loops that can be left early test them.
// The adjoint needs this: its reverse sweep retraces the forward control flow through
// structured regions only.
#pragma once

#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// A copy of `fn` with the same behaviour and no Break, Continue or Return statements.
/// Existing values keep their ids; new ones are appended.
ir::Function lower_jumps(const ir::Function& fn);

}  // namespace kjit::codegen
