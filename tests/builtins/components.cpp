// Component assignment on Var locals (vectors, matrices, struct fields), read-modify-write of
// one component with exact adjoints (Warp double-counts these, issue #1697), and mod's
// gradient with respect to both operands — forward values and finite differences.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "kjit/ir/ir.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "kjit/kernel.hpp"

namespace components {
using namespace kjit::dsl;
KJIT_MODULE(builtins_components)

KJIT_KERNEL(vector_rmw, (Array<Vec3d> x, Array<double> s, Array<Vec3d> out)) {
  Int i = tid();
  Var<Vec3d> w = x[i];
  w.x() += s[i] * w.y();  // read-modify-write of one component, reading another
  w[2] *= w.x();          // uses the updated x
  w.y() = w.y() * w.y();  // overwrite with a function of itself
  w[0] -= 1.0;
  out[i] = w;
}

KJIT_KERNEL(matrix_rmw, (Array<Mat33d> a, Array<double> s, Array<Mat33d> out)) {
  Int i = tid();
  Var<Mat33d> m = a[i];
  m(0, 1) += m(1, 0) * s[i];
  m[2] = m[0] * 2.0;       // row assignment
  m[1][1] -= m(2, 2);      // element through a row
  m[1] *= m(0, 0);         // scale a row in place
  out[i] = m;
}

KJIT_KERNEL(loop_rmw, (Array<Vec2d> x, Array<double> c, Int steps, Array<Vec2d> out)) {
  Int i = tid();
  Var<Vec2d> w = x[i];
  For(0, steps, [&](Int) {
    w.x() += c[i] * w.y();
    w.y() *= c[i];
  });
  out[i] = w;
}

KJIT_KERNEL(mod_both, (Array<double> a, Array<double> b, Array<double> out)) {
  Int i = tid();
  out[i] = a[i] % b[i];
}

}  // namespace components

namespace components_errors {  // a module of its own: a kernel that fails to trace fails its module
using namespace kjit::dsl;
KJIT_MODULE(builtins_component_errors)
KJIT_KERNEL(plain_component_error, (Array<Vec3f> x)) {
  Vec3f v = x[tid()];
  v.x() = 1.0f;  // v is not a Var: an error that names this line
}
}  // namespace components_errors

using namespace kjit;

TEST_CASE("component assignment on a Var vector: values and gradients") {
  const int n = 5;
  std::vector<vec3d> x;
  std::vector<double> s;
  for (int i = 0; i < n; ++i) x.push_back(vec3d{{0.3 + i, -0.7 + 0.1 * i, 1.1 - 0.2 * i}}), s.push_back(0.5 - 0.3 * i);
  NdArray out = zeros<vec3d>({n});
  launch(components::vector_rmw, n, from_vector(x), from_vector(s), out);
  auto o = out.to_vector<vec3d>();
  for (int i = 0; i < n; ++i) {
    double wx = x[size_t(i)][0] + s[size_t(i)] * x[size_t(i)][1];
    double wz = x[size_t(i)][2] * wx;
    double wy = x[size_t(i)][1] * x[size_t(i)][1];
    CHECK(o[size_t(i)][0] == doctest::Approx(wx - 1.0));
    CHECK(o[size_t(i)][1] == doctest::Approx(wy));
    CHECK(o[size_t(i)][2] == doctest::Approx(wz));
  }
  GradCheckReport r = check_gradients(components::vector_rmw, n, {from_vector(x), from_vector(s), zeros<vec3d>({n})});
  INFO(r.str());
  CHECK(r.passed());
}

TEST_CASE("component and row assignment on a Var matrix: values and gradients") {
  const int n = 4;
  std::vector<mat33d> a(n);
  std::vector<double> s;
  for (int i = 0; i < n; ++i) {
    for (int r = 0; r < 3; ++r) for (int c = 0; c < 3; ++c) a[size_t(i)][r][c] = 0.1 * (i + 1) + 0.3 * r - 0.2 * c;
    s.push_back(0.7 - 0.2 * i);
  }
  NdArray out = zeros<mat33d>({n});
  launch(components::matrix_rmw, n, from_vector(a), from_vector(s), out);
  auto o = out.to_vector<mat33d>();
  for (int i = 0; i < n; ++i) {
    mat33d m = a[size_t(i)];
    m[0][1] += m[1][0] * s[size_t(i)];
    for (int c = 0; c < 3; ++c) m[2][c] = m[0][c] * 2.0;
    m[1][1] -= m[2][2];
    for (int c = 0; c < 3; ++c) m[1][c] *= m[0][0];
    for (int r = 0; r < 3; ++r) for (int c = 0; c < 3; ++c) CHECK(o[size_t(i)][r][c] == doctest::Approx(m[r][c]));
  }
  GradCheckReport r = check_gradients(components::matrix_rmw, n, {from_vector(a), from_vector(s), zeros<mat33d>({n})});
  INFO(r.str());
  CHECK(r.passed());
}

TEST_CASE("component read-modify-write carried through a dynamic loop: gradients") {
  const int n = 3;
  std::vector<vec2d> x{vec2d{{0.5, 0.25}}, vec2d{{-1, 0.5}}, vec2d{{0.1, -0.3}}};
  std::vector<double> c{0.9, 1.05, -0.8};
  GradCheckReport r = check_gradients(components::loop_rmw, n, {from_vector(x), from_vector(c), 7, zeros<vec2d>({n})});
  INFO(r.str());
  CHECK(r.passed());
}

TEST_CASE("mod: forward value and gradients with respect to both operands") {
  std::vector<double> a{2.3, -2.3, 7.5, -7.25, 0.35}, b{0.9, 0.9, -2.0, 2.0, 0.3};
  const int n = int(a.size());
  NdArray out = zeros<double>({n});
  launch(components::mod_both, n, from_vector(a), from_vector(b), out);
  NdArray ga = zeros<double>({n}), gb = zeros<double>({n});
  std::vector<double> seed(size_t(n), 1.0);
  launch_adjoint(components::mod_both, n, {from_vector(a), from_vector(b), out}, {ga, gb, from_vector(seed)});
  auto o = out.to_vector<double>(), da = ga.to_vector<double>(), db = gb.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    CHECK(o[size_t(i)] == doctest::Approx(std::fmod(a[size_t(i)], b[size_t(i)])));
    CHECK(da[size_t(i)] == doctest::Approx(1.0));                                   // d/da = 1
    CHECK(db[size_t(i)] == doctest::Approx(-std::trunc(a[size_t(i)] / b[size_t(i)])));  // d/db = -trunc(a/b)
  }
  GradCheckReport r = check_gradients(components::mod_both, n, {from_vector(a), from_vector(b), zeros<double>({n})});
  INFO(r.str());
  CHECK(r.passed());
}

TEST_CASE("assigning a component of a plain value is a tracing error naming the line") {
  try {
    (void)components_errors::plain_component_error.def().ir();
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    CHECK(std::string(e.what()).find("components.cpp:60") != std::string::npos);
    CHECK(std::string(e.what()).find("not a Var") != std::string::npos);
  }
}
