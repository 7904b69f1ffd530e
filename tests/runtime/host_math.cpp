// Host math on kjit's element types (issue 32 item 3): constructors, indexing and layout; each
// function against hand-computed values and identities; and float32 host results bit for bit
// against the same builtins in cpu kernels, on random inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"

// Both namespaces open in one scope, as a single-file program may have them: the kernels must
// still trace with the DSL's overloads (the host ones cannot deduce from a traced value, and the
// zero-argument identities lose partial ordering to the DSL's), which these asserts pin down.
namespace host_math_kernels {
using namespace kjit;
using namespace kjit::dsl;
KJIT_MODULE(runtime_host_math)

template <class T> T v();  // an operand for decltype
static_assert(std::is_same_v<decltype(dot(v<Vec3f>(), v<Vec3f>())), Float> &&
                  std::is_same_v<decltype(normalize(v<Vec3f>())), Vec3f> &&
                  std::is_same_v<decltype(length(v<Vec3f>())), Float> &&
                  std::is_same_v<decltype(quat_rpy(v<Float>(), v<Float>(), v<Float>())), Quatf> &&
                  std::is_same_v<decltype(transform_point(v<Transformf>(), v<Vec3f>())), Vec3f> &&
                  std::is_same_v<decltype(inverse(v<Mat33f>())), Mat33f> &&
                  std::is_same_v<decltype(v<Quatf>() * v<Quatf>()), Quatf> &&
                  std::is_same_v<decltype(v<Vec3f>() * v<Float>()), Vec3f>,
              "with kjit and kjit::dsl both open, builtins on traced values are the DSL's");
static_assert(std::is_same_v<decltype(quat_identity<float>()), Quatf> &&
                  std::is_same_v<decltype(transform_identity<float>()), Transformf> &&
                  std::is_same_v<decltype(identity<3, float>()), Mat33f>,
              "the zero-argument identities are the DSL's in kernel code, not ambiguous");

KJIT_KERNEL(vector_ops, (Array<Vec3f> a, Array<Vec3f> b, Array<float> s, Array<Vec3f> ov, Array<float> os)) {
  Int i = tid();
  Vec3f x = a[i], y = b[i];
  Float k = s[i];
  Int o = i * 10, p = i * 3;
  ov[o] = x + y;
  ov[o + 1] = x - y;
  ov[o + 2] = -x;
  ov[o + 3] = x * k;
  ov[o + 4] = k * x;
  ov[o + 5] = x / k;
  ov[o + 6] = cw_mul(x, y);
  ov[o + 7] = cw_div(x, y);
  ov[o + 8] = cross(x, y);
  ov[o + 9] = normalize(x);
  os[p] = dot(x, y);
  os[p + 1] = length(x);
  os[p + 2] = length_sq(x);
}

KJIT_KERNEL(matrix_ops, (Array<Mat33f> m, Array<Mat33f> n, Array<Vec3f> a, Array<Vec3f> b, Array<float> s, Array<Mat22f> m2,
                         Array<Mat44f> m4, Array<Mat33f> om, Array<Vec3f> ov, Array<float> os, Array<Mat22f> om2, Array<Mat44f> om4)) {
  Int i = tid();
  Mat33f A = m[i], B = n[i];
  Mat22f A2 = m2[i];
  Mat44f A4 = m4[i];
  Vec3f x = a[i], y = b[i];
  Float k = s[i];
  Int o = i * 10, p = i * 4;
  om[o] = A + B;
  om[o + 1] = A - B;
  om[o + 2] = A * B;
  om[o + 3] = transpose(A);
  om[o + 4] = inverse(A);
  om[o + 5] = outer(x, y);
  om[o + 6] = diag(x);
  om[o + 7] = A * k;
  om[o + 8] = A / k;
  om[o + 9] = -A + identity<3, float>();
  ov[i * 2] = A * x;
  ov[i * 2 + 1] = x * A;
  os[p] = determinant(A);
  os[p + 1] = trace(A);
  os[p + 2] = determinant(A2);
  os[p + 3] = determinant(A4);
  om2[i] = inverse(A2);
  om4[i] = inverse(A4);
}

KJIT_KERNEL(quat_ops, (Array<Quatf> q, Array<Quatf> r, Array<Vec3f> a, Array<float> s, Array<Mat33f> rot, Array<Quatf> oq,
                       Array<Vec3f> ov, Array<Mat33f> om, Array<float> os)) {
  Int i = tid();
  Quatf Q = q[i], P = r[i];
  Vec3f x = a[i];
  Mat33f R = rot[i];
  Float s0 = s[i * 3], s1 = s[i * 3 + 1], s2 = s[i * 3 + 2];
  Int o = i * 8;
  oq[o] = Q * P;
  oq[o + 1] = quat_inverse(Q);
  oq[o + 2] = normalize(P);
  oq[o + 3] = quat_from_axis_angle(normalize(x), s0);
  oq[o + 4] = quat_rpy(s0, s1, s2);
  oq[o + 5] = quat_from_matrix(R);
  oq[o + 6] = (Q + P) * s1 - P / s2;
  oq[o + 7] = quat_identity<float>() * Q;
  ov[i * 2] = quat_rotate(Q, x);
  ov[i * 2 + 1] = quat_rotate_inv(Q, x);
  om[i] = quat_to_matrix(Q);
  os[i * 2] = length(P);
  os[i * 2 + 1] = dot(Q, P);
}

KJIT_KERNEL(quat_arcs, (Array<Quatf> q, Array<Quatf> r, Array<float> s, Array<Quatf> oq, Array<Vec3f> ov, Array<float> os)) {
  Int i = tid();
  oq[i] = quat_slerp(q[i], r[i], s[i]);
  auto [axis, angle] = quat_to_axis_angle(r[i]);
  ov[i] = axis;
  os[i] = angle;
}

KJIT_KERNEL(transform_ops, (Array<Transformf> t, Array<Transformf> u, Array<Vec3f> a, Array<Mat44f> m, Array<Transformf> ot,
                            Array<Vec3f> ov, Array<Mat44f> om)) {
  Int i = tid();
  Transformf X = t[i], Y = u[i];
  Vec3f x = a[i];
  Mat44f M = m[i];
  Int o = i * 5, p = i * 4;
  ot[o] = transform_multiply(X, Y);
  ot[o + 1] = X * Y;
  ot[o + 2] = transform_inverse(X);
  ot[o + 3] = transform_from_matrix(M);
  ot[o + 4] = transform_identity<float>() * X;
  ov[p] = transform_point(X, x);
  ov[p + 1] = transform_vector(X, x);
  ov[p + 2] = transform_point(M, x);
  ov[p + 3] = transform_vector(M, x);
  om[i] = transform_to_matrix(X);
}
}  // namespace host_math_kernels

