// Tracing of If chains, Break, Continue and Return.
#include "kjit/dsl/control_flow.hpp"

namespace kjit::dsl {

ir::Stmt& IfChain::open_tail(detail::Tracer& t, Loc loc, const char* what) {
  if (closed_) t.fail(loc, std::string(what) + " after Else: an If chain has one Else, last");
  if (t.current_depth() != depth_ || t.current_block_size() <= index_ ||
      t.current_block().stmts[index_].op != ir::Op::If)
    t.fail(loc, std::string(what) + " must be chained directly onto its If, in the same region");
  // Effect-free statements (an ElseIf's condition) may move into the else region.
  for (size_t k = index_ + 1; k < t.current_block_size(); ++k)
    if (!ir::is_effect_free(t.current_block().stmts[k]))
      t.fail(loc, std::string(what) + " must directly follow its If: a statement with an "
                                       "effect was traced in between");
  std::vector<ir::Stmt> tail = t.take_tail(index_ + 1);
  ir::Stmt* s = &t.current_block().stmts[index_];
  for (int level = 0; level < levels_; ++level) s = &s->regions[1].stmts.back();
  KJIT_CHECK(s->op == ir::Op::If && s->regions[1].stmts.empty(), "malformed If chain");
  for (ir::Stmt& moved : tail) s->regions[1].stmts.push_back(std::move(moved));
  return *s;
}

void Break(Loc loc) {
  auto& t = detail::Tracer::get(loc);
  if (!t.in_loop()) t.fail(loc, "Break() outside a For or While body");
  t.emit(ir::Op::Break, ir::Type::void_type(), {}, 0, loc);
}

void Continue(Loc loc) {
  auto& t = detail::Tracer::get(loc);
  if (!t.in_loop()) t.fail(loc, "Continue() outside a For or While body");
  t.emit(ir::Op::Continue, ir::Type::void_type(), {}, 0, loc);
}

void Return(Loc loc) {
  auto& t = detail::Tracer::get(loc);
  if (t.function().is_function)
    t.fail(loc, "Return() inside a device function: it returns its value at its end; carry early "
                "results out through a Var and If");
  t.emit(ir::Op::Return, ir::Type::void_type(), {}, 0, loc);
}

}  // namespace kjit::dsl
