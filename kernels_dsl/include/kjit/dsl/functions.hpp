// kjit/dsl/functions.hpp — device functions: helpers traced once per argument signature into
// their own IR function, emitted once per module and called (where a plain C++ helper is
// inlined into every use). Generic over element types through generic lambdas; optionally
// with a user adjoint (Warp's func_grad) and a user replay (Warp's func_replay).
//
//   inline const auto energy = kjit::dsl::func("energy", [](auto d, auto k) { return k * dot(d, d); });
//   inline const auto safe_sqrt = kjit::dsl::func("safe_sqrt", [](auto x) { return sqrt(x); })
//       .grad([](auto x, auto adj_ret, auto& adj_x) { adj_x += adj_ret * 0.5f / max(sqrt(x), 1e-6f); });
//
// The body sees only its arguments (values of the calling kernel must be passed in), may not
// call itself (directly or not), and ends by returning its value (no Return()). A .grad
// lambda receives the arguments, adj_ret (when the function returns a value) and, per
// argument, its adjoint: a Var to add to for a value, the adjoint array for an array. A
// .replay lambda takes the arguments and returns what the body returns, without the body's
// side effects; the adjoint's forward replay runs it instead of the body.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "kjit/dsl/array.hpp"
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

template <class A> ir::Type canon_type() { return canon_t<A>::ir_type(); }
template <class A> ir::ValueId canon_id(const A& a, Loc loc) {
  if constexpr (std::is_base_of_v<ValueBase, A>) return a.use(loc);
  else if constexpr (std::is_arithmetic_v<A>) return make_literal<A>(a, loc);
  else return a.id();
}

/// The handle a function's result is returned as (void stays void).
template <class R, class = void> struct result_of { using type = void; };
template <class R> struct result_of<R, std::enable_if_t<std::is_base_of_v<ValueBase, R>>> {
  using type = Value<typename R::element_type>;
};

/// Book-keeping shared by every device function: recursion guard and tracing scaffolding.
class FuncTracing {
 public:
  /// Throws a User error when (name, signature) is already being traced on this thread.
  static void enter(const void* func, const std::string& name, const std::string& signature, Loc loc);
  static void leave();
  /// A new device-function IR with parameters a0.. of `types`.
  static std::shared_ptr<ir::Function> make(const std::string& name, const std::vector<ir::Type>& types, Loc loc);
  /// Emits the Param statement of parameter k of the function being traced.
  static ir::ValueId param(size_t k, Loc loc);
  /// Sets the function's result (the value its body yields).
  static void set_result(ir::ValueId v);
  /// Dead-code elimination and verification of a traced function.
  static void finish(ir::Function& fn);
  /// Emits a call of `fn` in the function being traced now; returns its result (kNoValue for void).
  static ir::ValueId call(const std::shared_ptr<const ir::Function>& fn, std::vector<ir::ValueId> args, Loc loc);
  /// "float32,vec3f": the key of an argument signature.
  static std::string signature(const std::vector<ir::Type>& types);
};

struct NoGrad {};
struct NoReplay {};

}  // namespace detail

/// A device function (see the top of this file); make one with func(name, body).
template <class Body, class Grad = detail::NoGrad, class Replay = detail::NoReplay>
class Func {
 public:
  Func(std::string name, Body body, Grad grad, Replay replay, Loc loc)
      : name_(std::move(name)), body_(std::move(body)), grad_(std::move(grad)), replay_(std::move(replay)),
        loc_(loc), state_(std::make_shared<State>()) {}

  /// The same function with a user-supplied adjoint.
  template <class G>
  Func<Body, G, Replay> grad(G g) const { return Func<Body, G, Replay>(name_, body_, std::move(g), replay_, loc_); }
  /// The same function with a user-supplied replay.
  template <class P>
  Func<Body, Grad, P> replay(P p) const { return Func<Body, Grad, P>(name_, body_, grad_, std::move(p), loc_); }

  /// Calls the function from a kernel (or another device function) being traced.
  template <class... A>
  auto operator()(const A&... args) const {
    using R = typename detail::result_of<decltype(std::declval<const Body&>()(std::declval<detail::canon_t<A>>()...))>::type;
    auto& t = detail::Tracer::get(Loc{});
    Loc loc = t.last_loc();
    std::vector<ir::ValueId> ids{detail::canon_id(args, loc)...};
    std::shared_ptr<const ir::Function> fn = traced<R, detail::canon_t<A>...>(loc);
    ir::ValueId r = detail::FuncTracing::call(fn, std::move(ids), loc);
    if constexpr (!std::is_void_v<R>) return R(detail::BoundTag{}, r);
  }

  const std::string& name() const { return name_; }

 private:
  template <class, class, class> friend class Func;
  struct State {
    std::recursive_mutex mutex;
    std::map<std::string, std::shared_ptr<const ir::Function>> by_signature;
  };

