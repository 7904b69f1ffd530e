// Every builtin is callable under its DSL spelling: one kernel calls them all (a compile-time
// check of the DSL surface), and its IR must call every builtin of builtins.def.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "kjit/ir/ir.hpp"
#include "kjit/kjit.hpp"
#include "kjit/dsl/mesh.hpp"
#include "kjit/kernel.hpp"

namespace surface {
using namespace kjit::dsl;
KJIT_MODULE(builtins_surface)

/// Whether fma(a, b, c) is callable on values of T (a and c) and its scalar (b).
template <class T, class = void>
struct has_fma : std::false_type {};
template <class T>
struct has_fma<T, std::void_t<decltype(fma(std::declval<Value<T>>(), std::declval<Value<kjit::scalar_of_t<T>>>(),
                                           std::declval<Value<T>>()))>> : std::true_type {};
static_assert(has_fma<float>::value && has_fma<double>::value && has_fma<kjit::vec3f>::value &&
                  has_fma<kjit::mat33d>::value && has_fma<kjit::quatf>::value,
              "fma takes float32/float64 scalars, vectors, matrices and quaternions");
static_assert(!has_fma<kjit::half>::value && !has_fma<kjit::transformf>::value && !has_fma<int32_t>::value,
              "fma refuses half, transforms and integers at compile time (its type rule would at trace time)");

// The overloads math.hpp generates from builtins.def take what their type rule takes.
template <class T, class = void>
struct has_bit_count : std::false_type {};
template <class T>
struct has_bit_count<T, std::void_t<decltype(bit_count(std::declval<Value<T>>()))>> : std::true_type {};
static_assert(has_bit_count<int8_t>::value && has_bit_count<uint64_t>::value && !has_bit_count<float>::value &&
                  !has_bit_count<bool>::value,
              "bit_count (integer_unary) takes integers only");
template <class T, class = void>
struct has_erf : std::false_type {};
template <class T>
struct has_erf<T, std::void_t<decltype(erf(std::declval<Value<T>>()))>> : std::true_type {};
static_assert(has_erf<float>::value && has_erf<double>::value && !has_erf<int32_t>::value && !has_erf<kjit::vec3f>::value,
              "erf (float_unary) takes float scalars only");

KJIT_KERNEL(all_builtins, (Array<double> x, Array<int32_t> k, Array<float> cdf, Array<double> out, Value<Mesh> mesh,
                          Value<Bvh> bvh)) {
  Int i = tid();
  Double a = x[i], b = x[i + 1], t = x[i + 2];
  Int n = k[i], m = k[i + 1];
  Vec3d u(a, b, t), v(b, t, a);
  Vec2d u2(a, b);
  Vec4d u4(a, b, t, a);
  Mat33d A(a, b, t, b, a, t, t, b, a), S(a, b, t, b, a, b, t, b, a);
  Mat22d A2(a, b, t, a);
  Mat44d A4 = identity<4, double>();
  Quatd q = normalize(quaternion(u, 1.0)), r = quat_identity<double>();
  Transformd tr = transformation(u, q);
  SpatialVectord w = spatial_vector(u, v);
  Var<double> acc = 0.0;
  Var<int32_t> iacc = 0;
  Var<bool> flag = false;
  // operators
  acc += a + b - a * b / t + a % b + div_approx(a, b) + floordiv(a, b);
  Double nn = -a;
  acc += +nn;
  iacc += (n & m) | (n ^ m) | (n << 1) | (n >> 1) | ~n;
  iacc += floordiv(n, 3) + n % 3;
  iacc += bit_count(n);
  flag = (!(a < b) && (a <= b)) || (a > b) || (a >= b) || (a == b) || (a != b);
  // scalar math
  acc += sin(a) + cos(a) + tan(a) + exp(a) + log(a) + sqrt(a) + pow(a, b) + abs(a) + min(a, b) + max(a, b) + floor(a) + ceil(a);
  acc += clamp(a, 0.0, 1.0) + where(flag, a, b) + acos(a) + asin(a) + atan(a) + atan2(a, b) + cbrt(a) + copysign(a, b);
  acc += cosh(a) + sinh(a) + tanh(a) + degrees(a) + radians(a) + erf(a) + erfc(a) + erfinv(a) + erfcinv(a) + log2(a) + log10(a);
  acc += frac(a) + trunc(a) + round(a) + rint(a) + sign(a) + step(a) + nonzero(a);
  flag = isfinite(a) || isinf(a) || isnan(a);
  // vectors
  acc += dot(u, v) + length(u) + length_sq(u) + norm_l1(u) + norm_l2(u) + norm_huber(u) + norm_pseudo_huber(u, 2.0);
  acc += cross(u, v).x() + normalize(u).y() + smooth_normalize(u).z() + cw_mul(u, v).x() + cw_div(u, v).y() + outer(u, u2)(0, 1);
  iacc += Int(argmin(u)) + Int(argmax(u));
  acc += min(u) + max(u4);
  // matrices
  acc += transpose(A)(0, 1) + trace(A) + determinant(A) + inverse(A)(1, 1) + inverse_approx(A2)(0, 0) + diag(u)(2, 2);
  acc += get_diag(A).x() + ddot(A, S) + skew(u)(0, 1) + matrix_from_cols(u, v)(0, 1) + matrix_from_rows(u, v)(1, 0);
  auto [U, sig, V] = svd3(A);
  auto [U2, sig2, V2] = svd2(A2);
  auto [Q, R] = qr3(A);
  auto [E, d] = eig3(S);
  acc += trace(U) + sig.x() + trace(V) + trace(U2) + sig2.y() + trace(V2) + trace(Q) + trace(R) + trace(E) + d.z();
  // quaternions
  Quatd q2 = quat_from_axis_angle(normalize(u), a) * quat_from_euler(u, 0, 1, 2) * quat_from_matrix(A) * quat_from_matrix(A4);
  q2 = q2 * quat_rpy(a, b, t) * quat_inverse(q) * quat_slerp(q, r, 0.5) * quat_twist(normalize(v), q);
  auto [axis, angle] = quat_to_axis_angle(q);
  acc += quat_rotate(q2, u).x() + quat_rotate_inv(q, u).y() + axis.x() + angle + quat_to_euler(q, 2, 1, 0).x();
  acc += quat_to_matrix(q)(0, 0) + quat_to_rpy(q).z() + quat_twist_angle(normalize(v), q) + quat_twist_angle_signed(normalize(v), q);
  // transforms and spatial
  Transformd t2 = transform_multiply(tr, transform_inverse(tr)) * transform_identity<double>();
  t2 = transform_set_rotation(transform_set_translation(t2, v), q);
  auto [pp, pq, ps] = transform_decompose(transform_compose(u, q, v));
  acc += transform_get_translation(t2).x() + transform_get_rotation(t2).w() + transform_point(tr, u).x() + transform_vector(tr, u).y();
  acc += transform_point(A4, u).z() + transform_vector(A4, u).x() + transform_to_matrix(tr)(0, 3) + transform_from_matrix(A4).p().x();
  acc += pp.x() + pq.w() + ps.y() + transform_twist(tr, w)[0] + transform_wrench(tr, w)[1] + spatial_top(w).x() + spatial_bottom(w).y();
  acc += spatial_dot(w, w) + spatial_cross(w, w)[2] + spatial_cross_dual(w, w)[3] + spatial_adjoint(A, S)(5, 5) + velocity_at_point(w, u).z();
  // pure geometry
  acc += closest_point_edge_edge(u, v, v, u, 1e-6).z() + Double(intersect_tri_tri(u, v, u, v, u, v));
  // random and noise
  Var<UInt32> s = rand_init(n, m);
  UInt32 s0 = rand_init(n);
  acc += Double(randf(s) + randf(s, 1.0f, 2.0f) + randn(s) + Float(randi(s)) + Float(randi(s, 0, 5)) + Float(randu(s)) + Float(randu(s, 0u, 7u)));
  acc += Double(Float(poisson(s, 2.0f)) + Float(sample_cdf(s, cdf)) + sample_triangle(s).x() + sample_unit_square(s).x() + sample_unit_cube(s).y());
  acc += Double(sample_unit_disk(s).x() + sample_unit_ring(s).y() + sample_unit_sphere(s).z() + sample_unit_sphere_surface(s).x());
  acc += Double(sample_unit_hemisphere(s).z() + sample_unit_hemisphere_surface(s).z());
  acc += noise(s0, a) + noise(s0, u) + pnoise(s0, u2, 3, 4) + curlnoise(s0, u).x() + curlnoise(s0, u4, 2u, 2.0, 0.5).y();
  // utility
  acc += select(flag, a, b) + lerp(a, b, t) + fma(a, b, t) + smoothstep(0.0, 1.0, a) + Double(lower_bound(x, a)) + Double(block_dim());
  expect_near(a, a, 1e-9);
  If(a > 1e300, [&] { breakpoint(); });
  // The mesh traversals (kjit/dsl/mesh.hpp spells them through Warp's query names).
  Vec3f p = Vec3f(Float(a), Float(b), Float(t));
  Value<MeshQueryPoint> near = mesh_query_point_no_sign(mesh, p, 1.0f);
  Value<MeshQueryRay> hit = mesh_query_ray(mesh, p, p, 1.0f);
  Value<MeshQueryPoint> s1 = mesh_query_point(mesh, p, 1.0f), s2 = mesh_query_point_sign_normal(mesh, p, 1.0f),
                        s3 = mesh_query_point_sign_parity(mesh, p, 1.0f), s4 = mesh_query_furthest_point_no_sign(mesh, p, 0.0f),
                        s5 = mesh_query_point_sign_winding_number(mesh, p, 1.0f);
  iacc += mesh_query_ray_count_intersections(mesh, p, p) + where(mesh_query_ray_anyhit(mesh, p, p, 1.0f), Int(1), 0);
  auto boxes = mesh_query_aabb(mesh, p, p);
  Var<int32_t> face = 0;
  While([&] { return mesh_query_aabb_next(boxes, face); }, [&] { iacc += face; });
  auto rays = bvh_query_ray(bvh, p, p);
  While([&] { return bvh_query_next(rays, face); }, [&] { iacc += face; });
  out[i] = acc + Double(iacc) + where(flag, Double(1.0), 0.0) +
           Double(near.u() + hit.t() + s1.sign() + s2.sign() + s3.sign() + s4.u() + s5.sign());
}
}  // namespace surface

TEST_CASE("the DSL spells every builtin: one kernel calls them all") {
  const kjit::ir::Function& fn = surface::all_builtins.def().ir();
  std::set<int> called;
  kjit::ir::for_each_stmt(fn.body, [&](const kjit::ir::Stmt& s) {
    if (s.op == kjit::ir::Op::Call) called.insert(int(s.builtin()));
  });
  for (int b = 0; b < kjit::ir::kBuiltinCount; ++b)
    CHECK_MESSAGE(called.count(b), "the DSL surface kernel does not call " << std::string(kjit::ir::builtin_info(kjit::ir::Builtin(b)).name));
}