using namespace kjit;

namespace {

constexpr int kN = 64;

float uniform(std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) { return std::uniform_real_distribution<float>(lo, hi)(rng); }
vec3f random_vec(std::mt19937& rng) { return vec3f(uniform(rng), uniform(rng), uniform(rng)); }
template <int R, int C>
mat<R, C, float> random_mat(std::mt19937& rng) {
  mat<R, C, float> m;
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) m[i][j] = uniform(rng);
  return m;
}
/// A unit quaternion; every fourth has x, y or z dominant (w small), so that quat_from_matrix
/// takes each branch of Shepperd's method, not only the positive-trace one.
quatf random_unit_quat(std::mt19937& rng, int k) {
  quatf q(uniform(rng), uniform(rng), uniform(rng), uniform(rng));
  if (k % 4 != 0) {
    q[k % 4 - 1] = 4.0f;
    q.w = 0.1f * q.w;
  }
  return normalize(q);
}
transformf random_transform(std::mt19937& rng, int k) { return transformf(random_vec(rng), random_unit_quat(rng, k)); }
/// A scalar of magnitude 0.5 to 2, either sign (a divisor far from zero).
float random_scale(std::mt19937& rng) { return (uniform(rng) < 0 ? -1.0f : 1.0f) * uniform(rng, 0.5f, 2.0f); }

/// Counts the elements whose bytes differ (the types are packed: no padding to compare), and
/// names the output slot (k % names.size()) of the first.
template <class T>
void check_bits(const std::vector<T>& kernel, const std::vector<T>& host, const std::vector<const char*>& names) {
  REQUIRE(kernel.size() == host.size());
  int differ = 0;
  size_t first = 0;
  for (size_t k = 0; k < host.size(); ++k)
    if (std::memcmp(&kernel[k], &host[k], sizeof(T)) != 0 && differ++ == 0) first = k;
  INFO(differ << " of " << host.size() << " differ; the first: " << std::string(names[first % names.size()]) << " of element "
              << first / names.size());
  CHECK(differ == 0);
}

