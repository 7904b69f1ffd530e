// kjit/dsl/functions.hpp — device functions: helpers traced once per argument signature into
// their own IR function, emitted once per module and called (where a plain C++ helper is
// inlined into every use). Generic over element types through generic lambdas; optionally
// with a user adjoint (Warp's func_grad), a user replay (Warp's func_replay) and a user
// tangent for forward mode (`.jvp`, JAX's custom_jvp rule).
//
//   inline const auto energy = kjit::dsl::func("energy", [](auto d, auto k) { return k * dot(d, d); });
//   inline const auto safe_sqrt = kjit::dsl::func("safe_sqrt", [](auto x) { return sqrt(x); })
//       .grad([](auto x, auto adj_ret, auto& adj_x) { adj_x += adj_ret * 0.5f / max(sqrt(x), 1e-6f); });
//
// The body sees only its arguments (values of the calling kernel must be passed in), may not
// call itself (directly or not), and returns its value at its end or earlier with
// Return(value) (from inside a loop or branch; Return() for a function without one). A .grad
// lambda receives the arguments, adj_ret (when the function returns a value) and, per
// argument, its adjoint: a Var to add to for a value, the adjoint array for an array. A
// .replay lambda takes the arguments and returns what the body returns, without the body's
// side effects; the adjoint's forward replay runs it instead of the body. A .jvp lambda takes
// the arguments, then one tangent per argument (a value of the argument's type, zero for an
// integer; the tangent array for an array) and returns the tangent of what the body returns
// (nothing for a function that returns nothing; it writes the tangents of the arrays the
// body writes); forward mode (tangent kernels) calls it instead of differentiating the body:
//
//   inline const auto safe_sqrt = kjit::dsl::func("safe_sqrt", [](auto x) { return sqrt(x); })
//       .jvp([](auto x, auto dx) { return dx * 0.5f / max(sqrt(x), 1e-6f); });
//
// A body may return several values, as a tuple or a struct of DSL values (results.hpp):
//
//   inline const auto polar = kjit::dsl::func("polar", [](auto x, auto y) {
//     return std::make_tuple(sqrt(x * x + y * y), atan2(y, x));
//   });
//   auto [r, phi] = polar(x[i], y[i]);   // in a kernel; .grad gets adj_ret as the same tuple
//
// grad(f)(args...) (Warp's wp.grad) is, in forward code, the gradient of a function that
// returns one float: for one argument a value of its type, for several a dsl::Tuple of one
// per argument (zero for an integer). It runs f's adjoint (its .grad when it has one):
//
//   Vec3f force = -grad(energy)(d);   auto [dx, dy] = grad(polar_r)(x, y);
#pragma once

#include <type_traits>
#include <utility>

#include "kjit/dsl/array.hpp"
#include "kjit/dsl/diagnostics.hpp"
#include "kjit/dsl/results.hpp"
#include "kjit/dsl/tuple.hpp"
#include "kjit/dsl/var.hpp"

