// Second derivatives: the tangent kernel is a kernel, so its adjoint (reverse over forward:
// Hessian-vector products) and its own tangent (forward over forward) exist. Both are
// checked against finite differences on kernels with dynamic loops, and the Hessian-vector
// product against the finite difference of the adjoint.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "forward_support.hpp"
#include "loops.hpp"

namespace fwd_second {
KJIT_MODULE(forward_second_order)
using namespace kjit::dsl;

KJIT_KERNEL(nested, (Array<Double> x, Array<Double> c, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  Double ci = c[i];
  For(0, n, [&](Int k) {
    For(0, k + 2, [&](Int) { y = y * ci + 0.1 * sin(y); });
    If(y > 2.0, [&] { Break(); });
    y = y - 0.05 * y * y;
  });
  out[i] = y;
}

KJIT_KERNEL(while_loop, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  Var<Int> k = 0;
  While([&] { return k < n; }, [&] {
    y = y * 1.2 + 0.1 * y * y * y;
    k = k + 1;
  });
  out[i] = exp(-y * y);
}

KJIT_KERNEL(vectors, (Array<Vec3d> v, Array<Double> c, Int n, Array<Vec3d> out)) {
  Int i = tid();
  Var<Vec3d> w = v[i];
  For(0, n, [&](Int) { w = w * c[i] + cross(w, Vec3d(0.1, 0.2, 0.3)); });
  If(length(w) > 1.0, [&] { w = normalize(w) * (1.0 + log(length(w))); });
  out[i] = w;
}

KJIT_KERNEL(decomposed, (Array<Mat33d> m, Array<Vec3d> out)) {
  auto [u, sigma, v] = svd3(m[tid()]);
  out[tid()] = sigma + u * Vec3d(0.25, 0.0, 0.0) + v * Vec3d(0.0, 0.5, 0.0);
}
}  // namespace fwd_second

using namespace kjit;
using forward_support::expect_tangents_pass;
using forward_support::random_values;

TEST_CASE("the adjoint and the tangent of tangent kernels with loops against finite differences") {
  const int n = 7;
  auto X = from_vector(random_values(n, -0.5, 0.5, 1)), C = from_vector(random_values(n, 0.4, 0.8, 2));
  auto DX = from_vector(random_values(n, -1, 1, 3)), DC = from_vector(random_values(n, -1, 1, 4));
  // check_gradients of a tangent kernel: its adjoint (the Hessian-vector products of every
  // input and the Jacobian-transpose products of every direction), and its own tangent.
  for (int steps : {1, 3, 70}) {  // 70 > 64: the adjoint's checkpoints thin out
    INFO("steps = " << steps);
    expect_tangents_pass(check_gradients(tangent_of(demo::iterate), n,
                                         {X, C, steps, zeros<double>({n}), DX, DC, 0, zeros<double>({n})}),
                         4);
  }
  expect_tangents_pass(check_gradients(tangent_of(fwd_second::nested), n,
                                       {X, C, 4, zeros<double>({n}), DX, DC, 0, zeros<double>({n})}),
                       4);
  expect_tangents_pass(check_gradients(tangent_of(fwd_second::while_loop), n, {X, 3, zeros<double>({n}), DX, 0, zeros<double>({n})}), 2);
  auto r = random_values(6 * n, -1, 1, 5);
  std::vector<vec3d> v(n), dv(n);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      v[size_t(i)][k] = r[size_t(6 * i + k)];
      dv[size_t(i)][k] = r[size_t(6 * i + 3 + k)];
    }
  expect_tangents_pass(check_gradients(tangent_of(fwd_second::vectors), n,
                                       {from_vector(v), C, 5, zeros<vec3d>({n}), from_vector(dv), DC, 0, zeros<vec3d>({n})}),
                       4);
}

TEST_CASE("the adjoint of the tangent kernel is the Hessian-vector product: the difference of adjoints") {
  // iterate: out = f(x, c). With cotangent w on the tangent output, the adjoint of the tangent
  // kernel at (x, v) gives xbar = w d/dx (J v) = (H v)^T w and vbar = J^T w.
  const int n = 37, steps = 6;
  auto x = random_values(n, -0.5, 0.5, 6), c = random_values(n, 0.4, 0.8, 7), v = random_values(n, -1, 1, 8);
  auto w = random_values(n, -1, 1, 9);
  auto adjoint_at = [&](const std::vector<double>& at) {  // J^T w at (at, c): gx
    auto gx = zeros<double>({n}), gc = zeros<double>({n}), out = zeros<double>({n});
    launch(demo::iterate, n, from_vector(at), from_vector(c), steps, out);
    launch_adjoint(demo::iterate, n, {from_vector(at), from_vector(c), steps, out}, {gx, gc, {}, from_vector(w)});
    return gx.to_vector<double>();
  };
  auto xbar = zeros<double>({n}), vbar = zeros<double>({n});
  const KernelDef& t = tangent_of(demo::iterate);
  auto out = zeros<double>({n}), dout = zeros<double>({n});
  launch(t, n, {from_vector(x), from_vector(c), steps, out, from_vector(v), zeros<double>({n}), 0, dout});
  launch_adjoint(t, n, {from_vector(x), from_vector(c), steps, out, from_vector(v), zeros<double>({n}), 0, dout},
                 {xbar, {}, {}, {}, vbar, {}, {}, from_vector(w)});
  const double h = 1e-5;
  std::vector<double> plus = x, minus = x;
  for (int i = 0; i < n; ++i) {
    plus[size_t(i)] += h * v[size_t(i)];
    minus[size_t(i)] -= h * v[size_t(i)];
  }
  auto gp = adjoint_at(plus), gm = adjoint_at(minus), g = adjoint_at(x);
  auto hv = xbar.to_vector<double>(), jt = vbar.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    INFO("i = " << i);
    CHECK(hv[size_t(i)] == doctest::Approx((gp[size_t(i)] - gm[size_t(i)]) / (2 * h)).epsilon(1e-6));
    CHECK(jt[size_t(i)] == doctest::Approx(g[size_t(i)]).epsilon(1e-12));
  }
}

TEST_CASE("a dual-evaluated builtin has a tangent but no second derivative, and says so") {
  std::vector<mat33d> m(3);
  for (int i = 0; i < 3; ++i)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) m[size_t(i)][r][c] = (r == c ? 3.0 - r + 0.1 * i : 0.1 * std::sin(3 * r + c + i));  // separate singular values
  auto M = from_vector(m);
  expect_tangents_pass(check_gradients(fwd_second::decomposed, 3, {M, zeros<vec3d>({3})}), 1);
  const KernelDef& t = tangent_of(fwd_second::decomposed);
  try {
    launch_adjoint(t, 3, {M, zeros<vec3d>({3}), M, zeros<vec3d>({3})}, {{}, {}, {}, zeros<vec3d>({3})});
    FAIL("no error");
  } catch (const Error& e) {
    std::string msg = e.what();
    CHECK(e.kind() == ErrorKind::User);
    CHECK(msg.find("the adjoint of the tangent of svd3") != std::string::npos);
    CHECK(msg.find("second_order.cpp:") != std::string::npos);
  }
  try {
    tangent_of(t);
    FAIL("no error");
  } catch (const Error& e) {
    std::string msg = e.what();
    CHECK(e.kind() == ErrorKind::User);
    CHECK(msg.find("the tangent of the tangent of svd3") != std::string::npos);
    CHECK(msg.find("second_order.cpp:") != std::string::npos);
  }
}
