// The forward body of a kernel: IR statements as structured C++ (one thread's work).
#pragma once

#include "expr_emitter.hpp"
#include "source_writer.hpp"

namespace kjit::codegen {

/// How a forward block runs.
enum class ForwardMode {
  Run,     ///< as the kernel runs
  Replay,  ///< a device function's replay: no stores, atomics, prints or side-effect
           ///< builtins, and device functions called through their replays
  /// A user adjoint (func(...).grad): as Run, but an array without data (an adjoint the
  /// caller did not ask for) reads as zero and ignores writes.
  UserAdjoint,
};

/// Writes the statements of `block` at `indent`, forward, in `mode`.
void emit_forward_block(SourceWriter& w, ExprEmitter& ex, const Names& n, const ir::Block& block,
                        int indent, ForwardMode mode = ForwardMode::Run);

}  // namespace kjit::codegen