namespace kjit::dsl {

namespace detail {

/// The canonical handle of a device function argument of C++ type A: Value<E> for any value
/// handle (Var, Ref, array element), the array handle itself, Value<A> for C++ numbers.
template <class A, class = void> struct canon { using type = Value<A>; };
template <class A> struct canon<A, std::enable_if_t<std::is_base_of_v<ValueBase, A>>> {
  using type = Value<typename A::element_type>;
};
template <class T, int N> struct canon<ArrayHandle<T, N>> { using type = ArrayHandle<T, N>; };
template <class A> using canon_t = typename canon<A>::type;
/// The first of a pack of types.
template <class T, class...> struct first_type { using type = T; };

template <class A> ir::ValueId canon_id(const A& a, Loc loc) {
  if constexpr (std::is_base_of_v<ValueBase, A>) return a.use(loc);
  else if constexpr (std::is_arithmetic_v<A>) return make_literal<A>(a, loc);
  else return a.id();
}

/// The handle a function's single result is returned as: Value<E> for any value handle.
template <class R, class = void> struct result_of { using type = std::decay_t<R>; };
template <class R> struct result_of<R, std::enable_if_t<std::is_base_of_v<ValueBase, R>>> {
  using type = Value<typename R::element_type>;
};
/// Whether a body's value of type R is something a device function can return: nothing, one
/// DSL value, or several (a tuple or a struct of them, see results.hpp).
template <class R>
constexpr bool returnable_v = std::is_void_v<R> || std::is_base_of_v<ValueBase, R> || result_fields<R>() > 0;
/// What a call of a function whose body yields R returns: nothing, the value, the results;
/// for anything else a diagnostic type, so that the call's first error says what to return.
template <class R, class = void> struct call_result { using type = FuncReturnsNoValue<R>; };
template <class R>
struct call_result<R, std::enable_if_t<std::is_void_v<R> || std::is_base_of_v<ValueBase, R>>> { using type = R; };
template <class R>
struct call_result<R, std::enable_if_t<(result_fields<R>() > 0)>> { using type = result_handle_t<R>; };
template <class R> using call_result_t = typename call_result<R>::type;

/// What copies of one Func share: its name and its IR per argument signature, traced once
/// each (kernels_dsl/src/functions.cpp). Reference counted.
struct FuncState;
FuncState* func_state_new(const char* name);
void func_state_retain(FuncState* s);
void func_state_release(FuncState* s);
const char* func_state_name(const FuncState* s);

/// Which part of a device function a trace callback records.
enum class FuncPart : uint8_t { Body, Replay, Grad, Jvp };
/// Records `part` of device function `func` for one argument signature, under a Tracer the
/// caller set up: parameters come from func_param, the result goes to func_set_result. A Grad
/// stores in `out_vars[k]` the Var that holds parameter k's adjoint (-1 for an array).
using FuncTrace = void (*)(const void* func, FuncPart part, int64_t* out_vars);

/// Which user parts a device function has besides its body.
struct FuncParts {
  bool grad = false, replay = false, jvp = false;
};
/// Emits a call of `state`'s function with `args` (of `types`) in the function being traced,
/// tracing the body first for a new signature (with the user's adjoint, replay and tangent
/// when `parts` has them); returns the call's result (kNoValue when `result` is void).
ir::ValueId func_call(FuncState* state, const ir::Type* types, const ir::ValueId* args, size_t count,
                      const ir::Type& result, FuncParts parts, FuncTrace trace, const void* func, Loc def_loc,
                      Loc loc);
/// Emits grad(f)(args) (IR GradFunc) for `state`'s function, traced as func_call traces it;
/// a tracing error unless it returns one float. Returns the gradient (ir::gradient_type).
ir::ValueId func_grad_call(FuncState* state, const ir::Type* types, const ir::ValueId* args, size_t count,
                           const ir::Type& result, FuncParts parts, FuncTrace trace, const void* func, Loc def_loc,
                           Loc loc);
/// Emits the Param statement of parameter k of the function being traced.
ir::ValueId func_param(size_t k, Loc loc);
/// Sets the function's result (the value its body yields).
void func_set_result(ir::ValueId v);
/// Emits the early return of `v` from the device function being traced.
void func_return(ir::ValueId v, Loc loc);

struct NoGrad {};
struct NoReplay {};
struct NoJvp {};

}  // namespace detail

/// A device function (see the top of this file); make one with func(name, body).
template <class Body, class Grad = detail::NoGrad, class Replay = detail::NoReplay, class Jvp = detail::NoJvp>
class Func {
 public:
  Func(const char* name, Body body, Grad grad, Replay replay, Jvp jvp, Loc loc)
      : body_(std::move(body)), grad_(std::move(grad)), replay_(std::move(replay)), jvp_(std::move(jvp)), loc_(loc),
        state_(detail::func_state_new(name)) {}
  Func(const Func& o)
      : body_(o.body_), grad_(o.grad_), replay_(o.replay_), jvp_(o.jvp_), loc_(o.loc_), state_(o.state_) {
    detail::func_state_retain(state_);
  }
  Func(Func&& o)
      : body_(std::move(o.body_)), grad_(std::move(o.grad_)), replay_(std::move(o.replay_)), jvp_(std::move(o.jvp_)),
        loc_(o.loc_), state_(o.state_) {
    o.state_ = nullptr;
  }
  Func& operator=(const Func&) = delete;
  ~Func() {
    if (state_) detail::func_state_release(state_);
  }