/// The largest componentwise difference of two vectors, matrices, quaternions or transforms.
template <class T>
double max_diff(const T& a, const T& b) {
  using S = scalar_of_t<T>;
  constexpr size_t n = sizeof(T) / sizeof(S);
  S x[n], y[n];
  std::memcpy(x, &a, sizeof(T));
  std::memcpy(y, &b, sizeof(T));
  double m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(double(x[i]) - double(y[i])));
  return m;
}

}  // namespace

TEST_CASE("host types: Warp's constructors, indexing, and the layout kernels read") {
  static_assert(sizeof(vec3f) == 12 && sizeof(vec3d) == 24 && sizeof(vec3h) == 6 && sizeof(mat33f) == 36 &&
                sizeof(mat44d) == 128 && sizeof(quatf) == 16 && sizeof(transformf) == 28 && sizeof(transformd) == 56);
  static_assert(offsetof(transformf, q) == 12 && offsetof(quatf, w) == 12);
  static_assert(std::is_standard_layout_v<vec3f> && std::is_trivial_v<vec3f> &&
                std::is_standard_layout_v<mat33f> && std::is_trivial_v<mat33f> && std::is_standard_layout_v<quatd> &&
                std::is_trivial_v<quatd> && std::is_standard_layout_v<transformh> && std::is_trivially_copyable_v<transformh>);
  // (kjit::half zeroes its bits by default, so its vectors are trivially copyable, not trivial.)
  // constexpr: usable as compile-time constants.
  static_assert(vec3i(1, 2, 3)[2] == 3 && dot(vec3i(1, 2, 3), vec3i(4, 5, 6)) == 32 && mat<2, 2, int>(1, 2, 3, 4)(1, 0) == 3 &&
                determinant(mat<2, 2, int>(1, 2, 3, 4)) == -2 && quat_identity<double>()[3] == 1.0);

  vec3f a(1, 2, 3), b{{4, 5, 6}}, fill(2.5f), zero{}, mixed(1, 2.5, 3.0f);
  float raw[3];
  std::memcpy(raw, &a, sizeof a);
  CHECK((raw[0] == 1 && raw[1] == 2 && raw[2] == 3));
  CHECK((b[0] == 4 && b[1] == 5 && b[2] == 6));
  CHECK((fill[0] == 2.5f && fill[1] == 2.5f && fill[2] == 2.5f));
  CHECK((zero[0] == 0 && zero[1] == 0 && zero[2] == 0));
  CHECK((mixed[1] == 2.5f && mixed[2] == 3.0f));
  a[1] = 7;
  CHECK(a == vec3f(1, 7, 3));
  CHECK(a != b);

  mat33f m(1, 2, 3, 4, 5, 6, 7, 8, 9), rows(vec3f(1, 2, 3), vec3f(4, 5, 6), vec3f(7, 8, 9)), nested{{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}};
  float rm[9];
  std::memcpy(rm, &m, sizeof m);
  CHECK((rm[1] == 2 && rm[3] == 4 && rm[8] == 9));  // row-major
  CHECK((m[0][1] == 2 && m(1, 0) == 4 && m[2][2] == 9));
  CHECK((m == rows && m == nested));
  mat22f braced({1, 2}, {3, 4});
  CHECK(braced == mat22f{{{1, 2}, {3, 4}}});
  CHECK(mat33f() == mat33f(0, 0, 0, 0, 0, 0, 0, 0, 0));
  CHECK(mat33f::identity() == mat33f(1, 0, 0, 0, 1, 0, 0, 0, 1));
  CHECK(identity<4, double>() == mat44d::identity());

  quatf q(0.5f, -1, 2, 3);
  CHECK((q[0] == 0.5f && q[1] == -1 && q[2] == 2 && q[3] == 3 && q.w == 3));
  q[2] = 9;
  CHECK(q.z == 9);
  CHECK(quatf(vec3f(1, 2, 3), 4) == quatf(1, 2, 3, 4));
  CHECK(quat_identity<float>() == quatf(0, 0, 0, 1));
  CHECK(quatf() == quatf(0, 0, 0, 0));

  transformf t(vec3f(1, 2, 3), quatf(4, 5, 6, 7));
  for (int k = 0; k < 7; ++k) CHECK(t[k] == float(k + 1));
  float rt[7];
  std::memcpy(rt, &t, sizeof t);
  CHECK((rt[0] == 1 && rt[3] == 4 && rt[6] == 7));
  CHECK(transform_identity<float>() == transformf(vec3f(), quat_identity<float>()));
  CHECK(transformf::identity()[6] == 1);

  // Other element types build the same way; 16-bit floats compute in float32.
  vec3h h(1, 2, 3);
  vec3h h2 = h + h * 2.0f;
  CHECK((float(h2[0]) == 3 && float(h2[2]) == 9 && float(dot(h, h)) == 14));
  vec<3, bfloat16> bf(1.5f, 2, -4);
  CHECK(float((bf - bf)[2]) == 0);
  CHECK(vec3i(7, 8, 9) / 2 == vec3i(3, 4, 4));
}

