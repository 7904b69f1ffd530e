// kjit/dsl/math.hpp — builtin math functions on DSL values (scalar, vector), each traced as a
// call to the builtin of the same name (see kjit/ir/builtins.def).
#pragma once

#include "kjit/dsl/operators.hpp"

namespace kjit::dsl {

#define KJIT_DSL_FLOAT_UNARY(name, builtin)                                           \
  template <class T, std::enable_if_t<is_float_scalar_v<T>, int> = 0>                 \
  Value<T> name(const Value<T>& x, Loc loc = Loc::here()) {                           \
    return detail::call<T>(ir::Builtin::builtin, loc, x.use(loc));                    \
  }
KJIT_DSL_FLOAT_UNARY(sin, Sin)
KJIT_DSL_FLOAT_UNARY(cos, Cos)
KJIT_DSL_FLOAT_UNARY(tan, Tan)
KJIT_DSL_FLOAT_UNARY(exp, Exp)
KJIT_DSL_FLOAT_UNARY(log, Log)
KJIT_DSL_FLOAT_UNARY(sqrt, Sqrt)
KJIT_DSL_FLOAT_UNARY(floor, Floor)
KJIT_DSL_FLOAT_UNARY(ceil, Ceil)
#undef KJIT_DSL_FLOAT_UNARY

/// x raised to the power y.
template <class T, std::enable_if_t<is_float_scalar_v<T>, int> = 0>
Value<T> pow(const Value<T>& x, detail::same_t<Operand<T>> y) {
  return detail::call<T>(ir::Builtin::Pow, y.loc, x.use(y.loc), y.id);
}

/// |x|, componentwise for vectors.
template <class T, std::enable_if_t<is_numeric_v<T> && !is_matrix_v<T>, int> = 0>
Value<T> abs(const Value<T>& x, Loc loc = Loc::here()) {
  return detail::call<T>(ir::Builtin::Abs, loc, x.use(loc));
}

/// The smaller of a and b (componentwise for vectors).
template <class T, std::enable_if_t<is_numeric_v<T> && !is_matrix_v<T>, int> = 0>
Value<T> min(const Value<T>& a, detail::same_t<Operand<T>> b) {
  return detail::call<T>(ir::Builtin::Min, b.loc, a.use(b.loc), b.id);
}
template <class T, std::enable_if_t<detail::is_numeric_scalar_v<T>, int> = 0>
Value<T> min(detail::same_t<Literal<T>> a, const Value<T>& b) {
  return detail::call<T>(ir::Builtin::Min, a.loc, a.id, b.use(a.loc));
}
/// The larger of a and b (componentwise for vectors).
template <class T, std::enable_if_t<is_numeric_v<T> && !is_matrix_v<T>, int> = 0>
Value<T> max(const Value<T>& a, detail::same_t<Operand<T>> b) {
  return detail::call<T>(ir::Builtin::Max, b.loc, a.use(b.loc), b.id);
}
template <class T, std::enable_if_t<detail::is_numeric_scalar_v<T>, int> = 0>
Value<T> max(detail::same_t<Literal<T>> a, const Value<T>& b) {
  return detail::call<T>(ir::Builtin::Max, a.loc, a.id, b.use(a.loc));
}
/// x limited to [lo, hi].
template <class T, std::enable_if_t<detail::is_numeric_scalar_v<T>, int> = 0>
Value<T> clamp(const Value<T>& x, detail::same_t<Operand<T>> lo, detail::same_t<Operand<T>> hi) {
  return detail::call<T>(ir::Builtin::Clamp, lo.loc, x.use(lo.loc), lo.id, hi.id);
}
/// `cond ? a : b`, evaluated without branching (both sides are computed).
template <class T>
Value<T> where(const Bool& cond, const Value<T>& a, detail::same_t<Operand<T>> b) {
  return detail::call<T>(ir::Builtin::Where, b.loc, cond.use(b.loc), a.use(b.loc), b.id);
}
template <class T, std::enable_if_t<is_scalar_v<T>, int> = 0>
Value<T> where(const Bool& cond, detail::same_t<Literal<T>> a, const Value<T>& b) {
  return detail::call<T>(ir::Builtin::Where, a.loc, cond.use(a.loc), a.id, b.use(a.loc));
}

/// Dot product of two vectors.
template <int N, class S, std::enable_if_t<is_float_scalar_v<S> || is_int_scalar_v<S>, int> = 0>
Value<S> dot(const Value<vec<N, S>>& a, detail::same_t<Operand<vec<N, S>>> b) {
  return detail::call<S>(ir::Builtin::Dot, b.loc, a.use(b.loc), b.id);
}
/// Cross product of two 3-vectors.
template <class S>
Value<vec<3, S>> cross(const Value<vec<3, S>>& a, detail::same_t<Operand<vec<3, S>>> b) {
  return detail::call<vec<3, S>>(ir::Builtin::Cross, b.loc, a.use(b.loc), b.id);
}
/// Euclidean length of a vector.
template <int N, class S, std::enable_if_t<is_float_scalar_v<S>, int> = 0>
Value<S> length(const Value<vec<N, S>>& v, Loc loc = Loc::here()) {
  return detail::call<S>(ir::Builtin::Length, loc, v.use(loc));
}
/// v / length(v), or zero when v is zero.
template <int N, class S, std::enable_if_t<is_float_scalar_v<S>, int> = 0>
Value<vec<N, S>> normalize(const Value<vec<N, S>>& v, Loc loc = Loc::here()) {
  return detail::call<vec<N, S>>(ir::Builtin::Normalize, loc, v.use(loc));
}

/// Converts a value to element type To: `cast<double>(x)` (same as `Double(x)`).
template <class To, class From>
Value<To> cast(const Value<From>& v, Loc loc = Loc::here()) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else {
    return Value<To>(v, loc);
  }
}

}  // namespace kjit::dsl
