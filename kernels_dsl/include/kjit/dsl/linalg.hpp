// kjit/dsl/linalg.hpp — vector and matrix builtins (norms, componentwise products, outer,
// transpose, determinant, inverse, decompositions, constructors), each traced as a call to
// the builtin of Warp's name (kjit/ir/builtins.def).
#pragma once

#include "kjit/dsl/math.hpp"
#include "kjit/dsl/tuple.hpp"

namespace kjit::dsl {

namespace detail {
/// The value of field `k` of a struct-typed IR value, as element type F.
template <class F>
Value<F> field_of(ir::ValueId v, int k, Loc loc) {
  PathStep step;
  step.kind = PathStep::Field;
  step.field = k;
  return wrap<F>(extract_step(v, step, loc));
}
}  // namespace detail

#define KJIT_DSL_VEC_TO_SCALAR(name, builtin)                                          \
  template <int N, class S, std::enable_if_t<is_float_scalar_v<S>, int> = 0>            \
  Value<S> name(const Value<vec<N, S>>& v, Loc loc = Loc::here()) {                    \
    return detail::call<S>(ir::Builtin::builtin, loc, v.use(loc));                     \
  }
/// |v|^2.
KJIT_DSL_VEC_TO_SCALAR(length_sq, LengthSq)
/// Sum of |components|.
KJIT_DSL_VEC_TO_SCALAR(norm_l1, NormL1)
/// Euclidean norm (same as length).
KJIT_DSL_VEC_TO_SCALAR(norm_l2, NormL2)
#undef KJIT_DSL_VEC_TO_SCALAR

#define KJIT_DSL_VEC_DELTA(name, builtin, ...)                                                  \
  template <int N, class S, std::enable_if_t<is_float_scalar_v<S>, int> = 0>                     \
  Value<__VA_ARGS__> name(const Value<vec<N, S>>& v, detail::same_t<Operand<S>> delta) {        \
    return detail::call<__VA_ARGS__>(ir::Builtin::builtin, delta.loc, v.use(delta.loc), delta.id); \
  }                                                                                             \
  template <int N, class S, std::enable_if_t<is_float_scalar_v<S>, int> = 0>                     \
  Value<__VA_ARGS__> name(const Value<vec<N, S>>& v, Loc loc = Loc::here()) {                   \
    return name(v, detail::same_t<Operand<S>>(1.0, loc));                                       \
  }
/// Huber norm: |v|^2 / 2 inside delta (default 1), delta (|v| - delta / 2) outside.
KJIT_DSL_VEC_DELTA(norm_huber, NormHuber, S)
/// Pseudo-Huber norm: delta sqrt(1 + |v|^2 / delta^2).
KJIT_DSL_VEC_DELTA(norm_pseudo_huber, NormPseudoHuber, S)
/// v / norm_pseudo_huber(v, delta): a normalisation that is smooth at zero.
KJIT_DSL_VEC_DELTA(smooth_normalize, SmoothNormalize, vec<N, S>)
#undef KJIT_DSL_VEC_DELTA

/// Componentwise product and quotient of two vectors or two matrices.
template <class T, std::enable_if_t<(is_vector_v<T> || is_matrix_v<T>) && is_numeric_v<T>, int> = 0>
Value<T> cw_mul(const Value<T>& a, detail::same_t<Operand<T>> b) { return detail::call<T>(ir::Builtin::CwMul, b.loc, a.use(b.loc), b.id); }
template <class T, std::enable_if_t<(is_vector_v<T> || is_matrix_v<T>) && is_numeric_v<T>, int> = 0>
Value<T> cw_div(const Value<T>& a, detail::same_t<Operand<T>> b) { return detail::call<T>(ir::Builtin::CwDiv, b.loc, a.use(b.loc), b.id); }

/// The outer product a b^T.
template <int R, int C, class S>
Value<mat<R, C, S>> outer(const Value<vec<R, S>>& a, const Value<vec<C, S>>& b, Loc loc = Loc::here()) {
  return detail::call<mat<R, C, S>>(ir::Builtin::Outer, loc, a.use(loc), b.use(loc));
}
/// The index of the smallest / largest component (the first on ties).
template <int N, class S>
UInt32 argmin(const Value<vec<N, S>>& v, Loc loc = Loc::here()) { return detail::call<uint32_t>(ir::Builtin::Argmin, loc, v.use(loc)); }
template <int N, class S>
UInt32 argmax(const Value<vec<N, S>>& v, Loc loc = Loc::here()) { return detail::call<uint32_t>(ir::Builtin::Argmax, loc, v.use(loc)); }

/// A vector from its components: `vector(x, y, z)` (the scalar type of the first).
template <class S, class... A, std::enable_if_t<is_scalar_v<S>, int> = 0>
Value<vec<1 + sizeof...(A), S>> vector(const Value<S>& first, const A&... rest) {
  return Value<vec<1 + sizeof...(A), S>>(first, rest...);
}
/// A matrix from its components in row-major order: `matrix<2, 2>(a, b, c, d)`.
template <int R, int C, class S, class... A>
Value<mat<R, C, S>> matrix(const Value<S>& first, const A&... rest) {
  static_assert(1 + sizeof...(A) == R * C, "kjit: matrix<R, C>(...) takes R * C components");
  return Value<mat<R, C, S>>(first, rest...);
}
/// The N x N identity matrix: `identity<3, float>()`.
template <int N, class S = float>
Value<mat<N, N, S>> identity(Loc loc = Loc::here()) {
  ir::ValueId zero = detail::make_literal<S>(0, loc), one = detail::make_literal<S>(1, loc);
  ir::ValueId c[N * N];
  for (int i = 0; i < N * N; ++i) c[i] = i % (N + 1) == 0 ? one : zero;
  return detail::wrap<mat<N, N, S>>(detail::emit(ir::Op::Construct, ir_type_of<mat<N, N, S>>(), c, N * N, 0, loc));
}

/// The transpose.
template <int R, int C, class S>
Value<mat<C, R, S>> transpose(const Value<mat<R, C, S>>& m, Loc loc = Loc::here()) {
  return detail::call<mat<C, R, S>>(ir::Builtin::Transpose, loc, m.use(loc));
}
#define KJIT_DSL_SQUARE(name, builtin, ...)                                        \
  template <int N, class S>                                                         \
  Value<__VA_ARGS__> name(const Value<mat<N, N, S>>& m, Loc loc = Loc::here()) {    \
    return detail::call<__VA_ARGS__>(ir::Builtin::builtin, loc, m.use(loc));       \
  }
/// Sum of the diagonal.
KJIT_DSL_SQUARE(trace, Trace, S)
/// The determinant (2x2, 3x3, 4x4).
KJIT_DSL_SQUARE(determinant, Determinant, S)
/// The inverse (2x2, 3x3, 4x4); zeros for a singular matrix.
KJIT_DSL_SQUARE(inverse, Inverse, mat<N, N, S>)
/// The inverse computed with the fast approximate division on CUDA.
KJIT_DSL_SQUARE(inverse_approx, InverseApprox, mat<N, N, S>)
/// The diagonal as a vector.
KJIT_DSL_SQUARE(get_diag, GetDiag, vec<N, S>)
#undef KJIT_DSL_SQUARE
/// The diagonal matrix with v on its diagonal.
template <int N, class S>
Value<mat<N, N, S>> diag(const Value<vec<N, S>>& v, Loc loc = Loc::here()) { return detail::call<mat<N, N, S>>(ir::Builtin::Diag, loc, v.use(loc)); }
/// The sum of the componentwise products of two matrices.
template <int R, int C, class S>
Value<S> ddot(const Value<mat<R, C, S>>& a, detail::same_t<Operand<mat<R, C, S>>> b) { return detail::call<S>(ir::Builtin::Ddot, b.loc, a.use(b.loc), b.id); }
/// The cross-product matrix of a 3-vector: skew(a) * b == cross(a, b).
template <class S>
Value<mat<3, 3, S>> skew(const Value<vec<3, S>>& a, Loc loc = Loc::here()) { return detail::call<mat<3, 3, S>>(ir::Builtin::Skew, loc, a.use(loc)); }

/// A matrix whose columns (rows) are the given 2 to 4 vectors.
template <int N, class S, class... V>
Value<mat<N, 1 + sizeof...(V), S>> matrix_from_cols(const Value<vec<N, S>>& first, const V&... rest) {
  static_assert(sizeof...(V) >= 1 && sizeof...(V) <= 3, "kjit: matrix_from_cols takes 2 to 4 vectors");
  Loc loc = detail::last_loc();
  return detail::wrap<mat<N, 1 + sizeof...(V), S>>(
      detail::call_builtin(ir::Builtin::MatrixFromCols, {first.use(loc), Operand<vec<N, S>>(rest, loc).id...}, loc));
}
template <int N, class S, class... V>
Value<mat<1 + sizeof...(V), N, S>> matrix_from_rows(const Value<vec<N, S>>& first, const V&... rest) {
  static_assert(sizeof...(V) >= 1 && sizeof...(V) <= 3, "kjit: matrix_from_rows takes 2 to 4 vectors");
  Loc loc = detail::last_loc();
  return detail::wrap<mat<1 + sizeof...(V), N, S>>(
      detail::call_builtin(ir::Builtin::MatrixFromRows, {first.use(loc), Operand<vec<N, S>>(rest, loc).id...}, loc));
}

// Decompositions: Warp's out-parameter form (Vars receive the factors) and a tuple form for
// structured bindings: `auto [U, sigma, V] = svd3(A);`.
/// A = U diag(sigma) V^T, sigma descending and non-negative.
template <class S>
Tuple<Value<mat<3, 3, S>>, Value<vec<3, S>>, Value<mat<3, 3, S>>> svd3(const Value<mat<3, 3, S>>& a, Loc loc = Loc::here()) {
  ir::ValueId r = detail::call_builtin(ir::Builtin::Svd3, {a.use(loc)}, loc);
  return {detail::field_of<mat<3, 3, S>>(r, 0, loc), detail::field_of<vec<3, S>>(r, 1, loc), detail::field_of<mat<3, 3, S>>(r, 2, loc)};
}
template <class S>
void svd3(const Value<mat<3, 3, S>>& a, VarHandle<mat<3, 3, S>>& U, VarHandle<vec<3, S>>& sigma, VarHandle<mat<3, 3, S>>& V,
          Loc loc = Loc::here()) {
  auto [u, s, v] = svd3(a, loc);
  U = u, sigma = s, V = v;
}
template <class S>
Tuple<Value<mat<2, 2, S>>, Value<vec<2, S>>, Value<mat<2, 2, S>>> svd2(const Value<mat<2, 2, S>>& a, Loc loc = Loc::here()) {
  ir::ValueId r = detail::call_builtin(ir::Builtin::Svd2, {a.use(loc)}, loc);
  return {detail::field_of<mat<2, 2, S>>(r, 0, loc), detail::field_of<vec<2, S>>(r, 1, loc), detail::field_of<mat<2, 2, S>>(r, 2, loc)};
}
template <class S>
void svd2(const Value<mat<2, 2, S>>& a, VarHandle<mat<2, 2, S>>& U, VarHandle<vec<2, S>>& sigma, VarHandle<mat<2, 2, S>>& V,
          Loc loc = Loc::here()) {
  auto [u, s, v] = svd2(a, loc);
  U = u, sigma = s, V = v;
}
/// A = Q R, Q orthogonal, R upper triangular with a non-negative diagonal.
template <class S>
Tuple<Value<mat<3, 3, S>>, Value<mat<3, 3, S>>> qr3(const Value<mat<3, 3, S>>& a, Loc loc = Loc::here()) {
  ir::ValueId r = detail::call_builtin(ir::Builtin::Qr3, {a.use(loc)}, loc);
  return {detail::field_of<mat<3, 3, S>>(r, 0, loc), detail::field_of<mat<3, 3, S>>(r, 1, loc)};
}
template <class S>
void qr3(const Value<mat<3, 3, S>>& a, VarHandle<mat<3, 3, S>>& Q, VarHandle<mat<3, 3, S>>& R, Loc loc = Loc::here()) {
  auto [q, r] = qr3(a, loc);
  Q = q, R = r;
}
/// A symmetric A = Q diag(d) Q^T, d ascending.
template <class S>
Tuple<Value<mat<3, 3, S>>, Value<vec<3, S>>> eig3(const Value<mat<3, 3, S>>& a, Loc loc = Loc::here()) {
  ir::ValueId r = detail::call_builtin(ir::Builtin::Eig3, {a.use(loc)}, loc);
  return {detail::field_of<mat<3, 3, S>>(r, 0, loc), detail::field_of<vec<3, S>>(r, 1, loc)};
}
template <class S>
void eig3(const Value<mat<3, 3, S>>& a, VarHandle<mat<3, 3, S>>& Q, VarHandle<vec<3, S>>& d, Loc loc = Loc::here()) {
  auto [q, e] = eig3(a, loc);
  Q = q, d = e;
}

}  // namespace kjit::dsl
