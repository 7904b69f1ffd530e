// The tangent kernels of the example kernels (saxpy, springs, damp, iterate): values against
// closed forms, and check_gradients' forward-mode checks (finite differences, <J v, w>).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "gradient_support.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;

TEST_CASE("daxpy's tangent is da x + a dx + dy, with the primal written too") {
  const int n = 37;
  std::vector<double> x(n), y(n), dx(n), dy(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5 * i - 3;
    y[i] = std::sin(i);
    dx[i] = std::cos(0.3 * i);
    dy[i] = 0.25 * i;
  }
  auto X = from_vector(x), Y = from_vector(y), DX = from_vector(dx), DY = from_vector(dy);
  auto out = zeros<double>({n}), dout = zeros<double>({n});
  const double a = 1.75, da = -0.5;
  launch_tangent(demo::daxpy, n, {X, Y, a, out}, {DX, DY, da, dout});
  auto o = out.to_vector<double>(), d = dout.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    CHECK(o[i] == doctest::Approx(a * x[i] + y[i]));
    CHECK(d[i] == doctest::Approx(da * x[i] + a * dx[i] + dy[i]));
  }
}

TEST_CASE("the examples' tangents pass check_gradients (finite differences and <J v, w>)") {
  std::mt19937 rng(3);
  const int n = 37;
  auto v = autodiff_support::random_values(3 * n, -2, 2, 1);
  std::vector<vec3f> vel(n);
  for (int i = 0; i < n; ++i) vel[i] = vec3f{float(v[3 * i]), float(v[3 * i + 1]), float(v[3 * i + 2])};
  auto V = from_vector(vel), out = zeros<vec3f>({n});
  GradCheckReport r = check_gradients(demo::damp, n, {V, 1.3f, 5, out});
  INFO(r.str());
  autodiff_support::expect_pass(r);
  CHECK(r.tangents.size() == 3);  // v -> out, v (dot), c -> out
}

TEST_CASE("print report") {
  const int n = 37;
  auto v = autodiff_support::random_values(3 * n, -2, 2, 1);
  std::vector<vec3f> vel(n);
  for (int i = 0; i < n; ++i) vel[i] = vec3f{float(v[3 * i]), float(v[3 * i + 1]), float(v[3 * i + 2])};
  auto V = from_vector(vel), out = zeros<vec3f>({n});
  GradCheckReport r = check_gradients(demo::damp, n, {V, 1.3f, 5, out});
  MESSAGE(r.str());
}
