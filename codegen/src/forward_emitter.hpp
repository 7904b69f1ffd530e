// The forward body of a kernel: IR statements as structured C++ (one thread's work).
#pragma once

#include "expr_emitter.hpp"
#include "source_writer.hpp"

namespace kjit::codegen {

/// Writes the statements of `block` at `indent`, forward (as the kernel runs).
void emit_forward_block(SourceWriter& w, ExprEmitter& ex, const Names& n, const ir::Block& block,
                        int indent);

}  // namespace kjit::codegen
