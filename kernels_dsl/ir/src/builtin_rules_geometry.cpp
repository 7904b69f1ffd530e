// Type rules of the quaternion, transform, spatial and pure geometric builtins (see
// builtins.def). They take float32 or float64 values; quaternions are (x, y, z, w), spatial vectors (angular, linear).
#include <cstring>

#include "builtin_rules.hpp"

namespace kjit::ir::rules {

namespace {
Type v3(const Type& t) { return Type::vector(3, t.scalar); }
Type q_of(const Type& t) { return Type::quat(t.scalar); }
bool same_scalar(const Type& x, const Type& y) { return x.scalar == y.scalar; }
}  // namespace

KJIT_RULE(quat_from_axis_angle) {
  if (n == 2 && vec_of(a[0], 3) && a[1] == scalar_like(a[0])) return q_of(a[0]);
  return fail(error, fn, "a 3-vector axis and an angle of its scalar type", a, n);
}

KJIT_RULE(quat_from_euler) {
  if (n == 4 && vec_of(a[0], 3) && i32(a[1]) && i32(a[2]) && i32(a[3])) return q_of(a[0]);
  return fail(error, fn, "a 3-vector of angles and three int32 axis indices", a, n);
}

KJIT_RULE(quat_from_matrix) {
  if (n == 1 && (mat_of(a[0], 3, 3) || mat_of(a[0], 4, 4))) return q_of(a[0]);
  return fail(error, fn, "a 3x3 or 4x4 rotation matrix", a, n);
}

KJIT_RULE(quat_rpy) {
  if (n == 3 && real_scalar(a[0]) && a[1] == a[0] && a[2] == a[0]) return q_of(a[0]);
  return fail(error, fn, "roll, pitch and yaw of one floating type", a, n);
}

KJIT_RULE(quat_unary) {
  if (n == 1 && quat(a[0])) return a[0];
  return fail(error, fn, "one quaternion", a, n);
}

KJIT_RULE(quat_vec3) {
  if (n == 2 && quat(a[0]) && vec_of(a[1], 3) && same_scalar(a[0], a[1])) return a[1];
  return fail(error, fn, "a quaternion and a 3-vector of its scalar type", a, n);
}

KJIT_RULE(quat_slerp) {
  if (n == 3 && quat(a[0]) && a[1] == a[0] && a[2] == scalar_like(a[0])) return a[0];
  return fail(error, fn, "two quaternions and a scalar t", a, n);
}

KJIT_RULE(quat_to_axis_angle) {
  if (n == 1 && quat(a[0]))
    return result_struct("kj::axis_angle_t<" + cpp_scalar(a[0]) + ">", "quatmath",
                         {{"axis", v3(a[0])}, {"angle", scalar_like(a[0])}});
  return fail(error, fn, "one quaternion", a, n);
}

KJIT_RULE(quat_to_euler) {
  if (n == 4 && quat(a[0]) && i32(a[1]) && i32(a[2]) && i32(a[3])) return v3(a[0]);
  return fail(error, fn, "a quaternion and three int32 axis indices", a, n);
}

KJIT_RULE(quat_to_matrix) {
  if (n == 1 && quat(a[0])) return Type::matrix(3, 3, a[0].scalar);
  return fail(error, fn, "one quaternion", a, n);
}

KJIT_RULE(quat_to_rpy) {
  if (n == 1 && quat(a[0])) return v3(a[0]);
  return fail(error, fn, "one quaternion", a, n);
}

KJIT_RULE(quat_twist) {
  if (n == 2 && vec_of(a[0], 3) && quat(a[1]) && same_scalar(a[0], a[1])) return a[1];
  return fail(error, fn, "a 3-vector axis and a quaternion", a, n);
}

KJIT_RULE(quat_twist_angle) {
  if (n == 2 && vec_of(a[0], 3) && quat(a[1]) && same_scalar(a[0], a[1])) return scalar_like(a[1]);
  return fail(error, fn, "a 3-vector axis and a quaternion", a, n);
}

KJIT_RULE(transform_get_translation) {
  if (n == 1 && xform(a[0])) return v3(a[0]);
  return fail(error, fn, "one transform", a, n);
}

KJIT_RULE(transform_get_rotation) {
  if (n == 1 && xform(a[0])) return q_of(a[0]);
  return fail(error, fn, "one transform", a, n);
}

KJIT_RULE(transform_set_translation) {
  if (n == 2 && xform(a[0]) && a[1] == v3(a[0])) return a[0];
  return fail(error, fn, "a transform and a 3-vector", a, n);
}

KJIT_RULE(transform_set_rotation) {
  if (n == 2 && xform(a[0]) && a[1] == q_of(a[0])) return a[0];
  return fail(error, fn, "a transform and a quaternion", a, n);
}

KJIT_RULE(transform_binary) {
  if (n == 2 && xform(a[0]) && a[1] == a[0]) return a[0];
  return fail(error, fn, "two transforms of the same type", a, n);
}

KJIT_RULE(transform_unary) {
  if (n == 1 && xform(a[0])) return a[0];
  return fail(error, fn, "one transform", a, n);
}

KJIT_RULE(transform_apply) {
  if (n == 2 && (xform(a[0]) || mat_of(a[0], 4, 4)) && a[1] == v3(a[0])) return a[1];
  return fail(error, fn, "a transform (or a 4x4 matrix) and a 3-vector", a, n);
}

KJIT_RULE(transform_to_matrix) {
  if (n == 1 && xform(a[0])) return Type::matrix(4, 4, a[0].scalar);
  return fail(error, fn, "one transform", a, n);
}

KJIT_RULE(transform_from_matrix) {
  if (n == 1 && mat_of(a[0], 4, 4)) return Type::transform(a[0].scalar);
  return fail(error, fn, "one 4x4 matrix", a, n);
}

KJIT_RULE(transform_compose) {
  if (n == 3 && vec_of(a[0], 3) && a[1] == q_of(a[0]) && a[2] == a[0]) return Type::matrix(4, 4, a[0].scalar);
  return fail(error, fn, "a position, a quaternion and a scale", a, n);
}

KJIT_RULE(transform_decompose) {
  if (n == 1 && mat_of(a[0], 4, 4))
    return result_struct("kj::decomposed_t<" + cpp_scalar(a[0]) + ">", "transformmath",
                         {{"position", v3(a[0])}, {"rotation", q_of(a[0])}, {"scale", v3(a[0])}});
  return fail(error, fn, "one 4x4 matrix", a, n);
}

KJIT_RULE(transform_spatial) {
  if (n == 2 && xform(a[0]) && a[1] == Type::vector(6, a[0].scalar)) return a[1];
  return fail(error, fn, "a transform and a spatial vector", a, n);
}

KJIT_RULE(spatial_half) {
  if (n == 1 && vec_of(a[0], 6)) return v3(a[0]);
  return fail(error, fn, "one spatial vector", a, n);
}

KJIT_RULE(spatial_dot) {
  if (n == 2 && vec_of(a[0], 6) && a[1] == a[0]) return scalar_like(a[0]);
  return fail(error, fn, "two spatial vectors", a, n);
}

KJIT_RULE(spatial_cross) {
  if (n == 2 && vec_of(a[0], 6) && a[1] == a[0]) return a[0];
  return fail(error, fn, "two spatial vectors", a, n);
}

KJIT_RULE(spatial_adjoint) {
  if (n == 2 && mat_of(a[0], 3, 3) && a[1] == a[0]) return Type::matrix(6, 6, a[0].scalar);
  return fail(error, fn, "two 3x3 matrices", a, n);
}

KJIT_RULE(velocity_at_point) {
  if (n == 2 && vec_of(a[0], 6) && a[1] == v3(a[0])) return a[1];
  return fail(error, fn, "a spatial vector and a 3-vector", a, n);
}

KJIT_RULE(closest_point_edge_edge) {
  if (n == 5 && vec_of(a[0], 3) && a[1] == a[0] && a[2] == a[0] && a[3] == a[0] && a[4] == scalar_like(a[0])) return a[0];
  return fail(error, fn, "four 3-vectors (the ends of two segments) and an epsilon of their scalar type", a, n);
}

KJIT_RULE(intersect_tri_tri) {
  if (n == 6 && vec_of(a[0], 3)) {
    bool same = true;
    for (int i = 1; i < 6; ++i) same = same && a[i] == a[0];
    if (same) return Type::scalar_of(Scalar::I32);
  }
  return fail(error, fn, "six 3-vectors of one type (the corners of two triangles)", a, n);
}

}  // namespace kjit::ir::rules
