// kjit/dsl/control_flow.hpp — If / ElseIf / Else, For, While, Break, Continue and Return:
// C++ lambdas traced once into structured IR regions.
#pragma once

#include <type_traits>

#include "kjit/dsl/diagnostics.hpp"
#include "kjit/dsl/value.hpp"

namespace kjit::dsl {

/// The result of If(...): chain `.ElseIf(cond, body)` and `.Else(body)` directly onto it.
class IfChain {
 public:
  IfChain(size_t depth, size_t index) : depth_(depth), index_(index) {}

  /// Runs `body` when every earlier condition was false and `cond` is true.
  template <class Body>
  IfChain& ElseIf(const Bool& cond, Body&& body, Loc loc = Loc::here()) {
    else_if(cond.use(loc), body, loc);
    return *this;
  }
  /// Runs `body` when every earlier condition was false.
  template <class Body>
  void Else(Body&& body, Loc loc = Loc::here()) {
    else_(body, loc);
  }

 private:
  void else_if(ir::ValueId cond, detail::function_ref<void()> body, Loc loc);
  void else_(detail::function_ref<void()> body, Loc loc);
  size_t depth_;
  size_t index_;
  int levels_ = 0;
  bool closed_ = false;
};

namespace detail {
/// Emits an If on `cond` and traces `then` into its then region.
IfChain trace_if(ir::ValueId cond, function_ref<void()> then, Loc loc);
/// Emits a For statement over [begin, end) by `step` and traces `body(i)` into it.
void trace_for(ir::ValueId begin, ir::ValueId end, ir::ValueId step,
               function_ref<void(ir::ValueId)> body, Loc loc);
/// Emits a While: `cond()` (the id of a Bool) traced into its condition, `body` into its body.
void trace_while(function_ref<ir::ValueId()> cond, function_ref<void()> body, Loc loc);

template <class Body>
void for_body(Body& body, ir::ValueId i) {
  if constexpr (std::is_invocable_v<Body&, Int>) {
    body(wrap<int32_t>(i));
  } else {
    static_assert(std::is_invocable_v<Body&>, "kjit: a For body takes an Int or nothing");
    body();
  }
}
}  // namespace detail

/// Runs `then` when `cond` is true. Values created inside the body stay inside it; carry
/// results out through a Var<T> declared before the If.
template <class Body>
IfChain If(const Bool& cond, Body&& then, Loc loc = Loc::here()) {
  return detail::trace_if(cond.use(loc), then, loc);
}

/// Runs `body(i)` for i = begin, begin+1, ..., end-1. Bounds are evaluated once, at entry,
/// and may be dynamic. The body may take the index (`[&](Int i)`) or nothing.
template <class Body>
void For(Operand<int32_t> begin, Operand<int32_t> end, Body&& body, Loc loc = Loc::here()) {
  ir::ValueId one = detail::make_literal<int32_t>(1, loc);
  detail::trace_for(begin.id, end.id, one, [&](ir::ValueId i) { detail::for_body(body, i); }, loc);
}

/// Runs `body(i)` for i = begin, begin+step, ... while i < end (step > 0) or i > end
/// (step < 0). A zero step never iterates.
template <class Body>
void For(Operand<int32_t> begin, Operand<int32_t> end, Operand<int32_t> step, Body&& body,
         Loc loc = Loc::here()) {
  detail::trace_for(begin.id, end.id, step.id, [&](ir::ValueId i) { detail::for_body(body, i); }, loc);
}

namespace detail {
/// Whether `cond` is a While condition: something callable that returns a Bool.
template <class Cond, class = void> struct is_condition : std::false_type {};
template <class Cond>
struct is_condition<Cond, std::enable_if_t<std::is_invocable_v<Cond&>>>
    : std::is_convertible<std::invoke_result_t<Cond&>, Bool> {};
}  // namespace detail

/// Runs `body` while `cond()` is true; `cond` is a lambda returning a Bool, evaluated before
/// every iteration.
template <class Cond, class Body, std::enable_if_t<detail::is_condition<Cond>::value, int> = 0>
void While(Cond&& cond, Body&& body, Loc loc = Loc::here()) {
  detail::trace_while([&]() -> ir::ValueId {
    Bool c = cond();
    return c.use(loc);
  }, body, loc);
}
/// A condition that is not a lambda returning a Bool (`While(k < 3, ...)` would test k once):
/// a compile error saying how to write it.
template <class Cond, class Body, std::enable_if_t<!detail::is_condition<Cond>::value, int> = 0>
detail::WhileNeedsLambda<Cond> While(Cond&&, Body&&, Loc = Loc::here());

/// Leaves the innermost loop.
void Break(Loc loc = Loc::here());
/// Skips to the next iteration of the innermost loop.
void Continue(Loc loc = Loc::here());
/// Ends this kernel thread, or leaves a device function that returns nothing (a function's
/// value: Return(value), kjit/dsl/functions.hpp).
void Return(Loc loc = Loc::here());

}  // namespace kjit::dsl
