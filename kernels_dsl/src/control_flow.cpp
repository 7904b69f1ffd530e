// Tracing of If chains, Break, Continue and Return.
#include "kjit/dsl/control_flow.hpp"
#include "kjit/dsl/tracer.hpp"

namespace kjit::dsl {

namespace {
/// The innermost If of the chain whose `depth`, `index` and `levels` are given, after moving
/// any statements traced since it (an ElseIf condition) into its else region, which is where
/// they belong.
ir::Stmt& open_tail(detail::Tracer& t, size_t depth, size_t index, int levels, bool closed, Loc loc,
                    const char* what) {
  if (closed) t.fail(loc, std::string(what) + " after Else: an If chain has one Else, last");
  if (t.current_depth() != depth || t.current_block_size() <= index ||
      t.current_block().stmts[index].op != ir::Op::If)
    t.fail(loc, std::string(what) + " must be chained directly onto its If, in the same region");
  // Effect-free statements (an ElseIf's condition) may move into the else region.
  for (size_t k = index + 1; k < t.current_block_size(); ++k)
    if (!ir::is_effect_free(t.current_block().stmts[k]))
      t.fail(loc, std::string(what) + " must directly follow its If: a statement with an "
                                       "effect was traced in between");
  std::vector<ir::Stmt> tail = t.take_tail(index + 1);
  ir::Stmt* s = &t.current_block().stmts[index];
  for (int level = 0; level < levels; ++level) s = &s->regions[1].stmts.back();
  KJIT_CHECK(s->op == ir::Op::If && s->regions[1].stmts.empty(), "malformed If chain");
  for (ir::Stmt& moved : tail) s->regions[1].stmts.push_back(std::move(moved));
  return *s;
}
}  // namespace

IfChain detail::trace_if(ir::ValueId cond, function_ref<void()> then, Loc loc) {
  auto& t = Tracer::get(loc);
  t.emit(ir::Op::If, ir::Type::void_type(), {cond}, 0, loc);
  IfChain chain(t.current_depth(), t.current_block_size() - 1);
  t.record_region(0, FrameKind::Then, loc, then);
  return chain;
}

void IfChain::else_if(ir::ValueId c, detail::function_ref<void()> body, Loc loc) {
  auto& t = detail::Tracer::get(loc);
  ir::Stmt& tail = open_tail(t, depth_, index_, levels_, closed_, loc, "ElseIf");
  t.record_into(&tail.regions[1], detail::FrameKind::Else, loc, [&] {
    t.emit(ir::Op::If, ir::Type::void_type(), {c}, 0, loc);
    t.record_region(0, detail::FrameKind::Then, loc, body);
  });
  ++levels_;
}

void IfChain::else_(detail::function_ref<void()> body, Loc loc) {
  auto& t = detail::Tracer::get(loc);
  ir::Stmt& tail = open_tail(t, depth_, index_, levels_, closed_, loc, "Else");
  t.record_into(&tail.regions[1], detail::FrameKind::Else, loc, body);
  closed_ = true;
}

void detail::trace_for(ir::ValueId begin, ir::ValueId end, ir::ValueId step,
                       function_ref<void(ir::ValueId)> body, Loc loc) {
  auto& t = Tracer::get(loc);
  t.emit(ir::Op::For, ir::Type::void_type(), {begin, end, step}, 0, loc);
  ir::ValueId i = t.new_block_arg(ir::Type::scalar_of(ir::Scalar::I32));
  t.record_region(0, FrameKind::LoopBody, loc, [&] { body(i); }, {i});
}

void detail::trace_while(function_ref<ir::ValueId()> cond, function_ref<void()> body, Loc loc) {
  auto& t = Tracer::get(loc);
  t.emit(ir::Op::While, ir::Type::void_type(), {}, 0, loc);
  t.record_region(0, FrameKind::WhileCond, loc, [&] { t.yield(cond()); });
  t.record_region(1, FrameKind::LoopBody, loc, body);
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
  t.emit(ir::Op::Return, ir::Type::void_type(), {}, 0, loc);  // a function's: checked at its end
}

}  // namespace kjit::dsl
