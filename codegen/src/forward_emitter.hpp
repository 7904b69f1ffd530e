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

/// How an adjoint kernel the reverse transform built checkpoints its loops (its Checkpoint
/// and ReverseSegments statements): `checkpoints` slots per state variable, and the module's
/// numbering of its loops (loop k reports status first_loop + k + 1 past its bound).
struct LoopCheckpoints {
  int checkpoints = 0;
  int first_loop = 0;
};

/// Writes the statements of `block` at `indent`, forward, in `mode` (`loops`: for an adjoint
/// kernel's loops).
void emit_forward_block(SourceWriter& w, ExprEmitter& ex, const Names& n, const ir::Block& block,
                        int indent, ForwardMode mode = ForwardMode::Run, const LoopCheckpoints* loops = nullptr);

}  // namespace kjit::codegen