TEST_CASE("host math: vector and matrix values against hand-computed ones") {
  vec3f a(1, 2, 3), b(4, 5, 6);
  CHECK(a + b == vec3f(5, 7, 9));
  CHECK(b - a == vec3f(3, 3, 3));
  CHECK(-a == vec3f(-1, -2, -3));
  CHECK(+a == a);
  CHECK(a * 2 == vec3f(2, 4, 6));
  CHECK(2.0f * a == vec3f(2, 4, 6));
  CHECK(b / 2 == vec3f(2, 2.5f, 3));
  CHECK(cw_mul(a, b) == vec3f(4, 10, 18));
  CHECK(cw_div(b, a) == vec3f(4, 2.5f, 2));
  CHECK(dot(a, b) == 32);
  CHECK(cross(vec3f(1, 0, 0), vec3f(0, 1, 0)) == vec3f(0, 0, 1));
  CHECK(cross(a, b) == vec3f(-3, 6, -3));
  CHECK(length_sq(a) == 14);
  CHECK(length(vec3f(3, 4, 12)) == 13);
  CHECK(normalize(vec3f(3, 0, 4)) == vec3f(0.6f, 0, 0.8f));
  CHECK(normalize(vec3f()) == vec3f());  // Warp: zero when the length is not > 0
  CHECK(normalize(vec3d(0, -2, 0)) == vec3d(0, -1, 0));
  vec3f c = a;
  c += b;
  c -= vec3f(1, 1, 1);
  c *= 2;
  c /= 4;
  CHECK(c == vec3f(2, 3, 4));
  // Integer vectors divide as kernels do: by zero gives 0, MIN / -1 wraps.
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  CHECK(vec3i(5, -5, kMin) / 0 == vec3i(0, 0, 0));
  CHECK(vec3i(5, -5, kMin) / -1 == vec3i(-5, 5, kMin));

  mat22f m2(1, 2, 3, 4);
  mat33f m(2, 0, 1, 1, 3, 2, 1, 1, 4);
  CHECK(outer(vec2f(1, 2), a) == mat<2, 3, float>(1, 2, 3, 2, 4, 6));
  CHECK(m * a == vec3f(5, 13, 15));
  CHECK(a * m == vec3f(7, 9, 17));  // the row vector times the matrix
  CHECK(m2 * m2 == mat22f(7, 10, 15, 22));
  CHECK(transpose(mat<2, 3, float>(1, 2, 3, 4, 5, 6)) == mat<3, 2, float>(1, 4, 2, 5, 3, 6));
  CHECK(m + m == m * 2.0f);
  CHECK(m - m == mat33f());
  CHECK(-m2 == mat22f(-1, -2, -3, -4));
  CHECK(m2 / 2 == mat22f(0.5f, 1, 1.5f, 2));
  CHECK(cw_mul(m2, m2) == mat22f(1, 4, 9, 16));
  CHECK(cw_div(m2, m2) == mat22f(1, 1, 1, 1));
  CHECK(trace(m) == 9);
  CHECK(diag(a) == mat33f(1, 0, 0, 0, 2, 0, 0, 0, 3));
  CHECK(get_diag(m) == vec3f(2, 3, 4));
  CHECK(determinant(m2) == -2);
  CHECK(determinant(m) == 2 * (12 - 2) - 0 + 1 * (1 - 3));
  CHECK(determinant(mat44d(1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 2, 1, 0, 0, 1, 3)) == -2.0 * 5.0);  // block diagonal
  CHECK(determinant(diag(vec4f(1, 2, 3, 4))) == 24);
  CHECK(max_diff(inverse(m2), mat22f(-2, 1, 1.5f, -0.5f)) < 1e-6);  // 1/3 on the way: not exact
  CHECK(inverse(mat33d(1, 2, 3, 2, 4, 6, 0, 1, 1)) == mat33d());  // singular: zeros, as Warp
  CHECK(inverse(mat22f(1, 2, 2, 4)) == mat22f());
  CHECK(inverse(mat44d(1, 2, 3, 4, 1, 2, 3, 4, 0, 1, 0, 2, 5, 0, 1, 1)) == mat44d());
  CHECK(inverse(mat22f(1e-30f, 0, 0, 1e-30f)) == mat22f());  // the determinant underflows: zeros
  CHECK(inverse(diag(vec4d(2, 4, 8, 0.5))) == diag(vec4d(0.5, 0.25, 0.125, 2)));
  std::mt19937 rng(7);
  for (int k = 0; k < 20; ++k) {
    mat22d a2;
    mat33d a3;
    mat44d a4;
    for (int i = 0; i < 16; ++i) a2[i / 2 % 2][i % 2] = uniform(rng), a3[i / 3 % 3][i % 3] = uniform(rng), a4[i / 4][i % 4] = uniform(rng);
    CHECK(max_diff(inverse(a2) * a2, mat22d::identity()) < 1e-9);
    CHECK(max_diff(a3 * inverse(a3), mat33d::identity()) < 1e-9);
    CHECK(max_diff(inverse(a4) * a4, mat44d::identity()) < 1e-9);
    CHECK(std::fabs(determinant(a4 * a4) - determinant(a4) * determinant(a4)) < 1e-12);
  }
}

