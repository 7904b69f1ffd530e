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

/// The body of an adjoint the reverse transform built (a kernel's or a device function's), by
/// this printer as a replay (device functions called through their replays): its parameters
/// from `forward_params` (the forward function's count) on are the adjoints, named as the
/// adjoint's signature names them ("adj_p_x"), then a device function's result adjoint
/// (kj_adj_ret).
void emit_adjoint_ir(SourceWriter& w, const ir::Function& adjoint, size_t forward_params, const FunctionNames* functions,
                     const LoopCheckpoints& loops);

}  // namespace kjit::codegen
