// kjit/dsl/math.hpp — scalar math builtins and the basic vector ones (dot, cross, length,
// normalize), each traced as a call to the builtin of the same name (kjit/ir/builtins.def,
// whose regular families this header generates).
#pragma once

#include "kjit/dsl/operators.hpp"
#include "kjit/dsl/preprocessor.hpp"

namespace kjit::dsl {

// The regular families are generated from builtins.def: every ScalarMath builtin whose type
// rule has a form here gets that overload, so that adding one is its record and its prelude
// code. A form's enable_if is its rule's constraint (the rule checks the traced call again,
// with the message; tests/builtins/dsl_surface.cpp calls every builtin through the DSL).
// Other builtins' overloads are written out below and in the other DSL headers.
#define KJIT_DSL_FORM_float_unary(name, builtin)                                      \
  template <class T, std::enable_if_t<is_float_scalar_v<T>, int> = 0>                 \
  Value<T> name(const Value<T>& x, Loc loc = Loc::here()) {                           \
    return detail::call<T>(ir::Builtin::builtin, loc, x.use(loc));                    \
  }
#define KJIT_DSL_FORM_float_binary(name, builtin)                                     \
  template <class T, std::enable_if_t<is_float_scalar_v<T>, int> = 0>                 \
  Value<T> name(const Value<T>& x, detail::same_t<Operand<T>> y) {                     \
    return detail::call<T>(ir::Builtin::builtin, y.loc, x.use(y.loc), y.id);           \
  }                                                                                   \
  template <class T, std::enable_if_t<is_float_scalar_v<T>, int> = 0>                 \
  Value<T> name(detail::same_t<Literal<T>> x, const Value<T>& y) {                     \
    return detail::call<T>(ir::Builtin::builtin, x.loc, x.id, y.use(x.loc));           \
  }
#define KJIT_DSL_FORM_float_classify(name, builtin)                                   \
  template <class T, std::enable_if_t<is_float_scalar_v<T>, int> = 0>                 \
  Bool name(const Value<T>& x, Loc loc = Loc::here()) {                               \
    return detail::call<bool>(ir::Builtin::builtin, loc, x.use(loc));                 \
  }
#define KJIT_DSL_FORM_integer_unary(name, builtin)                                    \
  template <class T, std::enable_if_t<is_int_scalar_v<T>, int> = 0>                   \
  Value<T> name(const Value<T>& x, Loc loc = Loc::here()) {                           \
    return detail::call<T>(ir::Builtin::builtin, loc, x.use(loc));                    \
  }
// Which (category, rule) pairs have a form (the probe below reads 1 for these, 0 otherwise).
#define KJIT_DSL_FORM_OF_ScalarMath_float_unary ~, 1
#define KJIT_DSL_FORM_OF_ScalarMath_float_binary ~, 1
#define KJIT_DSL_FORM_OF_ScalarMath_float_classify ~, 1
#define KJIT_DSL_FORM_OF_ScalarMath_integer_unary ~, 1
#define KJIT_DSL_SECOND(a, b, ...) b
#define KJIT_DSL_PROBE(...) KJIT_DSL_SECOND(__VA_ARGS__, 0, )
#define KJIT_DSL_EMIT_0(rule, name, builtin)
#define KJIT_DSL_EMIT_1(rule, name, builtin) KJIT_DSL_FORM_##rule(name, builtin)
#define KJIT_BUILTIN(E, name, category, rule, ...)                                    \
  KJIT_PP_CAT(KJIT_DSL_EMIT_, KJIT_DSL_PROBE(KJIT_DSL_FORM_OF_##category##_##rule))(rule, name, E)
#include "kjit/ir/builtins.def"
#undef KJIT_DSL_EMIT_1
#undef KJIT_DSL_EMIT_0
#undef KJIT_DSL_PROBE
#undef KJIT_DSL_SECOND
#undef KJIT_DSL_FORM_OF_ScalarMath_integer_unary
#undef KJIT_DSL_FORM_OF_ScalarMath_float_classify
#undef KJIT_DSL_FORM_OF_ScalarMath_float_binary
#undef KJIT_DSL_FORM_OF_ScalarMath_float_unary
#undef KJIT_DSL_FORM_integer_unary
#undef KJIT_DSL_FORM_float_classify
#undef KJIT_DSL_FORM_float_binary
#undef KJIT_DSL_FORM_float_unary

/// -1 where x < 0, else 1 (componentwise on vectors).
template <class T, std::enable_if_t<detail::is_numeric_scalar_v<T> || (is_vector_v<T> && is_numeric_v<T>), int> = 0>
Value<T> sign(const Value<T>& x, Loc loc = Loc::here()) {
  return detail::call<T>(ir::Builtin::Sign, loc, x.use(loc));
}
/// 1 where x < 0, else 0 (Warp's step).
template <class T, std::enable_if_t<detail::is_numeric_scalar_v<T>, int> = 0>
Value<T> step(const Value<T>& x, Loc loc = Loc::here()) {
  return detail::call<T>(ir::Builtin::Step, loc, x.use(loc));
}
/// 1 where x != 0, else 0.
template <class T, std::enable_if_t<detail::is_numeric_scalar_v<T>, int> = 0>
Value<T> nonzero(const Value<T>& x, Loc loc = Loc::here()) {
  return detail::call<T>(ir::Builtin::Nonzero, loc, x.use(loc));
}
/// Division rounded toward negative infinity (Python's //), for integers and floats.
template <class T, std::enable_if_t<detail::is_numeric_scalar_v<T>, int> = 0>
Value<T> floordiv(const Value<T>& a, detail::same_t<Operand<T>> b) {
  return detail::call<T>(ir::Builtin::FloorDiv, b.loc, a.use(b.loc), b.id);
}
/// a / b with CUDA's fast approximate float division (exact elsewhere).
template <class T, std::enable_if_t<is_floating_v<T>, int> = 0>
Value<T> div_approx(const Value<T>& a, detail::same_t<Operand<scalar_of_t<T>>> b) {
  return detail::call<T>(ir::Builtin::DivApprox, b.loc, a.use(b.loc), b.id);
}

/// |x|, componentwise for vectors.
template <class T, std::enable_if_t<is_numeric_v<T> && !is_matrix_v<T>, int> = 0>
Value<T> abs(const Value<T>& x, Loc loc = Loc::here()) {
  return detail::call<T>(ir::Builtin::Abs, loc, x.use(loc));
}

/// The smallest component of a vector.
template <int N, class S, std::enable_if_t<is_numeric_v<S>, int> = 0>
Value<S> min(const Value<vec<N, S>>& v, Loc loc = Loc::here()) {
  return detail::call<S>(ir::Builtin::Min, loc, v.use(loc));
}
/// The largest component of a vector.
template <int N, class S, std::enable_if_t<is_numeric_v<S>, int> = 0>
Value<S> max(const Value<vec<N, S>>& v, Loc loc = Loc::here()) {
  return detail::call<S>(ir::Builtin::Max, loc, v.use(loc));
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

/// Dot product of two vectors (or two quaternions).
template <int N, class S, std::enable_if_t<is_float_scalar_v<S> || is_int_scalar_v<S>, int> = 0>
Value<S> dot(const Value<vec<N, S>>& a, detail::same_t<Operand<vec<N, S>>> b) {
  return detail::call<S>(ir::Builtin::Dot, b.loc, a.use(b.loc), b.id);
}
template <class S>
Value<S> dot(const Value<quat<S>>& a, detail::same_t<Operand<quat<S>>> b) {
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
/// The length and the unit quaternion of a quaternion.
template <class S, std::enable_if_t<is_float_scalar_v<S>, int> = 0>
Value<S> length(const Value<quat<S>>& q, Loc loc = Loc::here()) {
  return detail::call<S>(ir::Builtin::Length, loc, q.use(loc));
}
template <class S, std::enable_if_t<is_float_scalar_v<S>, int> = 0>
Value<S> length_sq(const Value<quat<S>>& q, Loc loc = Loc::here()) {
  return detail::call<S>(ir::Builtin::LengthSq, loc, q.use(loc));
}
template <class S, std::enable_if_t<is_float_scalar_v<S>, int> = 0>
Value<quat<S>> normalize(const Value<quat<S>>& q, Loc loc = Loc::here()) {
  return detail::call<quat<S>>(ir::Builtin::Normalize, loc, q.use(loc));
}

/// Converts a value to element type To: `cast<double>(x)` (same as `Double(x)`).
template <class To, class From, std::enable_if_t<is_scalar_v<From>, int> = 0>
Value<To> cast(const Value<From>& v, Loc loc = Loc::here()) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else {
    return Value<To>(v, loc);
  }
}

namespace detail {
/// The same kind of value over scalar To (vec<3, double> for vec<3, float>).
template <class T, class To> struct with_scalar;
template <int N, class S, class To> struct with_scalar<vec<N, S>, To> { using type = vec<N, To>; };
template <int R, int C, class S, class To> struct with_scalar<mat<R, C, S>, To> { using type = mat<R, C, To>; };
template <class S, class To> struct with_scalar<quat<S>, To> { using type = quat<To>; };
template <class S, class To> struct with_scalar<transform<S>, To> { using type = transform<To>; };
}  // namespace detail

/// Converts each component of a vector, matrix, quaternion or transform to scalar type To:
/// `cast<double>(v)` turns a Vec3f into a Vec3d.
template <class To, class From, std::enable_if_t<!is_scalar_v<From> && !is_struct_v<From>, int> = 0>
Value<typename detail::with_scalar<From, To>::type> cast(const Value<From>& v, Loc loc = Loc::here()) {
  using R = typename detail::with_scalar<From, To>::type;
  return detail::wrap<R>(detail::emit(ir::Op::Cast, ir_type_of<R>(), {v.use(loc)}, 0, loc));
}

}  // namespace kjit::dsl
