// Tangents through device functions: derived from their bodies (loops, branches, arrays,
// several results, functions calling functions), or given by the user with .jvp, which
// forward mode uses instead of the body and reverse mode does not.
#include <doctest/doctest.h>

#include <cmath>
#include <tuple>
#include <vector>

#include "forward_support.hpp"

namespace fwd_funcs {
using namespace kjit::dsl;
KJIT_MODULE(forward_functions)

inline const auto spring = func("spring", [](auto d, auto rest, auto k) {
  auto len = length(d);
  return d * (k * (len - rest) / len);
});

/// A loop with a carried Var and a branch, calling another function.
inline const auto relax = func("relax", [](Vec3d x, Double c, Int steps) {
  Var<Vec3d> w = x;
  For(0, steps, [&](Int) {
    w = w + spring(w, 1.0, c) * 0.1;
    If(length(w) > 2.0, [&] { w = w * 0.5; });
  });
  return Vec3d(w);
});

/// Several results.
inline const auto polar = func("polar", [](Double x, Double y) { return std::make_tuple(sqrt(x * x + y * y), atan2(y, x)); });

/// Reads an array anywhere and adds into another: a void function with array arguments.
inline const auto scatter = func("scatter", [](Array<double> a, Array<double> out, Int i, Double s) {
  Int j = (i + 1) % a.shape(0);
  atomic_add(out, j, a[i] * a[j] * s);
});

/// sqrt with a user tangent that is finite at 0: forward mode must use it.
inline const auto soft_sqrt = func("soft_sqrt", [](auto x) { return sqrt(x); })
                                  .jvp([](auto x, auto dx) { return dx * 0.5 / max(sqrt(x), 1e-3); });

/// A user tangent that differs from the body's derivative on purpose (3 dx, not 2 x dx): the
/// tangent kernel must call it; the adjoint, which derives from the body, does not.
inline const auto marked = func("marked", [](auto x) { return x * x; }).jvp([](auto x, auto dx) { return dx * 3.0; });

/// A void function with a user tangent writing the tangent array.
inline const auto put = func("put", [](Array<double> out, Int i, Double v) { out[i] = v * v; })
                            .jvp([](Array<double> out, Int i, Double v, Array<double> dout, Int, Double dv) { dout[i] = 2.0 * v * dv; });

KJIT_KERNEL(relaxed, (Array<Vec3d> x, Array<double> c, Int steps, Array<Vec3d> out)) {
  Int i = tid();
  out[i] = relax(x[i], c[i], steps);
}

KJIT_KERNEL(polars, (Array<double> x, Array<double> y, Array<double> r, Array<double> phi)) {
  Int i = tid();
  auto [a, b] = polar(x[i], y[i]);
  r[i] = a;
  phi[i] = b * a;
}

KJIT_KERNEL(scatters, (Array<double> a, Double s, Array<double> out)) { scatter(a, out, tid(), s); }

KJIT_KERNEL(soft, (Array<double> x, Array<double> out)) { out[tid()] = soft_sqrt(x[tid()]) * 2.0; }

KJIT_KERNEL(marks, (Array<double> x, Array<double> out)) { out[tid()] = marked(x[tid()]) + x[tid()]; }

KJIT_KERNEL(puts, (Array<double> x, Array<double> out)) { put(out, tid(), x[tid()] + 1.0); }
}  // namespace fwd_funcs

using namespace kjit;
using forward_support::expect_tangents_pass;
using forward_support::random_values;

TEST_CASE("derived tangents of device functions: loops, branches, calls, several results, arrays") {
  for (int n : {5, 37}) {
    INFO("n = " << n);
    auto r = random_values(3 * n, -1, 1, 1);
    std::vector<vec3d> x(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) x[size_t(i)][c] = 0.3 + r[size_t(3 * i + c)];
    auto C = from_vector(random_values(n, 0.5, 2, 2));
    expect_tangents_pass(check_gradients(fwd_funcs::relaxed, n, {from_vector(x), C, 4, zeros<vec3d>({n})}), 2);
    auto X = from_vector(random_values(n, 0.2, 1, 3)), Y = from_vector(random_values(n, -1, 1, 4));
    expect_tangents_pass(check_gradients(fwd_funcs::polars, n, {X, Y, zeros<double>({n}), zeros<double>({n})}), 2);
    expect_tangents_pass(check_gradients(fwd_funcs::scatters, n, {X, 1.5, zeros<double>({n})}), 2);
  }
}

TEST_CASE("a user .jvp replaces the body's derivative in forward mode") {
  const int n = 4;
  std::vector<double> x = {0.0, 1e-8, 0.25, 4.0}, dx = {1.0, -2.0, 0.5, 3.0};
  auto out = zeros<double>({n}), dout = zeros<double>({n});
  launch_tangent(fwd_funcs::soft, n, {from_vector(x), out}, {from_vector(dx), dout});
  auto d = dout.to_vector<double>(), o = out.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    CHECK(o[size_t(i)] == doctest::Approx(2 * std::sqrt(x[size_t(i)])));
    CHECK(d[size_t(i)] == doctest::Approx(dx[size_t(i)] / std::max(std::sqrt(x[size_t(i)]), 1e-3)));
  }
  CHECK(std::isfinite(d[0]));  // the body's derivative is infinite there

  auto dm = zeros<double>({n});
  launch_tangent(fwd_funcs::marks, n, {from_vector(x), zeros<double>({n})}, {from_vector(dx), dm});
  auto m = dm.to_vector<double>();
  for (int i = 0; i < n; ++i) CHECK(m[size_t(i)] == doctest::Approx(4 * dx[size_t(i)]));  // 3 dx + dx

  auto dp = zeros<double>({n}), p = zeros<double>({n});
  launch_tangent(fwd_funcs::puts, n, {from_vector(x), p}, {from_vector(dx), dp});
  auto pv = p.to_vector<double>(), dpv = dp.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    CHECK(pv[size_t(i)] == doctest::Approx((x[size_t(i)] + 1) * (x[size_t(i)] + 1)));
    CHECK(dpv[size_t(i)] == doctest::Approx(2 * (x[size_t(i)] + 1) * dx[size_t(i)]));
  }
}

TEST_CASE("a .jvp that disagrees with the body shows in check_gradients' dot product") {
  auto X = from_vector(random_values(6, 0.5, 1.5, 5));
  GradCheckReport r = check_gradients(fwd_funcs::marks, 6, {X, zeros<double>({6})});
  bool dot_failed = false;
  for (const GradCheckParam& p : r.tangents)
    if (p.check == "dot") dot_failed = !p.passed;
  CHECK(dot_failed);
  CHECK(!r.passed());
}