  /// The IR of this function for argument handles H..., traced on first use.
  template <class R, class... H>
  std::shared_ptr<const ir::Function> traced(Loc loc) const {
    std::vector<ir::Type> types{H::ir_type()...};
    const std::string sig = detail::FuncTracing::signature(types);
    detail::FuncTracing::enter(state_.get(), name_, sig, loc);
    struct Leave { ~Leave() { detail::FuncTracing::leave(); } } leave;
    std::lock_guard<std::recursive_mutex> lock(state_->mutex);
    auto it = state_->by_signature.find(sig);
    if (it != state_->by_signature.end()) return it->second;
    auto fn = trace_body<R, H...>(body_, types, loc);
    if constexpr (!std::is_same_v<Grad, detail::NoGrad>) trace_grad<R, H...>(*fn, types, loc);
    if constexpr (!std::is_same_v<Replay, detail::NoReplay>) fn->custom_replay = trace_body<R, H...>(replay_, types, loc);
    detail::FuncTracing::finish(*fn);
    state_->by_signature[sig] = fn;
    return fn;
  }

  // Parameter handles in declaration order (indices, not a counter: the order is explicit).
  template <class... H, size_t... I>
  std::tuple<H...> make_handles(std::index_sequence<I...>) const {
    return std::tuple<H...>{H(detail::BoundTag{}, detail::FuncTracing::param(I, loc_))...};
  }

  template <class R, class... H, class F>
  std::shared_ptr<ir::Function> trace_body(const F& f, const std::vector<ir::Type>& types, Loc loc) const {
    auto fn = detail::FuncTracing::make(name_, types, loc_);
    {
      detail::Tracer tracer(*fn, name_);
      auto handles = make_handles<H...>(std::index_sequence_for<H...>{});
      if constexpr (std::is_void_v<R>) {
        std::apply(f, handles);
      } else {
        R r = std::apply(f, handles);
        detail::FuncTracing::set_result(r.use(loc_));
      }
    }
    detail::FuncTracing::finish(*fn);
    return fn;
  }

  /// Traces the user adjoint: parameters a0.., adj_ret, then the adjoint array of each array
  /// parameter; a zeroed Var per value parameter collects its adjoint.
  template <class R, class... H>
  void trace_grad(ir::Function& fn, const std::vector<ir::Type>& types, Loc loc) const {
    std::vector<ir::Type> gtypes = types;
    if constexpr (!std::is_void_v<R>) gtypes.push_back(R::ir_type());
    for (const ir::Type& t : types)
      if (t.is_array()) gtypes.push_back(t);
    auto g = detail::FuncTracing::make(name_ + "__grad", gtypes, loc_);
    size_t next = types.size();
    if constexpr (!std::is_void_v<R>) g->params[next++].name = "adj_ret";
    for (size_t k = 0; k < types.size(); ++k)
      if (types[k].is_array()) g->params[next++].name = "adj_a" + std::to_string(k);
    {
      detail::Tracer tracer(*g, name_);
      auto handles = make_handles<H...>(std::index_sequence_for<H...>{});
      std::vector<int64_t> out_vars;
      size_t array_param = types.size() + (std::is_void_v<R> ? 0 : 1);
      // A braced list evaluates left to right (function arguments, as in make_tuple, need not):
      // the slots, their out_vars and their array parameters must follow the parameters' order.
      auto slots = std::apply([&](const auto&... h) {
        return std::tuple<decltype(adjoint_slot(h, out_vars, array_param))...>{adjoint_slot(h, out_vars, array_param)...};
      }, handles);
      auto call = [&](auto&... slot) {
        if constexpr (std::is_void_v<R>) {
          std::apply([&](const auto&... h) { grad_(h..., deref(slot)...); }, handles);
        } else {
          R adj_ret(detail::BoundTag{}, detail::FuncTracing::param(types.size(), loc_));
          std::apply([&](const auto&... h) { grad_(h..., adj_ret, deref(slot)...); }, handles);
        }
      };
      std::apply(call, slots);
      fn.out_vars = out_vars;
    }
    detail::FuncTracing::finish(*g);
    fn.custom_adjoint = g;
  }

  // The adjoint slot of an argument: a Var (made in place: copying a Var makes a new one) for
  // a value, the adjoint array for an array.
  template <class T>
  static std::unique_ptr<VarHandle<T>> adjoint_slot(const Value<T>&, std::vector<int64_t>& out_vars, size_t&) {
    auto v = std::make_unique<VarHandle<T>>();
    out_vars.push_back(int64_t(v->lvalue_path()->var));
    return v;
  }
  template <class T, int N>
  static ArrayHandle<T, N> adjoint_slot(const ArrayHandle<T, N>&, std::vector<int64_t>& out_vars, size_t& next) {
    out_vars.push_back(-1);
    return ArrayHandle<T, N>(detail::BoundTag{}, detail::FuncTracing::param(next++, Loc{}));
  }
  template <class T>
  static VarHandle<T>& deref(std::unique_ptr<VarHandle<T>>& v) { return *v; }
  template <class T, int N>
  static ArrayHandle<T, N>& deref(ArrayHandle<T, N>& a) { return a; }

  std::string name_;
  Body body_;
  Grad grad_;
  Replay replay_;
  Loc loc_;
  std::shared_ptr<State> state_;
};

/// A device function named `name` (the name appears in generated code and messages).
template <class Body>
Func<Body> func(std::string name, Body body, Loc loc = Loc::here()) {
  return Func<Body>(std::move(name), std::move(body), detail::NoGrad{}, detail::NoReplay{}, loc);
}

}  // namespace kjit::dsl
