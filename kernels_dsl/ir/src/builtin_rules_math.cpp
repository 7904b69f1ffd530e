// Type rules of the scalar, vector and matrix builtins (see builtins.def).
#include <cstring>

#include "builtin_rules.hpp"

namespace kjit::ir::rules {

namespace {
bool is(const char* fn, const char* name) { return std::strcmp(fn, name) == 0; }
}  // namespace

KJIT_RULE(float_unary) {
  if (n == 1 && float_scalar(a[0])) return a[0];
  return fail(error, fn, "one floating-point scalar", a, n);
}

KJIT_RULE(float_binary) {
  if (n == 2 && float_scalar(a[0]) && a[0] == a[1]) return a[0];
  return fail(error, fn, "two floating-point scalars of the same type", a, n);
}

KJIT_RULE(float_classify) {
  if (n == 1 && float_scalar(a[0])) return bool_type();
  return fail(error, fn, "one floating-point scalar", a, n);
}

KJIT_RULE(numeric_scalar_unary) {
  if (n == 1 && numeric_scalar(a[0])) return a[0];
  return fail(error, fn, "one numeric scalar", a, n);
}

KJIT_RULE(numeric_scalar_or_vector) {
  if (n == 1 && numeric(a[0]) && (a[0].is_scalar() || a[0].is_vector())) return a[0];
  return fail(error, fn, "one numeric scalar or vector", a, n);
}

KJIT_RULE(min_max) {
  if (n == 2 && numeric(a[0]) && (a[0].is_scalar() || a[0].is_vector()) && a[0] == a[1]) return a[0];
  if (n == 1 && numeric(a[0]) && a[0].is_vector()) return scalar_like(a[0]);  // smallest component
  return fail(error, fn, "two numeric scalars or vectors of the same type, or one vector", a, n);
}

KJIT_RULE(numeric_same_ternary) {
  if (n == 3 && numeric_scalar(a[0]) && a[0] == a[1] && a[0] == a[2]) return a[0];
  return fail(error, fn, "three numeric scalars of the same type", a, n);
}

KJIT_RULE(dot) {
  if (n == 2 && numeric(a[0]) && (a[0].is_vector() || a[0].shape == Shape::Quat) && a[0] == a[1])
    return scalar_like(a[0]);
  return fail(error, fn, "two vectors (or quaternions) of the same type", a, n);
}

KJIT_RULE(cross) {
  if (n == 2 && numeric(a[0]) && a[0].is_vector() && a[0].rows == 3 && a[0] == a[1]) return a[0];
  return fail(error, fn, "two 3-vectors of the same type", a, n);
}

KJIT_RULE(float_vector_norm) {
  bool q = a[0].shape == Shape::Quat && !a[0].is_array() && a[0].is_float();
  bool quat_ok = is(fn, "length") || is(fn, "length_sq");
  if (n == 1 && (float_vector(a[0]) || (q && quat_ok))) return scalar_like(a[0]);
  return fail(error, fn, quat_ok ? "one floating-point vector or quaternion" : "one floating-point vector", a, n);
}

KJIT_RULE(float_vector_unary) {
  if (n == 1 && (float_vector(a[0]) || (a[0].shape == Shape::Quat && !a[0].is_array() && a[0].is_float())))
    return a[0];
  return fail(error, fn, "one floating-point vector or quaternion", a, n);
}

KJIT_RULE(vector_norm_delta) {
  if (n == 2 && float_vector(a[0]) && a[1] == scalar_like(a[0])) return a[1];
  return fail(error, fn, "a floating-point vector and a delta of its scalar type", a, n);
}

KJIT_RULE(vector_delta_unary) {
  if (n == 2 && float_vector(a[0]) && a[1] == scalar_like(a[0])) return a[0];
  return fail(error, fn, "a floating-point vector and a delta of its scalar type", a, n);
}

KJIT_RULE(componentwise) {
  if (n == 2 && numeric(a[0]) && (a[0].is_vector() || a[0].is_matrix()) && a[0] == a[1]) return a[0];
  return fail(error, fn, "two vectors or two matrices of the same type", a, n);
}

KJIT_RULE(outer) {
  if (n == 2 && numeric(a[0]) && a[0].is_vector() && a[1].is_vector() && a[0].scalar == a[1].scalar)
    return Type::matrix(a[0].rows, a[1].rows, a[0].scalar);
  return fail(error, fn, "two vectors of the same scalar type", a, n);
}

KJIT_RULE(vector_arg) {
  if (n == 1 && numeric(a[0]) && a[0].is_vector()) return Type::scalar_of(Scalar::U32);
  return fail(error, fn, "one numeric vector", a, n);
}

KJIT_RULE(transpose) {
  if (n == 1 && numeric(a[0]) && a[0].is_matrix()) return Type::matrix(a[0].cols, a[0].rows, a[0].scalar);
  return fail(error, fn, "one matrix", a, n);
}

KJIT_RULE(square_to_scalar) {
  bool det = is(fn, "determinant");
  if (n == 1 && a[0].is_matrix() && a[0].rows == a[0].cols &&
      (det ? real(a[0]) && a[0].rows <= 4 : numeric(a[0])))
    return scalar_like(a[0]);
  return fail(error, fn, det ? "a 2x2, 3x3 or 4x4 float32/float64 matrix" : "a square matrix", a, n);
}

KJIT_RULE(square_unary) {
  if (n == 1 && a[0].is_matrix() && a[0].rows == a[0].cols && a[0].rows <= 4 && real(a[0])) return a[0];
  return fail(error, fn, "a 2x2, 3x3 or 4x4 float32/float64 matrix", a, n);
}

KJIT_RULE(diag) {
  if (n == 1 && numeric(a[0]) && a[0].is_vector()) return Type::matrix(a[0].rows, a[0].rows, a[0].scalar);
  return fail(error, fn, "one vector", a, n);
}

KJIT_RULE(get_diag) {
  if (n == 1 && numeric(a[0]) && a[0].is_matrix() && a[0].rows == a[0].cols)
    return Type::vector(a[0].rows, a[0].scalar);
  return fail(error, fn, "one square matrix", a, n);
}

KJIT_RULE(ddot) {
  if (n == 2 && numeric(a[0]) && a[0].is_matrix() && a[0] == a[1]) return scalar_like(a[0]);
  return fail(error, fn, "two matrices of the same type", a, n);
}

KJIT_RULE(skew) {
  if (n == 1 && vec_of(a[0], 3)) return Type::matrix(3, 3, a[0].scalar);
  return fail(error, fn, "one float32/float64 3-vector", a, n);
}

KJIT_RULE(from_vectors) {
  bool ok = n >= 2 && n <= 4 && numeric(a[0]) && a[0].is_vector();
  for (int i = 1; ok && i < n; ++i) ok = a[i] == a[0];
  if (ok) {
    if (is(fn, "matrix_from_cols")) return Type::matrix(a[0].rows, n, a[0].scalar);
    return Type::matrix(n, a[0].rows, a[0].scalar);
  }
  return fail(error, fn, "two to four vectors of the same type", a, n);
}

KJIT_RULE(decomposition) {
  const std::string S = n == 1 ? cpp_scalar(a[0]) : "";
  if (is(fn, "svd2") && n == 1 && mat_of(a[0], 2, 2))
    return result_struct("kj::svd2_t<" + S + ">", "svd2",
                         {{"U", a[0]}, {"sigma", Type::vector(2, a[0].scalar)}, {"V", a[0]}});
  if (n == 1 && mat_of(a[0], 3, 3)) {
    Type v3 = Type::vector(3, a[0].scalar);
    if (is(fn, "svd3")) return result_struct("kj::svd3_t<" + S + ">", "svd3", {{"U", a[0]}, {"sigma", v3}, {"V", a[0]}});
    if (is(fn, "qr3")) return result_struct("kj::qr3_t<" + S + ">", "qr3", {{"Q", a[0]}, {"R", a[0]}});
    if (is(fn, "eig3")) return result_struct("kj::eig3_t<" + S + ">", "eig3", {{"Q", a[0]}, {"d", v3}});
  }
  return fail(error, fn, is(fn, "svd2") ? "a float32/float64 2x2 matrix" : "a float32/float64 3x3 matrix", a, n);
}

}  // namespace kjit::ir::rules
