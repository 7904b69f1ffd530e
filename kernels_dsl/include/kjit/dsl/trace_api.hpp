// kjit/dsl/trace_api.hpp — the small non-template API through which the DSL's templates record
// into the active tracer: plain types only (value ids, `const char*` text, pointer + count
// operand lists, function-pointer trampolines for bodies). Defined in kernels_dsl/src, so that
// kernel headers see neither the IR's containers nor the Tracer class.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <utility>

#include "kjit/ir_vocab.hpp"

namespace kjit::dsl {

/// A source location captured at the user's call site through default arguments.
struct Loc {
  const char* file = nullptr;
  int line = 0;
  /// The caller's location: write `Loc loc = Loc::here()` as a defaulted parameter.
  static constexpr Loc here(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return Loc{file, line};
  }
};

namespace detail {

/// A non-owning reference to a callable, called while the referenced object lives (bodies of
/// If, For, While, kernels and device functions run synchronously inside the call that takes
/// them). Lighter than std::function: no allocation, no <functional>.
template <class Sig> class function_ref;
template <class R, class... A>
class function_ref<R(A...)> {
 public:
  template <class F, std::enable_if_t<!std::is_same_v<std::decay_t<F>, function_ref>, int> = 0>
  function_ref(F&& f)  // NOLINT: implicit, as a callable parameter
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* obj, A... a) -> R {
          auto& f = *static_cast<std::remove_reference_t<F>*>(obj);
          if constexpr (std::is_void_v<R>) {
            f(std::forward<A>(a)...);  // a body's own result, if any, is not used
          } else {
            return f(std::forward<A>(a)...);
          }
        }) {}
  R operator()(A... a) const { return call_(obj_, std::forward<A>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};

/// The active tracer's most recent location (where C++ gives no way to capture one, such as
/// operator=); a User error when no kernel is being traced.
Loc last_loc();
/// Throws a User error "<kernel> at <file:line>: <message>" (loc, or the last location).
[[noreturn]] void fail(Loc loc, const char* message);

/// Appends a statement to the open block; returns its result (kNoValue for void).
ir::ValueId emit(ir::Op op, const ir::Type& type, const ir::ValueId* args, size_t count,
                 int64_t imm, Loc loc, uint64_t bits = 0);
inline ir::ValueId emit(ir::Op op, const ir::Type& type, std::initializer_list<ir::ValueId> args,
                        int64_t imm, Loc loc, uint64_t bits = 0) {
  return emit(op, type, args.begin(), args.size(), imm, loc, bits);
}
/// A constant of scalar type `t` from a double or an integer.
ir::ValueId constant_float(const ir::Type& t, double v, Loc loc);
ir::ValueId constant_int(const ir::Type& t, int64_t v, Loc loc);
/// Calls builtin `b`, checking argument types with the builtin's rule; returns the result.
ir::ValueId call_builtin(ir::Builtin b, const ir::ValueId* args, size_t count, Loc loc);
inline ir::ValueId call_builtin(ir::Builtin b, std::initializer_list<ir::ValueId> args, Loc loc) {
  return call_builtin(b, args.begin(), args.size(), loc);
}
/// call_builtin, and an Internal error unless the result has type `expected` (the DSL's
/// signature and the builtin's type rule must agree).
ir::ValueId call_builtin_as(ir::Builtin b, const ir::Type& expected, const ir::ValueId* args,
                            size_t count, Loc loc);
/// The type of value `v` in the function being traced.
ir::Type type_of(ir::ValueId v);
/// Records that the kernel uses an N-dimensional launch index.
void use_launch_dims(int ndim, Loc loc);

// Tracing errors whose messages need formatting (kept out of the templates).
/// A floating literal where an integer DSL type is expected.
[[noreturn]] void fail_float_literal(double v, const ir::Type& t, Loc loc);
/// An integer literal (`bits` two's complement when `is_signed`) that does not fit type `t`.
[[noreturn]] void fail_literal_range(bool is_signed, uint64_t bits, const ir::Type& t, Loc loc);
/// Component `k` of a value of type `t`, which has `lanes` components.
[[noreturn]] void fail_component(int k, int lanes, const ir::Type& t, Loc loc);
/// shape(dim) of an `ndim`-D array.
[[noreturn]] void fail_shape_dim(int dim, int ndim, Loc loc);
/// An atomic with the wrong number of indices for an `ndim`-D array.
[[noreturn]] void fail_atomic_indices(int ndim, Loc loc);

}  // namespace detail
}  // namespace kjit::dsl
