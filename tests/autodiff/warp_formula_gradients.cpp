// Derivatives at the special points of the formulas kjit shares with Warp: the inverse of a
// singular matrix is Warp's zero matrix, so its adjoint and tangent are zero there too (and
// finite differences agree next to it, where the matrix is invertible); slerp's axis-angle
// form at q1 = q0 or -q0 (no rotation between them) keeps its derivative, which the axis
// form alone loses (a zero axis); the 4x4 determinant's adjoint is the cofactor matrix.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "kjit/runtime/tape.hpp"

namespace warp_formula_grads {
using namespace kjit::dsl;
KJIT_MODULE(autodiff_warp_formulas)

KJIT_KERNEL(inverse2, (Array<Mat22d> a, Array<Mat22d> out)) { Int i = tid(); out[i] = inverse(a[i]); }
KJIT_KERNEL(inverse3, (Array<Mat33d> a, Array<Mat33d> out)) { Int i = tid(); out[i] = inverse(a[i]); }
KJIT_KERNEL(inverse4, (Array<Mat44d> a, Array<Mat44d> out)) { Int i = tid(); out[i] = inverse(a[i]); }
KJIT_KERNEL(inverse4f, (Array<Mat44f> a, Array<Mat44f> out)) { Int i = tid(); out[i] = inverse(a[i]); }
KJIT_KERNEL(determinant4, (Array<Mat44d> a, Array<double> out)) { Int i = tid(); out[i] = determinant(a[i]); }
KJIT_KERNEL(slerp, (Array<Quatd> a, Array<Quatd> b, Array<double> t, Array<Quatd> out)) {
  Int i = tid();
  out[i] = quat_slerp(a[i], b[i], t[i]);
}
KJIT_KERNEL(slerpf, (Array<Quatf> a, Array<Quatf> b, Array<float> t, Array<Quatf> out)) {
  Int i = tid();
  out[i] = quat_slerp(a[i], b[i], t[i]);
}
}  // namespace warp_formula_grads

using namespace kjit;

namespace {

/// Singular n x n matrices (row-major, n*n values each, exact binary fractions so that the
/// determinant is exactly 0): zero, all ones (rank 1), a repeated row, a zero column.
std::vector<double> singular(int n) {
  std::vector<double> out;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double x = 0;
        if (k == 1) x = 1;
        if (k == 2) x = (i == 1 ? 0 : i) * 0.5 + j - 0.25 * j * j;  // rows 0 and 1 equal
        if (k == 3) x = j == n - 1 ? 0 : 1 + i + (i + 1) * j * j;
        out.push_back(x);
      }
  return out;
}

/// Forward, adjoint (tape, output weights 1) and tangent (a direction of ones) of the inverse
/// at singular matrices: all zero.
template <class M, class K>
void check_singular_inverse(const K& kernel, int n) {
  const std::vector<double> values = singular(n);
  const int count = int(values.size()) / (n * n);
  std::vector<M> mats(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) mats[size_t(k)][i][j] = values[size_t(k * n * n + i * n + j)];
  NdArray a = from_vector(mats).requires_grad(), out = zeros<M>({count});
  Tape tape;
  {
    auto on = tape.record();
    launch(kernel, count, a, out);
  }
  std::vector<M> ones(static_cast<size_t>(count));
  for (M& m : ones)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) m[i][j] = 1;
  tape.backward({{out, from_vector(ones)}});
  NdArray dout = zeros<M>({count}), out2 = zeros<M>({count});
  launch_tangent(kernel, count, {a, out2}, {from_vector(ones), dout});
  const std::vector<M> value = out.to_vector<M>(), grad = a.grad().to_vector<M>(), tangent = dout.to_vector<M>();
  for (int k = 0; k < count; ++k) {
    INFO("matrix " << k << " of size " << n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        CHECK(value[size_t(k)][i][j] == 0);
        CHECK(grad[size_t(k)][i][j] == 0);
        CHECK(tangent[size_t(k)][i][j] == 0);
      }
  }
}

/// A unit quaternion from a seed.
quatd unit_quat(std::mt19937& rng) {
  std::normal_distribution<double> g;
  quatd q(g(rng), g(rng), g(rng), g(rng));
  return normalize(q);
}

}  // namespace

TEST_CASE("the inverse of a singular matrix is zero, and so are its adjoint and tangent") {
  namespace k = warp_formula_grads;
  check_singular_inverse<mat22d>(k::inverse2, 2);
  check_singular_inverse<mat33d>(k::inverse3, 3);
  check_singular_inverse<mat44d>(k::inverse4, 4);
}

