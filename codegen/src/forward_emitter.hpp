// The forward body of a kernel: IR statements as structured C++ (one thread's work).
#pragma once

#include "expr_emitter.hpp"
#include "source_writer.hpp"

namespace kjit::codegen {

/// Writes the statements of `block` at `indent`, forward (as the kernel runs). With
/// `without_effects` (a device function's replay variant) stores, atomics, prints and
/// side-effect builtins are left out, and device functions are called through their replays.
void emit_forward_block(SourceWriter& w, ExprEmitter& ex, const Names& n, const ir::Block& block,
                        int indent, bool without_effects = false);

}  // namespace kjit::codegen
