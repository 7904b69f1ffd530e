// kjit/dsl/operators.hpp — C++ operators on DSL values: arithmetic, broadcasting, comparisons,
// logic, bit operations, and the compound assignments of Var<T>.
#pragma once

#include "kjit/dsl/diagnostics.hpp"
#include "kjit/dsl/var.hpp"

namespace kjit::dsl {

namespace detail {
template <class T> constexpr bool is_nonscalar_numeric_v = is_numeric_v<T> && !is_scalar_v<T>;
template <class T> constexpr bool is_numeric_scalar_v = is_scalar_v<T> && is_numeric_v<T>;
template <class T> constexpr bool is_int_like_v = is_int_scalar_v<T>;
}  // namespace detail

// Same-type binary operators: `a OP b` and `literal OP b`. The right operand (or the left
// literal) carries the expression's source location.
#define KJIT_DSL_SAME_TYPE_OP(op, builtin, Result, condition)                                 \
  template <class T, std::enable_if_t<condition, int> = 0>                                  \
  Value<Result> operator op(const Value<T>& a, detail::same_t<Operand<T>> b) {              \
    return detail::call<Result>(ir::Builtin::builtin, b.loc, a.use(b.loc), b.id);          \
  }                                                                                         \
  template <class T, std::enable_if_t<condition, int> = 0>                                  \
  Value<Result> operator op(detail::same_t<Literal<T>> a, const Value<T>& b) {              \
    return detail::call<Result>(ir::Builtin::builtin, a.loc, a.id, b.use(a.loc));          \
  }

KJIT_DSL_SAME_TYPE_OP(+, Add, T, is_numeric_v<T>)
KJIT_DSL_SAME_TYPE_OP(-, Sub, T, is_numeric_v<T>)
KJIT_DSL_SAME_TYPE_OP(*, Mul, T, detail::is_numeric_scalar_v<T>)
KJIT_DSL_SAME_TYPE_OP(/, Div, T, detail::is_numeric_scalar_v<T>)
KJIT_DSL_SAME_TYPE_OP(%, Mod, T, detail::is_numeric_scalar_v<T>)
KJIT_DSL_SAME_TYPE_OP(&, BitAnd, T, detail::is_int_like_v<T>)
KJIT_DSL_SAME_TYPE_OP(|, BitOr, T, detail::is_int_like_v<T>)
KJIT_DSL_SAME_TYPE_OP(^, BitXor, T, detail::is_int_like_v<T>)
KJIT_DSL_SAME_TYPE_OP(<<, LShift, T, detail::is_int_like_v<T>)
KJIT_DSL_SAME_TYPE_OP(>>, RShift, T, detail::is_int_like_v<T>)
KJIT_DSL_SAME_TYPE_OP(<, Lt, bool, detail::is_numeric_scalar_v<T>)
KJIT_DSL_SAME_TYPE_OP(<=, Le, bool, detail::is_numeric_scalar_v<T>)
KJIT_DSL_SAME_TYPE_OP(>, Gt, bool, detail::is_numeric_scalar_v<T>)
KJIT_DSL_SAME_TYPE_OP(>=, Ge, bool, detail::is_numeric_scalar_v<T>)
KJIT_DSL_SAME_TYPE_OP(==, Eq, bool, type_traits<T>::known)
KJIT_DSL_SAME_TYPE_OP(!=, Ne, bool, type_traits<T>::known)
KJIT_DSL_SAME_TYPE_OP(&&, LogicalAnd, bool, (std::is_same_v<T, bool>))
KJIT_DSL_SAME_TYPE_OP(||, LogicalOr, bool, (std::is_same_v<T, bool>))
#undef KJIT_DSL_SAME_TYPE_OP

// Broadcasting: vector/matrix/quaternion times or divided by a scalar, scalar times one.
template <class X, std::enable_if_t<detail::is_nonscalar_numeric_v<X>, int> = 0>
Value<X> operator*(const Value<X>& a, detail::same_t<Operand<scalar_of_t<X>>> s) {
  return detail::call<X>(ir::Builtin::Mul, s.loc, a.use(s.loc), s.id);
}
template <class X, std::enable_if_t<detail::is_nonscalar_numeric_v<X>, int> = 0>
Value<X> operator*(detail::same_t<Operand<scalar_of_t<X>>> s, const Value<X>& a) {
  return detail::call<X>(ir::Builtin::Mul, s.loc, s.id, a.use(s.loc));
}
template <class X, std::enable_if_t<detail::is_nonscalar_numeric_v<X>, int> = 0>
Value<X> operator/(const Value<X>& a, detail::same_t<Operand<scalar_of_t<X>>> s) {
  return detail::call<X>(ir::Builtin::Div, s.loc, a.use(s.loc), s.id);
}

// Linear algebra products: matrix x vector, vector x matrix, matrix x matrix.
template <int R, int C, class S>
Value<vec<R, S>> operator*(const Value<mat<R, C, S>>& m, detail::same_t<Operand<vec<C, S>>> v) {
  return detail::call<vec<R, S>>(ir::Builtin::Mul, v.loc, m.use(v.loc), v.id);
}
// Vector x matrix: C cannot be deduced through Operand's conversion, so one overload per
// column count keeps the operand's location (R and S come from the vector).
#define KJIT_DSL_VEC_MAT(C)                                                                  \
  template <int R, class S>                                                                  \
  Value<vec<C, S>> operator*(const Value<vec<R, S>>& v, detail::same_t<Operand<mat<R, C, S>>> m) { \
    return detail::call<vec<C, S>>(ir::Builtin::Mul, m.loc, v.use(m.loc), m.id);             \
  }
KJIT_DSL_VEC_MAT(1)
KJIT_DSL_VEC_MAT(2)
KJIT_DSL_VEC_MAT(3)
KJIT_DSL_VEC_MAT(4)
KJIT_DSL_VEC_MAT(5)
KJIT_DSL_VEC_MAT(6)
#undef KJIT_DSL_VEC_MAT
template <int R, int C, int K, class S>
Value<mat<R, K, S>> operator*(const Value<mat<R, C, S>>& a, const Value<mat<C, K, S>>& b) {
  Loc loc = detail::last_loc();
  return detail::call<mat<R, K, S>>(ir::Builtin::Mul, loc, a.use(loc), b.use(loc));
}

// The Hamilton product of quaternions and the composition of transforms (b first, then a).
template <class S>
Value<quat<S>> operator*(const Value<quat<S>>& a, detail::same_t<Operand<quat<S>>> b) {
  return detail::call<quat<S>>(ir::Builtin::Mul, b.loc, a.use(b.loc), b.id);
}
template <class S>
Value<transform<S>> operator*(const Value<transform<S>>& a, detail::same_t<Operand<transform<S>>> b) {
  return detail::call<transform<S>>(ir::Builtin::Mul, b.loc, a.use(b.loc), b.id);
}

// Unary operators.
template <class T, std::enable_if_t<is_numeric_v<T>, int> = 0>
Value<T> operator-(const Value<T>& a) {
  Loc loc = detail::last_loc();
  return detail::call<T>(ir::Builtin::Neg, loc, a.use(loc));
}
template <class T, std::enable_if_t<is_numeric_v<T>, int> = 0>
Value<T> operator+(const Value<T>& a) {
  Loc loc = detail::last_loc();
  return detail::call<T>(ir::Builtin::Pos, loc, a.use(loc));
}
inline Bool operator!(const Bool& a) {
  Loc loc = detail::last_loc();
  return detail::call<bool>(ir::Builtin::Unot, loc, a.use(loc));
}
template <class T, std::enable_if_t<is_int_scalar_v<T>, int> = 0>
Value<T> operator~(const Value<T>& a) {
  Loc loc = detail::last_loc();
  return detail::call<T>(ir::Builtin::Invert, loc, a.use(loc));
}

// Mixed element types are a compile-time error with kjit's message (the first error: see
// diagnostics.hpp), not a silent conversion and not a list of failed overloads.
namespace detail {
template <class A, class B>
constexpr bool mixed_scalars_v = !std::is_same_v<A, B> && is_scalar_v<A> && is_scalar_v<B>;
/// A vector (matrix, ...) and a scalar of another element type: `v * x` with Vec3f and Double.
template <class X, class S>
constexpr bool mixed_broadcast_v = is_nonscalar_numeric_v<X> && is_scalar_v<S> && !std::is_same_v<scalar_of_t<X>, S>;
/// Two non-scalars of different element types, or a non-scalar and any scalar (for + and -).
template <class A, class B>
constexpr bool mixed_additive_v = !std::is_same_v<A, B> && !(is_scalar_v<A> && is_scalar_v<B>) &&
                                  type_traits<A>::known && type_traits<B>::known;
}  // namespace detail

#define KJIT_DSL_MIXED_OP(op, code)                                                          \
  template <class A, class B, std::enable_if_t<detail::mixed_scalars_v<A, B>, int> = 0>      \
  detail::MixedOperands<code, A, B> operator op(const Value<A>&, const Value<B>&);
KJIT_DSL_MIXED_OP(+, '+')
KJIT_DSL_MIXED_OP(-, '-')
KJIT_DSL_MIXED_OP(*, '*')
KJIT_DSL_MIXED_OP(/, '/')
KJIT_DSL_MIXED_OP(%, '%')
KJIT_DSL_MIXED_OP(<, '<')
KJIT_DSL_MIXED_OP(<=, 'l')
KJIT_DSL_MIXED_OP(>, '>')
KJIT_DSL_MIXED_OP(>=, 'g')
KJIT_DSL_MIXED_OP(==, '=')
KJIT_DSL_MIXED_OP(!=, '!')
#undef KJIT_DSL_MIXED_OP
template <class X, class S, std::enable_if_t<detail::mixed_broadcast_v<X, S>, int> = 0>
detail::MixedOperands<'*', X, S> operator*(const Value<X>&, const Value<S>&);
template <class X, class S, std::enable_if_t<detail::mixed_broadcast_v<X, S>, int> = 0>
detail::MixedOperands<'*', S, X> operator*(const Value<S>&, const Value<X>&);
template <class X, class S, std::enable_if_t<detail::mixed_broadcast_v<X, S>, int> = 0>
detail::MixedOperands<'/', X, S> operator/(const Value<X>&, const Value<S>&);
template <class A, class B, std::enable_if_t<detail::mixed_additive_v<A, B>, int> = 0>
std::conditional_t<is_scalar_v<A> || is_scalar_v<B>, detail::AddScalarToVector<A, B>, detail::MixedOperands<'+', A, B>>
operator+(const Value<A>&, const Value<B>&);
template <class A, class B, std::enable_if_t<detail::mixed_additive_v<A, B>, int> = 0>
std::conditional_t<is_scalar_v<A> || is_scalar_v<B>, detail::AddScalarToVector<A, B>, detail::MixedOperands<'-', A, B>>
operator-(const Value<A>&, const Value<B>&);

// Compound assignment on Var<T>: `w += x` stores `w + x`.
#define KJIT_DSL_COMPOUND(op, builtin, Rhs, condition)                                     \
  template <class T, std::enable_if_t<condition, int> = 0>                                \
  VarHandle<T>& operator op(VarHandle<T>& w, detail::same_t<Operand<Rhs>> b) {                        \
    w = detail::call<T>(ir::Builtin::builtin, b.loc, w.use(b.loc), b.id);                 \
    return w;                                                                             \
  }
KJIT_DSL_COMPOUND(+=, Add, T, is_numeric_v<T>)
KJIT_DSL_COMPOUND(-=, Sub, T, is_numeric_v<T>)
KJIT_DSL_COMPOUND(*=, Mul, T, detail::is_numeric_scalar_v<T>)
KJIT_DSL_COMPOUND(/=, Div, T, detail::is_numeric_scalar_v<T>)
KJIT_DSL_COMPOUND(%=, Mod, T, detail::is_numeric_scalar_v<T>)
KJIT_DSL_COMPOUND(*=, Mul, scalar_of_t<T>, detail::is_nonscalar_numeric_v<T>)
KJIT_DSL_COMPOUND(/=, Div, scalar_of_t<T>, detail::is_nonscalar_numeric_v<T>)
#undef KJIT_DSL_COMPOUND

// `a += x` on a plain value, or with a right side of another element type: kjit's advice as
// the first error (see diagnostics.hpp) instead of every candidate that failed.
namespace detail {
template <class H> struct is_plain_handle : std::false_type {};
template <class T> struct is_plain_handle<Value<T>> : std::true_type {};
template <class T> struct is_plain_handle<Ref<T>> : std::true_type {};
template <class H> constexpr bool is_plain_handle_v = is_plain_handle<std::remove_const_t<H>>::value;
/// Whether `w OP= b` has no overload on a Var<T>: b is not a T (nor, for * and / on a
/// vector or matrix, its scalar).
template <class T, class B, bool Scales>
constexpr bool var_rhs_mismatch_v =
    !std::is_convertible_v<const B&, Operand<T>> &&
    !(Scales && is_nonscalar_numeric_v<T> && std::is_convertible_v<const B&, Operand<scalar_of_t<T>>>);
}  // namespace detail
#define KJIT_DSL_COMPOUND_ADVICE(op, code, scales)                                           \
  template <class H, class B, std::enable_if_t<detail::is_plain_handle_v<H>, int> = 0>        \
  detail::CompoundNeedsVar<code, H, B> operator op(H&, const B&);                            \
  template <class T, class B, std::enable_if_t<detail::var_rhs_mismatch_v<T, B, scales>, int> = 0> \
  detail::CompoundMixedTypes<code, T, B> operator op(VarHandle<T>&, const B&);
KJIT_DSL_COMPOUND_ADVICE(+=, '+', false)
KJIT_DSL_COMPOUND_ADVICE(-=, '-', false)
KJIT_DSL_COMPOUND_ADVICE(*=, '*', true)
KJIT_DSL_COMPOUND_ADVICE(/=, '/', true)
KJIT_DSL_COMPOUND_ADVICE(%=, '%', false)
#undef KJIT_DSL_COMPOUND_ADVICE

}  // namespace kjit::dsl