  /// The same function with a user-supplied adjoint.
  template <class G>
  Func<Body, G, Replay, Jvp> grad(G g) const {
    return Func<Body, G, Replay, Jvp>(name(), body_, std::move(g), replay_, jvp_, loc_);
  }
  /// The same function with a user-supplied replay.
  template <class P>
  Func<Body, Grad, P, Jvp> replay(P p) const {
    return Func<Body, Grad, P, Jvp>(name(), body_, grad_, std::move(p), jvp_, loc_);
  }
  /// The same function with a user-supplied tangent (forward mode): `j(args..., tangents...)`
  /// returns the tangent of the body's value.
  template <class J>
  Func<Body, Grad, Replay, J> jvp(J j) const {
    return Func<Body, Grad, Replay, J>(name(), body_, grad_, replay_, std::move(j), loc_);
  }

  /// Calls the function from a kernel (or another device function) being traced.
  /// A body that returns several values (a tuple or a struct of DSL values) returns them
  /// here as the same tuple of plain values, or as the struct: `auto [a, b] = f(x);`.
  template <class... A,
            class R = typename detail::result_of<decltype(std::declval<const Body&>()(std::declval<detail::canon_t<A>>()...))>::type>
  detail::call_result_t<R> operator()(const A&... args) const {
    if constexpr (!detail::returnable_v<R>) {
      return {};  // the return type's instantiation is the error
    } else {
      return call<R>(args...);
    }
  }

  /// The name given to func().
  const char* name() const { return detail::func_state_name(state_); }

  /// grad(*this)(args...): the gradient of the function's one float result with respect to
  /// each argument (see grad below).
  template <class... A, class R = typename detail::result_of<decltype(std::declval<const Body&>()(std::declval<detail::canon_t<A>>()...))>::type>
  auto gradient(const A&... args) const {
    static_assert(sizeof...(A) >= 1, "kjit: grad(f)(args...) takes f's arguments");
    static_assert((std::is_base_of_v<ValueBase, detail::canon_t<A>> && ...),
                  "kjit: grad(f) differentiates with respect to values: pass elements, not arrays");
    static_assert(detail::returnable_v<R>, "kjit: grad(f) needs a device function that returns one float");
    Loc loc = detail::last_loc();
    const ir::ValueId ids[] = {detail::canon_id(args, loc)...};
    const ir::Type types[] = {detail::canon_t<A>::ir_type()...};
    ir::ValueId r = detail::func_grad_call(state_, types, ids, sizeof...(A), result_type<R>(),
                                           detail::FuncParts{has_grad, has_replay, has_jvp},
                                           &trace<R, detail::canon_t<A>...>, this, loc_, loc);
    if constexpr (sizeof...(A) == 1) {
      return typename detail::first_type<detail::canon_t<A>...>::type(detail::BoundTag{}, r);
    } else {
      return detail::unpack_results<Tuple<detail::canon_t<A>...>>(r, loc);
    }
  }

 private:
  template <class, class, class, class> friend class Func;
  static constexpr bool has_grad = !std::is_same_v<Grad, detail::NoGrad>;
  static constexpr bool has_replay = !std::is_same_v<Replay, detail::NoReplay>;
  static constexpr bool has_jvp = !std::is_same_v<Jvp, detail::NoJvp>;

  template <class R, class... A>
  detail::call_result_t<R> call(const A&... args) const {
    Loc loc = detail::last_loc();
    const ir::ValueId ids[] = {detail::canon_id(args, loc)..., ir::kNoValue};  // sentinel: no args
    const ir::Type types[] = {detail::canon_t<A>::ir_type()..., ir::Type{}};
    const ir::Type result = result_type<R>();
    ir::ValueId r = detail::func_call(state_, types, ids, sizeof...(A), result, detail::FuncParts{has_grad, has_replay, has_jvp},
                                      &trace<R, detail::canon_t<A>...>, this, loc_, loc);
    if constexpr (detail::result_fields<R>() > 0) {
      return detail::unpack_results<R>(r, loc);
    } else if constexpr (!std::is_void_v<R>) {
      return R(detail::BoundTag{}, r);
    }
  }

