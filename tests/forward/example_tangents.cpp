// The tangent kernels of the example kernels (saxpy, springs, damp, iterate): values against
// closed forms, check_gradients' forward-mode checks (finite differences along a direction
// and <J v, w> = <v, J^T w>) at launch sizes with lane blocks and tails, absent tangents,
// and strided arrays against dense ones.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "forward_support.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;
using forward_support::expect_tangents_pass;
using forward_support::random_values;

TEST_CASE("daxpy's tangent is da x + a dx + dy, and the launch writes the primal too") {
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
  SUBCASE("absent tangents are zero directions") {
    auto d2 = zeros<double>({n});
    launch_tangent(demo::daxpy, n, {X, Y, a, out}, {DX, {}, {}, d2});
    auto got = d2.to_vector<double>();
    for (int i = 0; i < n; ++i) CHECK(got[i] == doctest::Approx(a * dx[i]));
  }
  SUBCASE("an absent output tangent: the primal is still written") {
    auto o2 = zeros<double>({n});
    launch_tangent(demo::daxpy, n, {X, Y, a, o2}, {DX, DY, da, {}});
    CHECK(o2.to_vector<double>() == o);
  }
}

TEST_CASE("the examples' tangents pass check_gradients at sizes with lane blocks and tails") {
  for (int n : {1, 37, 1003}) {
    INFO("n = " << n);
    // Velocities whose damped length (|v| 1.3^5) stays clear of damp's limit of 10 on both
    // sides, so that no step of the finite differences crosses the If.
    auto v = random_values(3 * n, -1, 1, unsigned(n)), radius = random_values(n, 0, 1, unsigned(n + 1));
    std::vector<vec3f> vel(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      double l = std::sqrt(v[size_t(3 * i)] * v[size_t(3 * i)] + v[size_t(3 * i + 1)] * v[size_t(3 * i + 1)] +
                           v[size_t(3 * i + 2)] * v[size_t(3 * i + 2)]);
      double r = radius[size_t(i)] < 0.5 ? 0.2 + 4 * radius[size_t(i)] : 1.0 + 4 * radius[size_t(i)];  // < 2.2 or > 3
      for (int c = 0; c < 3; ++c) vel[size_t(i)][c] = float(v[size_t(3 * i + c)] * r / l);
    }
    GradCheckOptions o;
    o.max_elements = 8;  // the adjoint's per-component differences; the tangent checks every output
    expect_tangents_pass(check_gradients(demo::damp, n, {from_vector(vel), 1.3f, 5, zeros<vec3f>({n})}, o), 2);
    auto X = from_vector(random_values(n, -1, 1, 11)), C = from_vector(random_values(n, 0.3, 0.8, 12));
    expect_tangents_pass(check_gradients(demo::iterate, n, {X, C, 7, zeros<double>({n})}, o), 2);
    expect_tangents_pass(check_gradients(demo::daxpy, n, {X, C, 0.7, zeros<double>({n})}, o), 3);
  }
}

TEST_CASE("check_gradients checks a value parameter three ways: its summed adjoint, its tangent, the dot product") {
  const int n = 37;
  auto X = from_vector(random_values(n, -1, 1, 21)), Y = from_vector(random_values(n, -1, 1, 22));
  GradCheckReport r = check_gradients(demo::daxpy, n, {X, Y, 0.7, zeros<double>({n})});
  INFO(r.str());
  CHECK(r.passed());
  std::set<std::string> rows;
  for (const GradCheckParam& p : r.params) rows.insert("adjoint " + p.name);
  for (const GradCheckParam& p : r.tangents) rows.insert(p.check + " " + p.name);
  CHECK(rows.count("adjoint a") == 1);     // d L / d a: the sum over the threads
  CHECK(rows.count("tangent a -> out") == 1);  // J v for a direction of a: a broadcast
  CHECK(rows.count("dot a") == 1);         // <J v, w> = <v, J^T w> with J^T w that sum
  for (const GradCheckParam& p : r.tangents)
    if (p.check == "dot" && p.name == "a") CHECK(p.worst_adjoint == doctest::Approx(p.worst_numeric).epsilon(1e-12));
}

