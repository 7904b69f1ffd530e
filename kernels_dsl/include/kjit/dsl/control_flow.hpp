// kjit/dsl/control_flow.hpp — If / ElseIf / Else, For, While, Break, Continue and Return:
// C++ lambdas traced once into structured IR regions.
#pragma once

#include <type_traits>

#include "kjit/dsl/value.hpp"

namespace kjit::dsl {

/// The result of If(...): chain `.ElseIf(cond, body)` and `.Else(body)` directly onto it.
class IfChain {
 public:
  IfChain(size_t depth, size_t index) : depth_(depth), index_(index) {}

  /// Runs `body` when every earlier condition was false and `cond` is true.
  template <class Body>
  IfChain& ElseIf(const Bool& cond, Body&& body, Loc loc = Loc::here());
  /// Runs `body` when every earlier condition was false.
  template <class Body>
  void Else(Body&& body, Loc loc = Loc::here());

 private:
  /// The innermost If of the chain, after moving any statements traced since it (an
  /// ElseIf condition) into its else region, which is where they belong.
  ir::Stmt& open_tail(detail::Tracer& t, Loc loc, const char* what);
  size_t depth_;
  size_t index_;
  int levels_ = 0;
  bool closed_ = false;
};

/// Runs `then` when `cond` is true. Values created inside the body stay inside it; carry
/// results out through a Var<T> declared before the If.
template <class Body>
IfChain If(const Bool& cond, Body&& then, Loc loc = Loc::here()) {
  auto& t = detail::Tracer::get(loc);
  t.emit(ir::Op::If, ir::Type::void_type(), {cond.use(loc)}, 0, loc);
  IfChain chain(t.current_depth(), t.current_block_size() - 1);
  t.record_region(0, detail::FrameKind::Then, loc, std::forward<Body>(then));
  return chain;
}

template <class Body>
IfChain& IfChain::ElseIf(const Bool& cond, Body&& body, Loc loc) {
  auto& t = detail::Tracer::get(loc);
  ir::ValueId c = cond.use(loc);
  ir::Stmt& tail = open_tail(t, loc, "ElseIf");
  t.record_into(&tail.regions[1], detail::FrameKind::Else, loc, [&] {
    t.emit(ir::Op::If, ir::Type::void_type(), {c}, 0, loc);
    t.record_region(0, detail::FrameKind::Then, loc, std::forward<Body>(body));
  });
  ++levels_;
  return *this;
}

template <class Body>
void IfChain::Else(Body&& body, Loc loc) {
  auto& t = detail::Tracer::get(loc);
  ir::Stmt& tail = open_tail(t, loc, "Else");
  t.record_into(&tail.regions[1], detail::FrameKind::Else, loc, std::forward<Body>(body));
  closed_ = true;
}

namespace detail {
/// Emits a For statement over [begin, end) by `step` and traces `body` into it.
template <class Body>
void trace_for(ir::ValueId begin, ir::ValueId end, ir::ValueId step, Body&& body, Loc loc) {
  auto& t = Tracer::get(loc);
  t.emit(ir::Op::For, ir::Type::void_type(), {begin, end, step}, 0, loc);
  ir::ValueId i = t.new_block_arg(ir::Type::scalar_of(ir::Scalar::I32));
  t.record_region(0, FrameKind::LoopBody, loc, [&] {
    if constexpr (std::is_invocable_v<Body, Int>) {
      body(wrap<int32_t>(i));
    } else {
      static_assert(std::is_invocable_v<Body>, "kjit: a For body takes an Int or nothing");
      body();
    }
  }, {i});
}
}  // namespace detail

/// Runs `body(i)` for i = begin, begin+1, ..., end-1. Bounds are evaluated once, at entry,
/// and may be dynamic. The body may take the index (`[&](Int i)`) or nothing.
template <class Body>
void For(Operand<int32_t> begin, Operand<int32_t> end, Body&& body, Loc loc = Loc::here()) {
  ir::ValueId one = detail::make_literal<int32_t>(1, loc);
  detail::trace_for(begin.id, end.id, one, std::forward<Body>(body), loc);
}

/// Runs `body(i)` for i = begin, begin+step, ... while i < end (step > 0) or i > end
/// (step < 0). A zero step never iterates.
template <class Body>
void For(Operand<int32_t> begin, Operand<int32_t> end, Operand<int32_t> step, Body&& body,
         Loc loc = Loc::here()) {
  detail::trace_for(begin.id, end.id, step.id, std::forward<Body>(body), loc);
}

/// Runs `body` while `cond()` is true; `cond` is a lambda returning a Bool, evaluated before
/// every iteration.
template <class Cond, class Body>
void While(Cond&& cond, Body&& body, Loc loc = Loc::here()) {
  static_assert(std::is_convertible_v<std::invoke_result_t<Cond>, Bool>,
                "kjit: the While condition is a lambda returning a Bool, e.g. [&] { return i < n; }");
  auto& t = detail::Tracer::get(loc);
  t.emit(ir::Op::While, ir::Type::void_type(), {}, 0, loc);
  t.record_region(0, detail::FrameKind::WhileCond, loc, [&] {
    Bool c = cond();
    t.yield(c.use(loc));
  });
  t.record_region(1, detail::FrameKind::LoopBody, loc, std::forward<Body>(body));
}

/// Leaves the innermost loop.
void Break(Loc loc = Loc::here());
/// Skips to the next iteration of the innermost loop.
void Continue(Loc loc = Loc::here());
/// Ends this kernel thread.
void Return(Loc loc = Loc::here());

}  // namespace kjit::dsl