  template <class R, class... H>
  static void trace(const void* self, detail::FuncPart part, int64_t* out_vars) {
    const Func& f = *static_cast<const Func*>(self);
    if (part == detail::FuncPart::Body) f.trace_body<R, H...>(f.body_);
    if constexpr (has_replay)
      if (part == detail::FuncPart::Replay) f.trace_body<R, H...>(f.replay_);
    if constexpr (has_grad)
      if (part == detail::FuncPart::Grad) f.trace_grad<R, H...>(out_vars);
    if constexpr (has_jvp)
      if (part == detail::FuncPart::Jvp) f.trace_jvp<R, H...>();
  }

  // Parameter handles in declaration order (indices, not a counter: the order is explicit).
  template <class... H, size_t... I>
  Tuple<H...> make_handles(std::index_sequence<I...>) const {
    return Tuple<H...>{H(detail::BoundTag{}, detail::func_param(I, loc_))...};
  }

  /// The IR type of a body's value of type R: void, the value's type, or the struct type
  /// that carries several results.
  template <class R>
  static ir::Type result_type() {
    if constexpr (detail::result_fields<R>() > 0) {
      return detail::results_ir_type<R>();
    } else if constexpr (std::is_void_v<R>) {
      return ir::Type{};
    } else {
      return R::ir_type();
    }
  }

  template <class R, class... H, class F>
  void trace_body(const F& f) const {
    auto handles = make_handles<H...>(std::index_sequence_for<H...>{});
    set_result<R, false>(f, handles);
  }

  /// Traces the user tangent: parameters a0.., then one tangent per parameter (of its
  /// type); its value, the tangent of the body's, is the function's result.
  template <class R, class... H>
  void trace_jvp() const {
    auto handles = make_handles<H..., H...>(std::make_index_sequence<2 * sizeof...(H)>{});
    set_result<R, true>(jvp_, handles);
  }

  /// Applies `f` (the body or a .replay; the .jvp when `kJvp`) to `handles` and makes its
  /// value, of type R, the traced function's result.
  template <class R, bool kJvp, class F, class Handles>
  void set_result(const F& f, Handles& handles) const {
    if constexpr (std::is_void_v<R>) {
      dsl::apply(f, handles);
    } else if constexpr (detail::result_fields<R>() > 0) {
      constexpr bool same = std::is_same_v<R, std::decay_t<decltype(dsl::apply(f, handles))>>;
      static_assert(kJvp || same, "kjit: a .replay returns the same type as the function's body");
      static_assert(!kJvp || same, "kjit: a .jvp returns the tangent of what the body returns: the same type");
      R r = dsl::apply(f, handles);
      detail::func_set_result(detail::pack_results(r, result_type<R>(), loc_));
    } else {
      R r = dsl::apply(f, handles);
      detail::func_set_result(r.use(loc_));
    }
  }

  /// Traces the user adjoint: parameters a0.., adj_ret, then the adjoint array of each array
  /// parameter; a zeroed Var per value parameter collects its adjoint.
  template <class R, class... H>
  void trace_grad(int64_t* out_vars) const {
    auto handles = make_handles<H...>(std::index_sequence_for<H...>{});
    size_t slot = 0;
    size_t array_param = sizeof...(H) + (std::is_void_v<R> ? 0 : 1);
    // A braced list evaluates left to right (function arguments, as in make_tuple, need not):
    // the slots, their out_vars and their array parameters must follow the parameters' order.
    auto slots = dsl::apply([&](const auto&... h) {
      return Tuple<decltype(adjoint_slot(h, out_vars, slot, array_param, loc_))...>{
          adjoint_slot(h, out_vars, slot, array_param, loc_)...};
    }, handles);
    auto call = [&](auto&... adj) {
      if constexpr (std::is_void_v<R>) {
        dsl::apply([&](const auto&... h) { grad_(h..., deref(adj)...); }, handles);
      } else if constexpr (detail::result_fields<R>() > 0) {
        // The adjoints of several results arrive as one struct; the lambda gets them as the
        // call returns them (`auto adj_ret` is a tuple: `auto [adj_a, adj_b] = adj_ret;`).
        auto adj_ret = detail::unpack_results<R>(detail::func_param(sizeof...(H), loc_), loc_);
        dsl::apply([&](const auto&... h) { grad_(h..., adj_ret, deref(adj)...); }, handles);
      } else {
        R adj_ret(detail::BoundTag{}, detail::func_param(sizeof...(H), loc_));
        dsl::apply([&](const auto&... h) { grad_(h..., adj_ret, deref(adj)...); }, handles);
      }
    };
    dsl::apply(call, slots);
  }