TEST_CASE("host math: quaternions and transforms against closed forms and identities") {
  const double pi = 3.14159265358979323846;
  quatd qz = quat_from_axis_angle(vec3d(0, 0, 1), pi / 2);
  CHECK(std::fabs(qz.z - std::sqrt(0.5)) < 1e-15);
  CHECK(std::fabs(qz.w - std::sqrt(0.5)) < 1e-15);
  vec3d y = quat_rotate(qz, vec3d(1, 0, 0));
  CHECK((std::fabs(y[0]) < 1e-15 && std::fabs(y[1] - 1) < 1e-15 && std::fabs(y[2]) < 1e-15));
  CHECK(quat_inverse(quatf(1, 2, 3, 4)) == quatf(-1, -2, -3, 4));
  CHECK(quatf(1, 0, 0, 0) * quatf(0, 1, 0, 0) == quatf(0, 0, 1, 0));  // i j = k
  CHECK(dot(quatf(1, 2, 3, 4), quatf(1, 1, 1, 1)) == 10);
  CHECK(length(quatf(1, 2, 2, 4)) == 5);
  CHECK(normalize(quatf(0, 0, 0, 2)) == quat_identity<float>());
  CHECK(normalize(quatf()) == quat_identity<float>());  // Warp: the identity when |q| is not > 0
  CHECK(normalize(quatf(0, -0.0f, 0, 0)) == quat_identity<float>());

  std::mt19937 rng(11);
  for (int k = 0; k < 40; ++k) {
    quatd q = quatd(uniform(rng), uniform(rng), uniform(rng), uniform(rng)), r = quatd(uniform(rng), uniform(rng), uniform(rng), uniform(rng));
    q = normalize(q), r = normalize(r);
    vec3d v(uniform(rng), uniform(rng), uniform(rng)), p(uniform(rng), uniform(rng), uniform(rng));
    // Rotation by a quaternion is rotation by its matrix; the inverse undoes it; products compose.
    CHECK(max_diff(quat_rotate(q, v), quat_to_matrix(q) * v) < 1e-14);
    CHECK(max_diff(quat_rotate_inv(q, quat_rotate(q, v)), v) < 1e-14);
    CHECK(max_diff(quat_rotate_inv(q, v), transpose(quat_to_matrix(q)) * v) < 1e-14);
    CHECK(max_diff(quat_rotate(q * r, v), quat_rotate(q, quat_rotate(r, v))) < 1e-14);
    CHECK(max_diff(q * quat_inverse(q), quat_identity<double>()) < 1e-15);
    // The matrix round trip gives q or -q (Warp chooses no sign).
    const quatd back = quat_from_matrix(quat_to_matrix(q));
    CHECK(std::min(max_diff(back, q), max_diff(back, -q)) < 1e-14);
    mat44d m4 = transform_to_matrix(transformd(p, q));
    CHECK(std::fabs(determinant(quat_to_matrix(q)) - 1) < 1e-14);

    // quat_rpy against Warp's closed form (the half-angle products of warp/native/quat.h).
    double roll = uniform(rng, -3, 3), pitch = uniform(rng, -1.5f, 1.5f), yaw = uniform(rng, -3, 3);
    double cr = std::cos(roll / 2), sr = std::sin(roll / 2), cp = std::cos(pitch / 2), sp = std::sin(pitch / 2);
    double cy = std::cos(yaw / 2), sy = std::sin(yaw / 2);
    quatd warp(cy * sr * cp - sy * cr * sp, cy * cr * sp + sy * sr * cp, sy * cr * cp - cy * sr * sp, cy * cr * cp + sy * sr * sp);
    quatd rpy = quat_rpy(roll, pitch, yaw);
    CHECK(max_diff(rpy, warp) < 1e-14);
    // In float32, Warp's bits: the same products in the same order (the kernels' too, below).
    {
      float r = float(roll) * 0.5f, pp = float(pitch) * 0.5f, y = float(yaw) * 0.5f;
      float fcr = std::cos(r), fsr = std::sin(r), fcp = std::cos(pp), fsp = std::sin(pp), fcy = std::cos(y), fsy = std::sin(y);
      quatf wf(fcy * fsr * fcp - fsy * fcr * fsp, fcy * fcr * fsp + fsy * fsr * fcp, fsy * fcr * fcp - fcy * fsr * fsp,
               fcy * fcr * fcp + fsy * fsr * fsp);
      quatf hf = quat_rpy(float(roll), float(pitch), float(yaw));
      CHECK((hf.x == wf.x && hf.y == wf.y && hf.z == wf.z && hf.w == wf.w));
    }
    // ...and as rotations about the fixed X, then Y, then Z axes.
    quatd by_axes = quat_from_axis_angle(vec3d(0, 0, 1), yaw) * quat_from_axis_angle(vec3d(0, 1, 0), pitch) *
                    quat_from_axis_angle(vec3d(1, 0, 0), roll);
    CHECK(max_diff(rpy, by_axes) < 1e-15);

    // Transforms: inverse undoes, products compose, the 4x4 matrix agrees.
    transformd t(p, q), u(v, r);
    vec3d x(uniform(rng), uniform(rng), uniform(rng));
    CHECK(max_diff(transform_point(transform_inverse(t), transform_point(t, x)), x) < 1e-14);
    CHECK(max_diff(transform_point(t * u, x), transform_point(t, transform_point(u, x))) < 1e-14);
    CHECK(max_diff(transform_point(m4, x), transform_point(t, x)) < 1e-14);
    CHECK(max_diff(transform_vector(m4, x), transform_vector(t, x)) < 1e-14);
    CHECK(max_diff(transform_vector(t, x), transform_point(t, x) - p) < 1e-14);
    CHECK(transform_multiply(t, u) == t * u);
    transformd tt = t * transform_inverse(t), back_t = transform_from_matrix(m4);
    CHECK(max_diff(tt, transform_identity<double>()) < 1e-14);
    CHECK(back_t.p == p);
    CHECK(std::fabs(std::fabs(dot(back_t.q, q)) - 1) < 1e-14);
  }
  transformf t(vec3f(1, 2, 3), quat_identity<float>());
  CHECK(transform_get_translation(t) == vec3f(1, 2, 3));
  CHECK(transform_get_rotation(t) == quat_identity<float>());
  CHECK(transform_point(t, vec3f(1, 1, 1)) == vec3f(2, 3, 4));
  CHECK(transform_vector(t, vec3f(1, 1, 1)) == vec3f(1, 1, 1));
  CHECK(transform_set_translation(t, vec3f()) == transform_identity<float>());
  CHECK(transform_set_rotation(t, quatf(0, 0, 1, 0)).q == quatf(0, 0, 1, 0));
  CHECK(transform_point(transformf(vec3f(), quatf(0, 0, 1, 0)), vec3f(1, 2, 3)) == vec3f(-1, -2, 3));  // pi about z
}

