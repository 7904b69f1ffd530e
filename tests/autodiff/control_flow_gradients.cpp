// Gradients through branches, early returns, dynamic loops (nested, with Break and
// Continue) and the springs example, against finite differences and closed forms.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

#include "kjit/codegen/codegen.hpp"
#include "kjit/codegen/passes.hpp"
#include "gradient_support.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "kjit/kernel.hpp"
#include "loops.hpp"
#include "springs.hpp"

using namespace kjit;

namespace ad_tests {
KJIT_MODULE(autodiff_control_flow)
using namespace kjit::dsl;

KJIT_KERNEL(branches, (Array<Double> x, Array<Double> out)) {
  Int i = tid();
  Double v = x[i];
  Var<Double> y = 0.0;
  If(v > 0.5, [&] { y = v * v * v; })
      .ElseIf(v > -0.5, [&] { y = sin(v) * 2.0; })
      .Else([&] { y = exp(v); });
  out[i] = y;
}

KJIT_KERNEL(early_return, (Array<Double> x, Array<Double> out)) {
  Int i = tid();
  Double v = x[i];
  If(v < 0.0, [&] { Return(); });
  out[i] = v * v + 1.0;
}

KJIT_KERNEL(nested_loops, (Array<Double> x, Array<Double> c, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  Double ci = c[i];
  For(0, n, [&](Int k) {
    For(0, k + 2, [&](Int) { y = y * ci + 0.1 * sin(y); });
    y = y - 0.05 * y * y;
  });
  out[i] = y;
}

KJIT_KERNEL(while_break, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  Var<Int> k = 0;
  While([&] { return k < n; }, [&] {
    y = y * 1.3 + 0.1 * y * y;
    If(y > 4.0, [&] { Break(); });
    k = k + 1;
  });
  out[i] = y;
}

KJIT_KERNEL(loop_continue, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  For(0, n, [&](Int k) {
    If(k % 3 == 1, [&] { Continue(); });
    y = cos(y) + y * 0.5;
  });
  out[i] = y;
}

KJIT_KERNEL(geometric, (Array<Double> x, Array<Double> c, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  Double ci = c[i];
  For(0, n, [&](Int) { y = y * ci; });
  out[i] = y;
}

KJIT_KERNEL(return_in_loop, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  For(0, n, [&](Int) {
    y = y * 1.5;
    If(y > 3.0, [&] {
      out[i] = y;
      Return();
    });
  });
  out[i] = -y;
}
}  // namespace ad_tests

namespace bounded_tests {
KJIT_MODULE(autodiff_bounded)
using namespace kjit::dsl;
KJIT_KERNEL(bounded, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  For(0, n, [&](Int) { y = sin(y) + 0.9 * y; });
  out[i] = y;
}
}  // namespace bounded_tests

namespace inert_tests {
KJIT_MODULE(autodiff_inert)
using namespace kjit::dsl;
// A branch whose loop does integer work only, and such a loop outside it: reversing either does
// nothing.
KJIT_KERNEL(inert_loops, (Array<Double> x, Int n, Array<Int> count, Array<Int> flag, Array<Double> out)) {
  Int i = tid();
  Double v = x[i];
  If(v > 0.0, [&] {
    Var<Int> k = 0;
    For(0, n, [&](Int j) { k = k + j; });
    count[i] = k;
  });
  Var<Int> m = 0;
  For(0, n, [&](Int j) { m = m + j * j; });
  flag[i] = m;
  out[i] = v * v * 3.0;
}
}  // namespace inert_tests

using autodiff_support::expect_pass;
using autodiff_support::random_values;

TEST_CASE("If / ElseIf / Else: every branch differentiates") {
  // Points in each of the three branches.
  std::vector<double> x = {1.2, 0.8, 0.1, -0.3, -0.9, -2.0};
  auto out = zeros<double>({6});
  expect_pass(check_gradients(ad_tests::branches, 6, {from_vector(x), out}));
}

TEST_CASE("early Return: threads that return contribute nothing") {
  std::vector<double> x = {1.5, -0.5, 0.25, -2.0};
  auto X = from_vector(x), out = zeros<double>({4});
  expect_pass(check_gradients(ad_tests::early_return, 4, {X, out}));
  auto gx = zeros<double>({4});
  launch(ad_tests::early_return, 4, X, out);
  launch_adjoint(ad_tests::early_return, 4, {X, out}, {gx, from_vector(std::vector<double>(4, 1.0))});
  auto g = gx.to_vector<double>();
  CHECK(g[0] == doctest::Approx(3.0));
  CHECK(g[1] == 0.0);
  CHECK(g[2] == doctest::Approx(0.5));
  CHECK(g[3] == 0.0);
}

TEST_CASE("a dynamic loop carrying state: x <- x*c + sin(x), n steps") {
  const int n = 8;
  auto X = from_vector(random_values(n, -1, 1, 1)), C = from_vector(random_values(n, 0.3, 0.8, 2));
  auto out = zeros<double>({n});
  for (int steps : {0, 1, 5, 64, 65, 300}) {
    INFO("steps = " << steps);
    expect_pass(check_gradients(demo::iterate, n, {X, C, steps, out}));
  }
}

TEST_CASE("the loop gradient equals the closed form of a linear recurrence") {
  // y_n = x c^n: dy/dx = c^n, dy/dc = n x c^(n-1). n = 100 > 64 checkpoints: the replay
  // thins its checkpoints and replays segments.
  for (int n : {1, 7, 100}) {
    INFO("n = " << n);
    const double x = 0.7, c = 0.97;
    auto X = from_vector(std::vector<double>{x}), C = from_vector(std::vector<double>{c});
    auto out = zeros<double>({1}), gx = zeros<double>({1}), gc = zeros<double>({1});
    launch(ad_tests::geometric, 1, X, C, n, out);
    CHECK(out.to_vector<double>()[0] == doctest::Approx(x * std::pow(c, n)).epsilon(1e-12));
    launch_adjoint(ad_tests::geometric, 1, {X, C, n, out}, {gx, gc, {}, from_vector(std::vector<double>{1.0})});
    CHECK(gx.to_vector<double>()[0] == doctest::Approx(std::pow(c, n)).epsilon(1e-12));
    CHECK(gc.to_vector<double>()[0] == doctest::Approx(n * x * std::pow(c, n - 1)).epsilon(1e-12));
  }
}

TEST_CASE("nested dynamic loops") {
  const int n = 6;
  auto X = from_vector(random_values(n, -0.5, 0.5, 3)), C = from_vector(random_values(n, 0.4, 0.7, 4));
  for (int steps : {1, 4, 12}) {
    INFO("steps = " << steps);
    expect_pass(check_gradients(ad_tests::nested_loops, n, {X, C, steps, zeros<double>({n})}));
  }
}

TEST_CASE("While with Break") {
  const int n = 8;
  auto X = from_vector(random_values(n, 0.2, 1.5, 5));
  for (int steps : {0, 3, 50}) {
    INFO("steps = " << steps);
    expect_pass(check_gradients(ad_tests::while_break, n, {X, steps, zeros<double>({n})}));
  }
}

TEST_CASE("For with Continue") {
  const int n = 5;
  auto X = from_vector(random_values(n, -1, 1, 6));
  expect_pass(check_gradients(ad_tests::loop_continue, n, {X, 10, zeros<double>({n})}));
}

TEST_CASE("Return inside a loop") {
  std::vector<double> x = {0.1, 0.5, 1.0, 2.5, -1.0};
  expect_pass(check_gradients(ad_tests::return_in_loop, 5, {from_vector(x), 6, zeros<double>({5})}));
}

TEST_CASE("springs: adjoint equals the hand-derived gradient") {
  // L = sum_p w_p . f_p with f from springs_f64. For a spring s between a and b with
  // d = x_a - x_b, l = |d|: force on a is -F, on b +F, F = d k (l - r) / l. So
  // dL/dd = (w_b - w_a)^T dF/dd, dF/dd = k [(1 - r/l) I + (r / l^3) d d^T], and
  // dL/dx_a += dL/dd, dL/dx_b -= dL/dd; dL/dr_s = (w_b - w_a) . dF/dr = -(w_b - w_a) . d k / l.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  const int np = 6, ns = 9;
  const double k = 3.0;
  std::vector<vec3d> x(np), w(np);
  for (auto& p : x) for (int c = 0; c < 3; ++c) p[c] = 2 * u(rng);
  for (auto& p : w) for (int c = 0; c < 3; ++c) p[c] = u(rng);
  std::vector<int> pairs;
  for (int s = 0; s < ns; ++s) {
    pairs.push_back(s % np);
    pairs.push_back((s * 2 + 1 + s / np) % np == s % np ? (s + 1) % np : (s * 2 + 1 + s / np) % np);
  }
  std::vector<double> rest(ns);
  for (double& r : rest) r = 0.5 + 0.3 * u(rng);

  std::vector<vec3d> gx(np, vec3d{{0, 0, 0}});
  std::vector<double> grest(ns, 0.0);
  for (int s = 0; s < ns; ++s) {
    int a = pairs[2 * s], b = pairs[2 * s + 1];
    double d[3], l = 0;
    for (int c = 0; c < 3; ++c) { d[c] = x[a][c] - x[b][c]; l += d[c] * d[c]; }
    l = std::sqrt(l);
    double dw[3];
    for (int c = 0; c < 3; ++c) dw[c] = w[b][c] - w[a][c];
    double dwd = dw[0] * d[0] + dw[1] * d[1] + dw[2] * d[2];
    for (int c = 0; c < 3; ++c) {
      double g = k * ((1 - rest[s] / l) * dw[c] + rest[s] / (l * l * l) * d[c] * dwd);
      gx[a][c] += g;
      gx[b][c] -= g;
    }
    grest[s] = -k * dwd / l;
  }

  auto X = from_vector(x), P = from_vector(pairs), R = from_vector(rest), F = zeros<vec3d>({np});
  auto GX = zeros<vec3d>({np}), GR = zeros<double>({ns});
  launch(demo::springs_f64, ns, X, P, R, k, F);
  launch_adjoint(demo::springs_f64, ns, {X, P, R, k, F}, {GX, {}, GR, {}, from_vector(w)});
  auto got_x = GX.to_vector<vec3d>();
  auto got_r = GR.to_vector<double>();
  for (int p = 0; p < np; ++p)
    for (int c = 0; c < 3; ++c) CHECK(got_x[p][c] == doctest::Approx(gx[p][c]).epsilon(1e-10));
  for (int s = 0; s < ns; ++s) CHECK(got_r[s] == doctest::Approx(grest[s]).epsilon(1e-10));
  // And the generic checker agrees.
  expect_pass(check_gradients(demo::springs_f64, ns, {X, P, R, k, zeros<vec3d>({np})}));
}

TEST_CASE("exceeding a loop's checkpoint bound is an error, not a wrong gradient") {
  ModuleOptions o;
  o.loop_checkpoints = 4;  // bound: 16 iterations
  kjit::module("autodiff_bounded").set_options(o);
  auto X = from_vector(std::vector<double>{0.3, 0.6}), out = zeros<double>({2});
  auto gx = zeros<double>({2}), gout = from_vector(std::vector<double>{1.0, 1.0});
  // At the bound: fine, and correct.
  expect_pass(check_gradients(bounded_tests::bounded, 2, {X, 16, out}));
  // Past it: the documented error, naming the loop's line and the option to raise.
  launch(bounded_tests::bounded, 2, X, 17, out);
  try {
    launch_adjoint(bounded_tests::bounded, 2, {X, 17, out}, {gx, {}, gout});
    FAIL("no error");
  } catch (const Error& e) {
    std::string m = e.what();
    CHECK(e.kind() == ErrorKind::User);
    CHECK(m.find("control_flow_gradients.cpp:") != std::string::npos);
    CHECK(m.find("more than 16 iterations") != std::string::npos);
    CHECK(m.find("loop_checkpoints") != std::string::npos);
  }
  // No wrong numbers: a thread past the bound contributes nothing (without the guard the
  // store's adjoint would flow straight to x and give 1.0).
  CHECK(gx.to_vector<double>() == std::vector<double>{0.0, 0.0});
  // The status word was cleared: the next launch within the bound succeeds.
  launch(bounded_tests::bounded, 2, X, 10, out);
  launch_adjoint(bounded_tests::bounded, 2, {X, 10, out}, {gx, {}, gout});
}

TEST_CASE("statements without reverse work are not reversed, by both adjoints' one rule") {
  // One rule (ReverseWork: ops.def's adjoint column, then the statement's rule) says whether
  // reversing a statement does anything, for the scalar body and the lane function alike: the
  // scalar sweep writes neither the branch nor either loop's checkpointed reverse (it wrote
  // both before the lane function's rule became the one rule).
  std::vector<const ir::Function*> fns;
  for (const KernelDef* k : Registry::get().find_module("autodiff_inert")->kernels()) fns.push_back(&k->ir());
  codegen::CodegenOptions emitter;  // the adjoint emitter's text (KJIT_REVERSE_IR=0)
  emitter.reverse_transform = false;
  const std::string text = codegen::generate_module("autodiff_inert", fns, emitter).text;
  const size_t body = text.find("inert_loops_adj_body");
  REQUIRE(body != std::string::npos);
  const size_t sweep = text.find("// reverse sweep", body);
  REQUIRE(sweep != std::string::npos);
  const std::string reverse = text.substr(sweep, text.find("\n}", sweep) - sweep);
  CHECK(reverse.find("for (") == std::string::npos);  // no loop reversed
  CHECK(reverse.find("if (v") == std::string::npos);  // no branch reversed
  CHECK(reverse.find("adj_p_x") != std::string::npos);  // the gradient of x is there
  // The reverse transform's adjoint (the default) by the same rule: no loop swept back (no
  // ReverseSegments), the branch only replayed (its If and the loops' overflow guard).
  std::string ir;
  for (const codegen::PassSnapshot& s : codegen::pass_snapshots({&inert_tests::inert_loops.def().ir()}, {}))
    if (s.pass == "reverse_transform") ir = s.ir;
  REQUIRE(!ir.empty());
  CHECK(ir.find("reverse_segments") == std::string::npos);
  size_t ifs = 0;
  for (size_t at = ir.find(" if %"); at != std::string::npos; at = ir.find(" if %", at + 1)) ++ifs;
  CHECK(ifs == 2);
  CHECK(ir.find("adj_array_add") != std::string::npos);  // the gradient of x is there
  // Dense blocks of 16 through the lane function and a tail through the scalar body, in and
  // out of the branch and past the 64 checkpoint slots, against central differences.
  const int threads = 37;
  auto X = from_vector(random_values(threads, -1, 1, 11));
  for (int steps : {0, 3, 70}) {
    INFO("steps = " << steps);
    expect_pass(check_gradients(inert_tests::inert_loops, threads,
                                {X, steps, zeros<int32_t>({threads}), zeros<int32_t>({threads}), zeros<double>({threads})}));
  }
}