TEST_CASE("the 4x4 inverse's derivatives match finite differences (float64 and float32)") {
  namespace k = warp_formula_grads;
  // Near singular (row 3 = row 0 + row 1, then 0.01 k added to [3][3]: condition numbers
  // 600 to 1800), where the adjugate formulas lose the most.
  std::vector<mat44d> m(3);
  for (int k4 = 0; k4 < 3; ++k4) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) m[size_t(k4)][i][j] = i == j ? 1.0 : 0.1 * (i + 1) * (j + 2);
    for (int j = 0; j < 4; ++j) m[size_t(k4)][3][j] = m[size_t(k4)][0][j] + m[size_t(k4)][1][j];
    m[size_t(k4)][3][3] += 0.01 * (k4 + 1);
  }
  GradCheckReport r = check_gradients(k::inverse4, 3, {from_vector(m), zeros<mat44d>({3})});
  INFO(r.str());
  CHECK(r.passed());
  CHECK(r.tangent_error.empty());
  // float32: Warp's double reciprocal and products; the derivative of what it computes.
  std::vector<mat44f> mf(4);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  for (mat44f& x : mf)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) x[i][j] = (i == j ? 2.0f : 0.0f) + u(rng);
  GradCheckReport rf = check_gradients(k::inverse4f, 4, {from_vector(mf), zeros<mat44f>({4})});
  INFO(rf.str());
  CHECK(rf.passed());
}

TEST_CASE("the 4x4 determinant's adjoint is the cofactor matrix: det(A) A^-T") {
  namespace k = warp_formula_grads;
  mat44d a(1, -2.5, 0.5, 3, -1.25, 2, -0.75, 4, 1.5, -3, 0.25, 2.5, -2, 0.75, 3.5, -0.5);
  NdArray x = from_vector<mat44d>({a}).requires_grad(), out = zeros<double>({1});
  Tape tape;
  {
    auto on = tape.record();
    launch(k::determinant4, 1, x, out);
  }
  tape.backward(out);
  const mat44d g = x.grad().to_vector<mat44d>()[0], inv = inverse(a);
  const double det = out.to_vector<double>()[0];
  CHECK(det == doctest::Approx(determinant(a)));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) CHECK(g[i][j] == doctest::Approx(det * inv[j][i]).epsilon(1e-12));
}

TEST_CASE("quat_slerp's derivatives at q1 = q0 and q1 = -q0 match finite differences") {
  namespace k = warp_formula_grads;
  std::mt19937 rng(3);
  const int n = 8;
  std::vector<quatd> a, b;
  std::vector<double> t;
  for (int i = 0; i < n; ++i) {
    quatd q = unit_quat(rng);
    a.push_back(q);
    b.push_back(i % 2 ? -q : q);  // no rotation between them: r = q0* q1 = +-1
    t.push_back(0.1 + 0.8 * i / (n - 1));
  }
  GradCheckReport r = check_gradients(k::slerp, n, {from_vector(a), from_vector(b), from_vector(t), zeros<quatd>({n})});
  INFO(r.str());
  CHECK(r.passed());
  CHECK(r.tangent_error.empty());
  // At q1 = q0, d slerp / d q1 along a direction v is t v (to first order q0 (q0* (q0 + e v))^t).
  NdArray dout = zeros<quatd>({n}), out = zeros<quatd>({n});
  std::vector<quatd> v(size_t(n), quatd(0.3, -0.2, 0.1, 0.05)), zero(size_t(n), quatd(0, 0, 0, 0));
  std::vector<double> dt(size_t(n), 0.0);
  launch_tangent(k::slerp, n, {from_vector(a), from_vector(a), from_vector(t), out},
                 {from_vector(zero), from_vector(v), from_vector(dt), dout});
  const std::vector<quatd> d = dout.to_vector<quatd>();
  for (int i = 0; i < n; ++i) {
    INFO("element " << i);
    // q0 (1 + e t q0* v)'s vector and real parts: the real part of q0* v only rescales |q|,
    // which the unit result drops; so compare against t times v's part orthogonal to q0.
    const quatd q = a[size_t(i)], vv = v[size_t(i)];
    const double along = dot(q, vv);
    const quatd expect = (vv - q * along) * t[size_t(i)];
    CHECK(d[size_t(i)].x == doctest::Approx(expect.x).epsilon(1e-9));
    CHECK(d[size_t(i)].y == doctest::Approx(expect.y).epsilon(1e-9));
    CHECK(d[size_t(i)].z == doctest::Approx(expect.z).epsilon(1e-9));
    CHECK(d[size_t(i)].w == doctest::Approx(expect.w).epsilon(1e-9));
  }
  // float32 too, at the same points.
  std::vector<quatf> af, bf;
  std::vector<float> tf;
  for (int i = 0; i < n; ++i) {
    af.push_back(quatf(float(a[size_t(i)].x), float(a[size_t(i)].y), float(a[size_t(i)].z), float(a[size_t(i)].w)));
    bf.push_back(i % 2 ? -af.back() : af.back());
    tf.push_back(float(t[size_t(i)]));
  }
  GradCheckReport rf = check_gradients(k::slerpf, n, {from_vector(af), from_vector(bf), from_vector(tf), zeros<quatf>({n})});
  INFO(rf.str());
  CHECK(rf.passed());
}
