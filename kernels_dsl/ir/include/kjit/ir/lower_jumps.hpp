// Removes Break, Continue and Return from a function: each becomes a flag variable, the
// statements after it are guarded by the flags, and loops that can be left early test them.
// The adjoint needs this: its reverse sweep retraces the forward control flow through
// structured regions only. The tracer runs it on a device function that returns early (its
// printers and the tangent transform see flags, never a Return of a value); codegen runs it
// on every function (kjit/codegen lower.cpp).
#pragma once

#include "kjit/ir/ir.hpp"

namespace kjit::ir {

/// A copy of `fn` with the same behaviour and no Break, Continue or Return statements.
/// Existing values keep their ids; new ones are appended. A device function's Return of a
/// value stores it in a variable that the lowered function yields at its end.
Function lower_jumps(const Function& fn);

}  // namespace kjit::ir
