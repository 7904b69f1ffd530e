// The spans of a long adjoint body: runs of its top-level statements that the reverse sweep
// takes one at a time, each run forward again from a checkpoint of the variables it reads
// right before its reverse (adjoint_emitter.cpp, reverse_spans).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// Top-level statements [begin, end) of a body, the variables they read, the values they use
/// that earlier top-level statements define (parameters aside: they never change), and the
/// values they define (block arguments included) that nothing outside the span uses.
struct SweepSpan {
  size_t begin = 0, end = 0;
  std::vector<int64_t> vars_read;
  std::vector<ir::ValueId> inputs;
  std::vector<ir::ValueId> locals;
};

/// Calls `fn` on statement `top` and on every statement inside its regions.
template <class Fn>
void for_each_within(const ir::Stmt& top, Fn&& fn) {
  fn(top);
  for (const ir::Block& r : top.regions) ir::for_each_stmt(r, fn);
}

/// Cuts `body` into spans of at least `span_statements` statements (counting those inside
/// loops and branches; a top-level statement is never cut), in program order. One span, the
/// whole body, when the option is 0 or the body has fewer than twice that many: a short
/// kernel's adjoint is one replay and one sweep, as it always was.
std::vector<SweepSpan> plan_sweep_spans(const ir::Block& body, int span_statements);

}  // namespace kjit::codegen
