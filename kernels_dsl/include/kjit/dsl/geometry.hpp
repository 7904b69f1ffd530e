// kjit/dsl/geometry.hpp — quaternion, transform and spatial-vector builtins and constructors,
// under Warp's names. Quaternions are (x, y, z, w); transforms hold p then q; spatial vectors
// hold the angular part, then the linear one.
#pragma once

#include "kjit/dsl/linalg.hpp"

namespace kjit::dsl {

namespace detail {
template <class S> using v3 = vec<3, S>;
template <class S> using v6 = vec<6, S>;
template <class S> using m33 = mat<3, 3, S>;
template <class S> using m44 = mat<4, 4, S>;
template <class S> using m66 = mat<6, 6, S>;
}  // namespace detail

#define KJIT_DSL_CALL1(name, builtin, Arg, Result)                                   \
  template <class S, std::enable_if_t<is_floating_v<S>, int> = 0>                     \
  Value<Result> name(const Value<Arg>& a, Loc loc = Loc::here()) {                   \
    return detail::call<Result>(ir::Builtin::builtin, loc, a.use(loc));              \
  }
#define KJIT_DSL_CALL2(name, builtin, A, B, Result)                                   \
  template <class S, std::enable_if_t<is_floating_v<S>, int> = 0>                     \
  Value<Result> name(const Value<A>& a, detail::same_t<Operand<B>> b) {              \
    return detail::call<Result>(ir::Builtin::builtin, b.loc, a.use(b.loc), b.id);    \
  }

/// A quaternion from (x, y, z, w), or from its vector part and w.
template <class S, class... A, std::enable_if_t<is_scalar_v<S> && sizeof...(A) == 3, int> = 0>
Value<quat<S>> quaternion(const Value<S>& x, const A&... yzw) { return Value<quat<S>>(x, yzw...); }
template <class S>
Value<quat<S>> quaternion(const Value<vec<3, S>>& v, detail::same_t<Operand<S>> w) {
  return Value<quat<S>>(v.x(w.loc), v.y(w.loc), v.z(w.loc), Value<S>(detail::BoundTag{}, w.id));
}
/// The identity rotation (0, 0, 0, 1).
template <class S = float>
Value<quat<S>> quat_identity(Loc loc = Loc::here()) { return Value<quat<S>>(S(0), S(0), S(0), S(1)); }
/// Rotation of `angle` radians about a unit `axis`.
KJIT_DSL_CALL2(quat_from_axis_angle, QuatFromAxisAngle, detail::v3<S>, S, quat<S>)
/// Rotations about the fixed axes i, then j, then k (extrinsic), angles indexed by axis.
template <class S>
Value<quat<S>> quat_from_euler(const Value<vec<3, S>>& e, Operand<int32_t> i, Operand<int32_t> j, Operand<int32_t> k) {
  return detail::call<quat<S>>(ir::Builtin::QuatFromEuler, k.loc, e.use(k.loc), i.id, j.id, k.id);
}
/// The unit quaternion (w >= 0) of a rotation matrix (3x3, or the rotation of a 4x4).
template <int N, class S, std::enable_if_t<N == 3 || N == 4, int> = 0>
Value<quat<S>> quat_from_matrix(const Value<mat<N, N, S>>& m, Loc loc = Loc::here()) {
  return detail::call<quat<S>>(ir::Builtin::QuatFromMatrix, loc, m.use(loc));
}
/// Roll (about X), then pitch (Y), then yaw (Z), about fixed axes.
template <class S>
Value<quat<S>> quat_rpy(const Value<S>& roll, detail::same_t<Operand<S>> pitch, detail::same_t<Operand<S>> yaw) {
  return detail::call<quat<S>>(ir::Builtin::QuatRpy, yaw.loc, roll.use(yaw.loc), pitch.id, yaw.id);
}
/// The conjugate (the inverse of a unit quaternion).
KJIT_DSL_CALL1(quat_inverse, QuatInverse, quat<S>, quat<S>)
/// q p q^-1 and q^-1 p q for a unit q.
KJIT_DSL_CALL2(quat_rotate, QuatRotate, quat<S>, detail::v3<S>, detail::v3<S>)
KJIT_DSL_CALL2(quat_rotate_inv, QuatRotateInv, quat<S>, detail::v3<S>, detail::v3<S>)
/// Spherical interpolation from q0 (t = 0) to q1 (t = 1).
template <class S>
Value<quat<S>> quat_slerp(const Value<quat<S>>& q0, detail::same_t<Operand<quat<S>>> q1, detail::same_t<Operand<S>> t) {
  return detail::call<quat<S>>(ir::Builtin::QuatSlerp, t.loc, q0.use(t.loc), q1.id, t.id);
}
/// The axis and angle (2 atan2(|v|, w), in [0, 2 pi]) of a unit quaternion: returned, or
/// written into Vars as in Warp.
template <class S>
Tuple<Value<vec<3, S>>, Value<S>> quat_to_axis_angle(const Value<quat<S>>& q, Loc loc = Loc::here()) {
  ir::ValueId r = detail::call_builtin(ir::Builtin::QuatToAxisAngle, {q.use(loc)}, loc);
  return {detail::field_of<vec<3, S>>(r, 0, loc), detail::field_of<S>(r, 1, loc)};
}
template <class S>
void quat_to_axis_angle(const Value<quat<S>>& q, VarHandle<vec<3, S>>& axis, VarHandle<S>& angle, Loc loc = Loc::here()) {
  auto [a, t] = quat_to_axis_angle(q, loc);
  axis = a, angle = t;
}
/// Euler angles (by axis) for the sequence i, j, k; see quat_from_euler.
template <class S>
Value<vec<3, S>> quat_to_euler(const Value<quat<S>>& q, Operand<int32_t> i, Operand<int32_t> j, Operand<int32_t> k) {
  return detail::call<vec<3, S>>(ir::Builtin::QuatToEuler, k.loc, q.use(k.loc), i.id, j.id, k.id);
}
KJIT_DSL_CALL1(quat_to_matrix, QuatToMatrix, quat<S>, detail::m33<S>)
/// (roll, pitch, yaw) of a unit quaternion.
KJIT_DSL_CALL1(quat_to_rpy, QuatToRpy, quat<S>, detail::v3<S>)
/// The twist of q about a unit axis (swing-twist decomposition) and its angle.
KJIT_DSL_CALL2(quat_twist, QuatTwist, detail::v3<S>, quat<S>, quat<S>)
KJIT_DSL_CALL2(quat_twist_angle, QuatTwistAngle, detail::v3<S>, quat<S>, S)
KJIT_DSL_CALL2(quat_twist_angle_signed, QuatTwistAngleSigned, detail::v3<S>, quat<S>, S)

/// A transform from a translation and a rotation.
template <class S>
Value<transform<S>> transformation(const Value<vec<3, S>>& p, detail::same_t<Operand<quat<S>>> q) {
  Value<quat<S>> qq(detail::BoundTag{}, q.id);
  return Value<transform<S>>(p.x(q.loc), p.y(q.loc), p.z(q.loc), qq.x(q.loc), qq.y(q.loc), qq.z(q.loc), qq.w(q.loc));
}
/// The identity transform.
template <class S = float>
Value<transform<S>> transform_identity(Loc loc = Loc::here()) { return Value<transform<S>>(S(0), S(0), S(0), S(0), S(0), S(0), S(1)); }
KJIT_DSL_CALL1(transform_get_translation, TransformGetTranslation, transform<S>, detail::v3<S>)
KJIT_DSL_CALL1(transform_get_rotation, TransformGetRotation, transform<S>, quat<S>)
/// The transform with its translation (rotation) replaced. On a Var, as in Warp, the
/// variable is updated in place.
KJIT_DSL_CALL2(transform_set_translation, TransformSetTranslation, transform<S>, detail::v3<S>, transform<S>)
KJIT_DSL_CALL2(transform_set_rotation, TransformSetRotation, transform<S>, quat<S>, transform<S>)
template <class S>
void transform_set_translation(VarHandle<transform<S>>& t, detail::same_t<Operand<vec<3, S>>> p) {
  t = detail::call<transform<S>>(ir::Builtin::TransformSetTranslation, p.loc, t.use(p.loc), p.id);
}
template <class S>
void transform_set_rotation(VarHandle<transform<S>>& t, detail::same_t<Operand<quat<S>>> q) {
  t = detail::call<transform<S>>(ir::Builtin::TransformSetRotation, q.loc, t.use(q.loc), q.id);
}
/// a * b: b, then a.
KJIT_DSL_CALL2(transform_multiply, TransformMultiply, transform<S>, transform<S>, transform<S>)
KJIT_DSL_CALL1(transform_inverse, TransformInverse, transform<S>, transform<S>)
/// A point (rotated and translated) or a vector (rotated) through a transform or a 4x4 matrix.
KJIT_DSL_CALL2(transform_point, TransformPoint, transform<S>, detail::v3<S>, detail::v3<S>)
KJIT_DSL_CALL2(transform_vector, TransformVector, transform<S>, detail::v3<S>, detail::v3<S>)
KJIT_DSL_CALL2(transform_point, TransformPoint, detail::m44<S>, detail::v3<S>, detail::v3<S>)
KJIT_DSL_CALL2(transform_vector, TransformVector, detail::m44<S>, detail::v3<S>, detail::v3<S>)
KJIT_DSL_CALL1(transform_to_matrix, TransformToMatrix, transform<S>, detail::m44<S>)
KJIT_DSL_CALL1(transform_from_matrix, TransformFromMatrix, detail::m44<S>, transform<S>)
/// The 4x4 matrix T R S of a position, rotation and scale.
template <class S>
Value<mat<4, 4, S>> transform_compose(const Value<vec<3, S>>& p, detail::same_t<Operand<quat<S>>> q, detail::same_t<Operand<vec<3, S>>> s) {
  return detail::call<mat<4, 4, S>>(ir::Builtin::TransformCompose, s.loc, p.use(s.loc), q.id, s.id);
}
/// (position, rotation, scale) of T R S: `auto [p, q, s] = transform_decompose(m);`.
template <class S>
Tuple<Value<vec<3, S>>, Value<quat<S>>, Value<vec<3, S>>> transform_decompose(const Value<mat<4, 4, S>>& m, Loc loc = Loc::here()) {
  ir::ValueId r = detail::call_builtin(ir::Builtin::TransformDecompose, {m.use(loc)}, loc);
  return {detail::field_of<vec<3, S>>(r, 0, loc), detail::field_of<quat<S>>(r, 1, loc), detail::field_of<vec<3, S>>(r, 2, loc)};
}

/// A spatial vector from its angular and linear parts (or six components).
template <class S>
Value<vec<6, S>> spatial_vector(const Value<vec<3, S>>& w, detail::same_t<Operand<vec<3, S>>> v) {
  Value<vec<3, S>> vv(detail::BoundTag{}, v.id);
  return Value<vec<6, S>>(w.x(v.loc), w.y(v.loc), w.z(v.loc), vv.x(v.loc), vv.y(v.loc), vv.z(v.loc));
}
template <class S, class... A, std::enable_if_t<is_scalar_v<S> && sizeof...(A) == 5, int> = 0>
Value<vec<6, S>> spatial_vector(const Value<S>& first, const A&... rest) { return Value<vec<6, S>>(first, rest...); }
KJIT_DSL_CALL1(spatial_top, SpatialTop, detail::v6<S>, detail::v3<S>)
KJIT_DSL_CALL1(spatial_bottom, SpatialBottom, detail::v6<S>, detail::v3<S>)
KJIT_DSL_CALL2(spatial_dot, SpatialDot, detail::v6<S>, detail::v6<S>, S)
/// Twist x twist and twist x wrench.
KJIT_DSL_CALL2(spatial_cross, SpatialCross, detail::v6<S>, detail::v6<S>, detail::v6<S>)
KJIT_DSL_CALL2(spatial_cross_dual, SpatialCrossDual, detail::v6<S>, detail::v6<S>, detail::v6<S>)
/// The 6x6 block matrix [[r, 0], [s, r]].
KJIT_DSL_CALL2(spatial_adjoint, SpatialAdjoint, detail::m33<S>, detail::m33<S>, detail::m66<S>)
/// A twist (a wrench) expressed in the frame a transform maps to.
KJIT_DSL_CALL2(transform_twist, TransformTwist, transform<S>, detail::v6<S>, detail::v6<S>)
KJIT_DSL_CALL2(transform_wrench, TransformWrench, transform<S>, detail::v6<S>, detail::v6<S>)
/// v + w x r for a twist (w, v).
KJIT_DSL_CALL2(velocity_at_point, VelocityAtPoint, detail::v6<S>, detail::v3<S>, detail::v3<S>)

#undef KJIT_DSL_CALL1
#undef KJIT_DSL_CALL2

/// Closest points of segments p1-q1 and p2-q2: (s, t, distance), the points being
/// p1 + s (q1 - p1) and p2 + t (q2 - p2); a segment of squared length <= epsilon is a point.
template <class S>
Value<detail::v3<S>> closest_point_edge_edge(const Value<detail::v3<S>>& p1, detail::same_t<Operand<detail::v3<S>>> q1,
                                             detail::same_t<Operand<detail::v3<S>>> p2, detail::same_t<Operand<detail::v3<S>>> q2,
                                             detail::same_t<Operand<S>> epsilon) {
  return detail::call<detail::v3<S>>(ir::Builtin::ClosestPointEdgeEdge, epsilon.loc, p1.use(epsilon.loc), q1.id, p2.id, q2.id, epsilon.id);
}
/// 1 when triangles (v0, v1, v2) and (u0, u1, u2) intersect or touch, else 0 (no gradient).
template <class S>
Value<int32_t> intersect_tri_tri(const Value<detail::v3<S>>& v0, detail::same_t<Operand<detail::v3<S>>> v1,
                                 detail::same_t<Operand<detail::v3<S>>> v2, detail::same_t<Operand<detail::v3<S>>> u0,
                                 detail::same_t<Operand<detail::v3<S>>> u1, detail::same_t<Operand<detail::v3<S>>> u2) {
  return detail::call<int32_t>(ir::Builtin::IntersectTriTri, u2.loc, v0.use(u2.loc), v1.id, v2.id, u0.id, u1.id, u2.id);
}

}  // namespace kjit::dsl