TEST_CASE("host math is bit-identical to the kernels' builtins (float32, cpu, random inputs)") {
  namespace k = host_math_kernels;
  std::mt19937 rng(2024);

  SUBCASE("vectors") {
    std::vector<vec3f> a, b, ov;
    std::vector<float> s, os;
    for (int i = 0; i < kN; ++i) {
      vec3f x = random_vec(rng), y = random_vec(rng);
      float c = random_scale(rng);
      if (i == 0) x = vec3f();  // normalize's zero case
      a.push_back(x), b.push_back(y), s.push_back(c);
      for (vec3f r : {x + y, x - y, -x, x * c, c * x, x / c, cw_mul(x, y), cw_div(x, y), cross(x, y), normalize(x)}) ov.push_back(r);
      for (float r : {dot(x, y), length(x), length_sq(x)}) os.push_back(r);
    }
    NdArray kov = zeros<vec3f>({10 * kN}), kos = zeros<float>({3 * kN});
    launch(k::vector_ops, kN, from_vector(a), from_vector(b), from_vector(s), kov, kos);
    check_bits(kov.to_vector<vec3f>(), ov, {"a + b", "a - b", "-a", "a * s", "s * a", "a / s", "cw_mul", "cw_div", "cross", "normalize"});
    check_bits(kos.to_vector<float>(), os, {"dot", "length", "length_sq"});
  }

  SUBCASE("matrices") {
    std::vector<mat33f> m, n, om;
    std::vector<vec3f> a, b, ov;
    std::vector<float> s, os;
    std::vector<mat22f> m2, om2;
    std::vector<mat44f> m4, om4;
    for (int i = 0; i < kN; ++i) {
      mat33f A = random_mat<3, 3>(rng), B = random_mat<3, 3>(rng);
      mat22f A2 = random_mat<2, 2>(rng);
      mat44f A4 = random_mat<4, 4>(rng);
      vec3f x = random_vec(rng), y = random_vec(rng);
      float c = random_scale(rng);
      if (i == 0) A = mat33f(), A2 = mat22f(1, 2, 2, 4), A4 = mat44f();  // singular: Warp's zeros
      if (i == 1)  // a repeated row: singular too
        for (int j = 0; j < 4; ++j) A4[3][j] = A4[1][j], A[2][j % 3] = A[0][j % 3];
      m.push_back(A), n.push_back(B), a.push_back(x), b.push_back(y), s.push_back(c), m2.push_back(A2), m4.push_back(A4);
      for (const mat33f& r : {A + B, A - B, A * B, transpose(A), inverse(A), outer(x, y), diag(x), A * c, A / c, -A + identity<3, float>()})
        om.push_back(r);
      ov.push_back(A * x), ov.push_back(x * A);
      for (float r : {determinant(A), trace(A), determinant(A2), determinant(A4)}) os.push_back(r);
      om2.push_back(inverse(A2)), om4.push_back(inverse(A4));
    }
    NdArray kom = zeros<mat33f>({10 * kN}), kov = zeros<vec3f>({2 * kN}), kos = zeros<float>({4 * kN});
    NdArray kom2 = zeros<mat22f>({kN}), kom4 = zeros<mat44f>({kN});
    launch(k::matrix_ops, kN, from_vector(m), from_vector(n), from_vector(a), from_vector(b), from_vector(s), from_vector(m2),
           from_vector(m4), kom, kov, kos, kom2, kom4);
    check_bits(kom.to_vector<mat33f>(), om,
               {"A + B", "A - B", "A * B", "transpose", "inverse", "outer", "diag", "A * s", "A / s", "-A + identity"});
    check_bits(kov.to_vector<vec3f>(), ov, {"A * x", "x * A"});
    check_bits(kos.to_vector<float>(), os, {"determinant 3x3", "trace", "determinant 2x2", "determinant 4x4"});
    check_bits(kom2.to_vector<mat22f>(), om2, {"inverse 2x2"});
    check_bits(kom4.to_vector<mat44f>(), om4, {"inverse 4x4"});
  }

  SUBCASE("quaternions") {
    std::vector<quatf> q, r, oq;
    std::vector<vec3f> a, ov;
    std::vector<float> s, os;
    std::vector<mat33f> rot, om;
    for (int i = 0; i < kN; ++i) {
      quatf Q = random_unit_quat(rng, i), P(uniform(rng), uniform(rng), uniform(rng), uniform(rng));
      if (i == 0) P = quatf();  // normalize's identity case
      vec3f x = random_vec(rng);
      float s0 = uniform(rng, -4, 4), s1 = uniform(rng, -4, 4), s2 = random_scale(rng);
      mat33f R = quat_to_matrix(random_unit_quat(rng, i + 1));
      q.push_back(Q), r.push_back(P), a.push_back(x), rot.push_back(R);
      s.push_back(s0), s.push_back(s1), s.push_back(s2);
      for (quatf o : {Q * P, quat_inverse(Q), normalize(P), quat_from_axis_angle(normalize(x), s0), quat_rpy(s0, s1, s2),
                      quat_from_matrix(R), (Q + P) * s1 - P / s2, quat_identity<float>() * Q})
        oq.push_back(o);
      ov.push_back(quat_rotate(Q, x)), ov.push_back(quat_rotate_inv(Q, x));
      om.push_back(quat_to_matrix(Q));
      os.push_back(length(P)), os.push_back(dot(Q, P));
    }
    NdArray koq = zeros<quatf>({8 * kN}), kov = zeros<vec3f>({2 * kN}), kom = zeros<mat33f>({kN}), kos = zeros<float>({2 * kN});
    launch(k::quat_ops, kN, from_vector(q), from_vector(r), from_vector(a), from_vector(s), from_vector(rot), koq, kov, kom, kos);
    check_bits(koq.to_vector<quatf>(), oq,
               {"q * r", "quat_inverse", "normalize", "quat_from_axis_angle", "quat_rpy", "quat_from_matrix", "(q + r) * s - r / s",
                "quat_identity * q"});
    check_bits(kov.to_vector<vec3f>(), ov, {"quat_rotate", "quat_rotate_inv"});
    check_bits(kom.to_vector<mat33f>(), om, {"quat_to_matrix"});
    check_bits(kos.to_vector<float>(), os, {"length", "dot"});
  }

  SUBCASE("quaternion arcs: quat_slerp and quat_to_axis_angle") {
    std::vector<quatf> q, r, oq;
    std::vector<vec3f> ov;
    std::vector<float> s, os;
    for (int i = 0; i < kN; ++i) {
      quatf Q = random_unit_quat(rng, i), P = random_unit_quat(rng, i + 3);
      if (i == 0) P = quatf::identity();       // a zero axis
      if (i == 1) P = -quatf::identity();      // -0 axis components
      if (i == 2) P = -P;                      // the same rotation with the other sign
      if (i == 3) P = Q;                       // slerp between equal rotations
      float t = uniform(rng, -0.5f, 1.5f);
      q.push_back(Q), r.push_back(P), s.push_back(t);
      oq.push_back(quat_slerp(Q, P, t));
      vec3f axis;
      float angle;
      quat_to_axis_angle(P, axis, angle);  // Warp's spelling; the pair form is checked below
      ov.push_back(axis), os.push_back(angle);
      auto [axis2, angle2] = quat_to_axis_angle(P);
      CHECK(std::memcmp(&axis2, &axis, sizeof axis) == 0);
      CHECK(std::memcmp(&angle2, &angle, sizeof angle) == 0);
    }
    CHECK(std::signbit(ov[1][0]));  // -identity: Warp's -0 axis
    NdArray koq = zeros<quatf>({kN}), kov = zeros<vec3f>({kN}), kos = zeros<float>({kN});
    launch(k::quat_arcs, kN, from_vector(q), from_vector(r), from_vector(s), koq, kov, kos);
    check_bits(koq.to_vector<quatf>(), oq, {"quat_slerp"});
    check_bits(kov.to_vector<vec3f>(), ov, {"quat_to_axis_angle axis"});
    check_bits(kos.to_vector<float>(), os, {"quat_to_axis_angle angle"});
  }

  SUBCASE("transforms") {
    std::vector<transformf> t, u, ot;
    std::vector<vec3f> a, ov;
    std::vector<mat44f> m, om;
    for (int i = 0; i < kN; ++i) {
      transformf X = random_transform(rng, i), Y = random_transform(rng, i + 2);
      mat44f M = transform_to_matrix(random_transform(rng, i + 1));
      vec3f x = random_vec(rng);
      t.push_back(X), u.push_back(Y), a.push_back(x), m.push_back(M);
      for (const transformf& o : {transform_multiply(X, Y), X * Y, transform_inverse(X), transform_from_matrix(M), transform_identity<float>() * X})
        ot.push_back(o);
      for (vec3f o : {transform_point(X, x), transform_vector(X, x), transform_point(M, x), transform_vector(M, x)}) ov.push_back(o);
      om.push_back(transform_to_matrix(X));
    }
    NdArray kot = zeros<transformf>({5 * kN}), kov = zeros<vec3f>({4 * kN}), kom = zeros<mat44f>({kN});
    launch(k::transform_ops, kN, from_vector(t), from_vector(u), from_vector(a), from_vector(m), kot, kov, kom);
    check_bits(kot.to_vector<transformf>(), ot,
               {"transform_multiply", "t * u", "transform_inverse", "transform_from_matrix", "transform_identity * t"});
    check_bits(kov.to_vector<vec3f>(), ov, {"transform_point", "transform_vector", "transform_point (4x4)", "transform_vector (4x4)"});
    check_bits(kom.to_vector<mat44f>(), om, {"transform_to_matrix"});
  }
}