TEST_CASE("springs: tangents of atomic_add outputs against finite differences and the adjoint") {
  const int np = 7, ns = 12;
  std::vector<vec3d> x(np);
  auto r = random_values(3 * np, -1.5, 1.5, 5);
  for (int p = 0; p < np; ++p)
    for (int c = 0; c < 3; ++c) x[size_t(p)][c] = r[size_t(3 * p + c)];
  std::vector<int> pairs;
  for (int s = 0; s < ns; ++s) {
    pairs.push_back(s % np);
    pairs.push_back((s + 1 + s / np) % np);
  }
  auto rest = from_vector(random_values(ns, 0.5, 0.8, 6));
  expect_tangents_pass(check_gradients(demo::springs_f64, ns, {from_vector(x), from_vector(pairs), rest, 3.0, zeros<vec3d>({np})}), 3);

  SUBCASE("float32, and a tangent output that already holds a tangent: atomic adds add to it") {
    std::vector<vec3f> xf(np), dxf(np), df0(np);
    for (int p = 0; p < np; ++p)
      for (int c = 0; c < 3; ++c) {
        xf[size_t(p)][c] = float(x[size_t(p)][c]);
        dxf[size_t(p)][c] = float(0.1 * (p + c));
        df0[size_t(p)][c] = float(p - c);
      }
    auto restf = from_vector(std::vector<float>(ns, 0.6f));
    auto f = zeros<vec3f>({np}), df = zeros<vec3f>({np});
    launch_tangent(demo::springs, ns, {from_vector(xf), from_vector(pairs), restf, 2.0f, f}, {from_vector(dxf), {}, {}, {}, df});
    auto f2 = zeros<vec3f>({np}), df2 = from_vector(df0);
    launch_tangent(demo::springs, ns, {from_vector(xf), from_vector(pairs), restf, 2.0f, f2}, {from_vector(dxf), {}, {}, {}, df2});
    auto a = df.to_vector<vec3f>(), b = df2.to_vector<vec3f>();
    for (int p = 0; p < np; ++p)
      for (int c = 0; c < 3; ++c) CHECK(b[size_t(p)][c] == doctest::Approx(a[size_t(p)][c] + df0[size_t(p)][c]).epsilon(1e-5));
  }
}

TEST_CASE("strided arrays give the tangents of dense ones") {
  for (int n : {5, 37, 1003}) {
    INFO("n = " << n);
    auto xs = random_values(2 * n, -1, 1, 21), dxs = random_values(2 * n, -1, 1, 22);
    auto cs = random_values(n, 0.4, 0.9, 23), dcs = random_values(n, -1, 1, 24);
    // Every other element of a buffer of 2n: stride 16 bytes.
    auto X = NdArray::view(xs.data(), ir::Type::scalar_of(ir::Scalar::F64), {n}, Device::cpu(), {16});
    auto DX = NdArray::view(dxs.data(), ir::Type::scalar_of(ir::Scalar::F64), {n}, Device::cpu(), {16});
    std::vector<double> x_dense(static_cast<size_t>(n)), dx_dense(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      x_dense[size_t(i)] = xs[size_t(2 * i)];
      dx_dense[size_t(i)] = dxs[size_t(2 * i)];
    }
    std::vector<double> out_buffer(static_cast<size_t>(2 * n), 0.0), dout_buffer(static_cast<size_t>(2 * n), 0.0);
    auto out = NdArray::view(out_buffer.data(), ir::Type::scalar_of(ir::Scalar::F64), {n}, Device::cpu(), {16});
    auto dout = NdArray::view(dout_buffer.data(), ir::Type::scalar_of(ir::Scalar::F64), {n}, Device::cpu(), {16});
    auto C = from_vector(cs), DC = from_vector(dcs);
    launch_tangent(demo::iterate, n, {X, C, 6, out}, {DX, DC, {}, dout});
    auto out_dense = zeros<double>({n}), dout_dense = zeros<double>({n});
    launch_tangent(demo::iterate, n, {from_vector(x_dense), C, 6, out_dense}, {from_vector(dx_dense), DC, {}, dout_dense});
    auto o = out_dense.to_vector<double>(), d = dout_dense.to_vector<double>();
    for (int i = 0; i < n; ++i) {
      CHECK(out_buffer[size_t(2 * i)] == o[size_t(i)]);
      CHECK(dout_buffer[size_t(2 * i)] == d[size_t(i)]);
      CHECK(dout_buffer[size_t(2 * i + 1)] == 0.0);  // between the strided elements: untouched
    }
  }
}