  // The adjoint slot of an argument, made in place (copying a Var makes a new one): a zeroed
  // Var for a value, declared at the function's own line (not this header's), the adjoint
  // array parameter for an array.
  template <class T>
  struct VarSlot {
    VarSlot(int64_t* out_vars, size_t& slot, Loc loc) : var(loc) { out_vars[slot++] = int64_t(var.var_id()); }
    VarHandle<T> var;
  };
  template <class T>
  static VarSlot<T> adjoint_slot(const Value<T>&, int64_t* out_vars, size_t& slot, size_t&, Loc loc) {
    return VarSlot<T>(out_vars, slot, loc);
  }
  template <class T, int N>
  static ArrayHandle<T, N> adjoint_slot(const ArrayHandle<T, N>&, int64_t* out_vars, size_t& slot, size_t& next,
                                        Loc) {
    out_vars[slot++] = -1;
    return ArrayHandle<T, N>(detail::BoundTag{}, detail::func_param(next++, Loc{}));
  }

  template <class T>
  static VarHandle<T>& deref(VarSlot<T>& s) { return s.var; }
  template <class T, int N>
  static ArrayHandle<T, N>& deref(ArrayHandle<T, N>& a) { return a; }

  Body body_;
  Grad grad_;
  Replay replay_;
  Jvp jvp_;
  Loc loc_;
  detail::FuncState* state_;
};

/// Returns `value` from the device function being traced, from anywhere in its body (Warp's
/// `return value` inside a loop or branch of a @wp.func): a DSL value, a C++ number (of its
/// own type), or several values as a tuple or struct, of the type the body returns at its
/// end. `Return()` without a value leaves a function that returns nothing.
template <class V>
void Return(const V& value, Loc loc = Loc::here()) {
  if constexpr (std::is_base_of_v<ValueBase, V>) {
    detail::func_return(value.use(loc), loc);
  } else if constexpr (std::is_arithmetic_v<V>) {
    detail::func_return(detail::make_literal<V>(value, loc), loc);
  } else if constexpr (detail::result_fields<V>() > 0) {
    V fields = value;
    detail::func_return(detail::pack_results(fields, detail::results_ir_type<V>(), loc), loc);
  } else {
    static_assert(detail::always_false_v<V>,
                  "kjit: Return(value) takes a DSL value, a number, or a tuple or struct of DSL values");
  }
}

/// What grad(f) returns: called with f's arguments, it gives their gradients.
template <class F>
class FuncGradient {
 public:
  explicit FuncGradient(const F& f) : f_(f) {}
  /// The gradient at `args`: one value for one argument, a dsl::Tuple for several.
  template <class... A>
  auto operator()(const A&... args) const {
    return f_.gradient(args...);
  }

 private:
  F f_;
};

/// Warp's wp.grad(f): grad(f)(args...) in forward code is the gradient of device function f
/// (which returns one float) at args: f's adjoint run with the result's adjoint 1. Forward
/// code only: a kernel that calls it gets no adjoint and no tangent (second derivatives are
/// refused), nor may f itself call grad.
template <class B, class G, class P, class J>
FuncGradient<Func<B, G, P, J>> grad(const Func<B, G, P, J>& f) {
  return FuncGradient<Func<B, G, P, J>>(f);
}

/// A device function named `name` (the name appears in generated code and messages).
template <class Body>
Func<Body> func(const char* name, Body body, Loc loc = Loc::here()) {
  return Func<Body>(name, std::move(body), detail::NoGrad{}, detail::NoReplay{}, detail::NoJvp{}, loc);
}

}  // namespace kjit::dsl
