// Gradients of construct combinations that once went wrong: jumps in nested loops, custom
// gradients of several values and of arrays, square matrix products, atomic min/max of
// vectors and matrices and their ties, loop-invariant loaded store indices, and codegen
// failures that name their kernel.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

#include "kjit/codegen/codegen.hpp"
#include "gradient_support.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "kjit/kernel.hpp"

using namespace kjit;

namespace combo {
KJIT_MODULE(autodiff_combinations)
using namespace kjit::dsl;

// --- jumps inside an inner loop of an outer loop, with Int state carried by the outer loop
KJIT_KERNEL(inner_continue, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  Var<Int> count = 0;
  For(0, n, [&](Int k) {
    For(0, 4, [&](Int j) {
      If((j + k) % 3 == 0, [&] { Continue(); });
      y = y * 0.9 + 0.1 * sin(y);
      count = count + 1;
    });
    y = y + 0.01 * Double(count);
  });
  out[i] = y;
}

KJIT_KERNEL(inner_break, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  Var<Int> steps = 0;
  For(0, n, [&](Int k) {
    For(0, 5, [&](Int j) {
      If(j > k, [&] { Break(); });
      y = y * 1.1 - 0.05 * y * y;
      steps = steps + 1;
    });
    y = y * (1.0 + 0.001 * Double(steps));
  });
  out[i] = y;
}

KJIT_KERNEL(inner_return, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  For(0, n, [&](Int) {
    For(0, 3, [&](Int) {
      y = y * 1.4;
      If(y > 2.0, [&] {
        out[i] = y * y;
        Return();
      });
    });
  });
  out[i] = -y;
}

KJIT_KERNEL(while_in_for_break, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  For(0, n, [&](Int k) {
    Var<Int> m = 0;
    While([&] { return m < k + 2; }, [&] {
      y = cos(y) * 0.5 + y * 0.7;
      If(y > 1.2, [&] { Break(); });
      m = m + 1;
    });
  });
  out[i] = y;
}

// --- custom gradients
/// a * b^2 with its exact adjoint: a's and b's adjoints differ, so a swap shows.
inline const auto a_b2 = func("a_b2", [](auto a, auto b) { return a * b * b; })
                             .grad([](auto a, auto b, auto adj_ret, auto& adj_a, auto& adj_b) {
                               adj_a += adj_ret * b * b;
                               adj_b += adj_ret * 2.0 * a * b;
                             });
/// a + 2b + 3c: three value parameters.
inline const auto abc = func("abc", [](auto a, auto b, auto c) { return a + 2.0 * b + 3.0 * c; })
                            .grad([](auto a, auto b, auto c, auto adj_ret, auto& adj_a, auto& adj_b, auto& adj_c) {
                              adj_a += adj_ret;
                              adj_b += adj_ret * 2.0;
                              adj_c += adj_ret * 3.0;
                            });
KJIT_KERNEL(custom_two, (Array<Double> x, Array<Double> y, Array<Double> out)) {
  Int i = tid();
  out[i] = a_b2(x[i], y[i]) + abc(x[i], y[i], x[i] * y[i]);
}

/// s * arr[j]: an array parameter between value parameters; the adjoint writes the array's.
inline const auto scaled_at = func("scaled_at", [](auto s, auto arr, auto j) { return s * arr[j]; })
                                  .grad([](auto s, auto arr, auto j, auto adj_ret, auto& adj_s, auto& adj_arr, auto&) {
                                    adj_s += adj_ret * arr[j];
                                    atomic_add(adj_arr, j, adj_ret * s);
                                  });
KJIT_KERNEL(custom_array, (Array<Double> s, Array<Double> table, Array<Int> idx, Array<Double> out)) {
  Int i = tid();
  out[i] = scaled_at(s[i], table, idx[i]);
}

// --- square matrix products
KJIT_KERNEL(matmul33, (Array<Mat33d> a, Array<Mat33d> b, Array<Mat33d> out)) {
  Int i = tid();
  out[i] = a[i] * b[i];
}
KJIT_KERNEL(matmul22, (Array<Mat22d> a, Array<Mat22d> b, Array<Mat22d> out)) {
  Int i = tid();
  out[i] = a[i] * (b[i] * a[i]);
}

// --- atomic min / max of vectors and matrices
KJIT_KERNEL(vec_max, (Array<Vec3d> v, Array<Vec3d> hi)) { atomic_max(hi, 0, v[tid()] * 2.0); }
KJIT_KERNEL(mat_min, (Array<Mat22d> m, Array<Mat22d> lo)) { atomic_min(lo, 0, m[tid()]); }
KJIT_KERNEL(scalar_max, (Array<Double> x, Array<Double> hi)) { atomic_max(hi, 0, x[tid()]); }

// --- stores at a loaded index inside a loop
KJIT_KERNEL(loaded_slot_in_loop, (Array<Double> x, Array<Int> slot, Int n, Array<Double> out)) {
  Int t = tid();
  Var<Double> y = x[t];
  For(0, n, [&](Int) {
    y = y * 1.5;
    out[slot[t]] = y;
  });
}
KJIT_KERNEL(var_slot_in_loop, (Array<Double> x, Array<Int> slot, Int n, Array<Double> out)) {
  Int t = tid();
  Var<Int> j = slot[t];
  Var<Double> y = x[t];
  For(0, n, [&](Int) {
    y = y * 1.5;
    out[j] = y;
  });
}
KJIT_KERNEL(loaded_slot_moving, (Array<Double> x, Array<Int> slot, Int n, Array<Double> out)) {
  Int t = tid();
  Var<Double> y = x[t];
  For(0, n, [&](Int k) {
    y = y * 1.5;
    out[slot[t * n + k]] = y;  // a different slot each iteration: accepted
  });
}

// --- a Break leaves only its own loop (found by the tester, seed 31463)
/// y *= 1.5, then a While that stores out[t] = y and Breaks out of itself.
inline void scale_then_store_in_while(Var<Double>& y, Array<Double> out, Int t) {
  y = y * 1.5;
  Var<Int> c = 0;
  While([&] { return Int(c) < 1; }, [&] {
    c = c + 1;
    out[t] = y;
    Break();
  });
}
KJIT_KERNEL(break_inner_store_outer, (Array<Double> x, Int n, Array<Double> out)) {
  Int t = tid();
  Var<Double> y = x[t];
  // The Break leaves the While, not the For: out[t] is overwritten n times.
  For(0, n, [&](Int) { scale_then_store_in_while(y, out, t); });
}
KJIT_KERNEL(break_leaves_outer_too, (Array<Double> x, Int n, Array<Double> out)) {
  Int t = tid();
  Var<Double> y = x[t];
  For(0, n, [&](Int) {
    scale_then_store_in_while(y, out, t);
    Break();  // leaves the For as well: the store is written once
  });
}

// --- strong zero: a dead intermediate that overflows (found by the tester, seed 30607)
KJIT_KERNEL(dead_overflow_chain, (Array<Double> a, Int n, Array<Double> out)) {
  Int t = tid();
  Var<Double> dead = a[t];
  For(0, n, [&](Int) { dead = dead * dead * 1e30; });  // inf after a few rounds; never stored
  out[t] = a[t] * 3.0;
}
KJIT_KERNEL(dead_component, (Array<Double> a, Array<Double> out)) {
  Int t = tid();
  Vec3d v = Vec3d(a[t], exp(a[t] * 1000.0), sin(a[t]));  // v.y overflows and is never read
  out[t] = v.x() * 2.0 + v.z();
}

// --- two kernels of one module reach the same device function, which has a dynamic loop: both
// list its loop under the same status code (found by the tester: such modules failed to build)
inline const auto damped_power = func("damped_power", [](auto x, auto n) {
  Var<Double> y = x;
  For(0, n, [&](Int) { y = y * x * 0.9; });
  return Double(y);
});
KJIT_KERNEL(shared_loop_once, (Array<Double> x, Int n, Array<Double> out)) {
  Int t = tid();
  out[t] = damped_power(x[t], n);
}
KJIT_KERNEL(shared_loop_twice, (Array<Double> x, Int n, Array<Double> out)) {
  Int t = tid();
  out[t] = damped_power(x[t], n) + damped_power(x[t] * 0.5, n + 1);
}

// --- atomics without an adjoint
KJIT_KERNEL(exch_float, (Array<Double> x, Array<Double> out)) { atomic_exch(out, 0, x[tid()]); }
KJIT_KERNEL(exch_int, (Array<Double> x, Array<Int> flag, Array<Double> out)) {
  atomic_exch(flag, 0, 1);
  out[tid()] = x[tid()] * 2.0;
}
}  // namespace combo

using autodiff_support::expect_pass;
using autodiff_support::random_values;

TEST_CASE("jumps in inner loops: forward values and gradients") {
  const int n = 6;
  auto X = from_vector(random_values(n, 0.2, 0.9, 11));
  // The forward value against the same recurrence in C++.
  auto ref_continue = [](double y, int steps) {
    int count = 0;
    for (int k = 0; k < steps; ++k) {
      for (int j = 0; j < 4; ++j) {
        if ((j + k) % 3 == 0) continue;
        y = y * 0.9 + 0.1 * std::sin(y);
        ++count;
      }
      y = y + 0.01 * count;
    }
    return y;
  };
  for (int steps : {0, 1, 3, 7}) {
    INFO("steps = " << steps);
    auto out = zeros<double>({n});
    launch(combo::inner_continue, n, X, steps, out);
    auto got = out.to_vector<double>();
    auto x = X.to_vector<double>();
    for (int t = 0; t < n; ++t) CHECK(got[size_t(t)] == doctest::Approx(ref_continue(x[size_t(t)], steps)).epsilon(1e-13));
    expect_pass(check_gradients(combo::inner_continue, n, {X, steps, zeros<double>({n})}));
    expect_pass(check_gradients(combo::inner_break, n, {X, steps, zeros<double>({n})}));
    expect_pass(check_gradients(combo::inner_return, n, {X, steps, zeros<double>({n})}));
    expect_pass(check_gradients(combo::while_in_for_break, n, {X, steps, zeros<double>({n})}));
  }
}

TEST_CASE("a custom gradient of several value parameters binds each adjoint to its own parameter") {
  const int n = 5;
  auto x = random_values(n, 0.5, 1.5, 12), y = random_values(n, -1.0, 1.0, 13);
  auto X = from_vector(x), Y = from_vector(y), out = zeros<double>({n});
  auto gx = zeros<double>({n}), gy = zeros<double>({n}), gout = from_vector(std::vector<double>(n, 1.0));
  launch(combo::custom_two, n, X, Y, out);
  launch_adjoint(combo::custom_two, n, {X, Y, out}, {gx, gy, gout});
  auto got_x = gx.to_vector<double>(), got_y = gy.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    const double a = x[size_t(i)], b = y[size_t(i)];
    // d/da (a b^2 + a + 2b + 3ab) and d/db of the same
    CHECK(got_x[size_t(i)] == doctest::Approx(b * b + 1.0 + 3.0 * b).epsilon(1e-13));
    CHECK(got_y[size_t(i)] == doctest::Approx(2.0 * a * b + 2.0 + 3.0 * a).epsilon(1e-13));
  }
  expect_pass(check_gradients(combo::custom_two, n, {X, Y, zeros<double>({n})}));
}

TEST_CASE("a custom gradient with an array parameter") {
  const int n = 6;
  auto s = random_values(n, -1.0, 1.0, 14), table = random_values(4, 0.5, 2.0, 15);
  std::vector<int> idx = {0, 2, 2, 3, 1, 2};
  auto S = from_vector(s), T = from_vector(table), I = from_vector(idx), out = zeros<double>({n});
  auto gs = zeros<double>({n}), gt = zeros<double>({4}), gout = from_vector(random_values(n, 0.5, 1.0, 16));
  launch(combo::custom_array, n, S, T, I, out);
  auto o = out.to_vector<double>();
  for (int i = 0; i < n; ++i) CHECK(o[size_t(i)] == doctest::Approx(s[size_t(i)] * table[size_t(idx[size_t(i)])]));
  launch_adjoint(combo::custom_array, n, {S, T, I, out}, {gs, gt, {}, gout});
  auto w = gout.to_vector<double>(), got_s = gs.to_vector<double>(), got_t = gt.to_vector<double>();
  std::vector<double> want_t(4, 0.0);
  for (int i = 0; i < n; ++i) {
    CHECK(got_s[size_t(i)] == doctest::Approx(w[size_t(i)] * table[size_t(idx[size_t(i)])]).epsilon(1e-13));
    want_t[size_t(idx[size_t(i)])] += w[size_t(i)] * s[size_t(i)];
  }
  for (int j = 0; j < 4; ++j) CHECK(got_t[size_t(j)] == doctest::Approx(want_t[size_t(j)]).epsilon(1e-13));
  expect_pass(check_gradients(combo::custom_array, n, {S, T, I, zeros<double>({n})}));
}

TEST_CASE("square matrix products compile and differentiate") {
  const int n = 3;
  std::vector<mat33d> a(n), b(n);
  std::vector<mat22d> c(n), d(n);
  auto r = random_values(64, -1.0, 1.0, 17);
  size_t k = 0;
  for (int i = 0; i < n; ++i) {
    for (int p = 0; p < 3; ++p)
      for (int q = 0; q < 3; ++q) { a[size_t(i)][p][q] = r[k++ % r.size()]; b[size_t(i)][p][q] = r[k++ % r.size()]; }
    for (int p = 0; p < 2; ++p)
      for (int q = 0; q < 2; ++q) { c[size_t(i)][p][q] = r[k++ % r.size()]; d[size_t(i)][p][q] = r[k++ % r.size()]; }
  }
  auto A = from_vector(a), B = from_vector(b), out = zeros<mat33d>({n});
  launch(combo::matmul33, n, A, B, out);
  auto o = out.to_vector<mat33d>();
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q) {
      double want = 0;
      for (int j = 0; j < 3; ++j) want += a[0][p][j] * b[0][j][q];
      CHECK(o[0][p][q] == doctest::Approx(want).epsilon(1e-13));
    }
  expect_pass(check_gradients(combo::matmul33, n, {A, B, zeros<mat33d>({n})}));
  expect_pass(check_gradients(combo::matmul22, n, {from_vector(c), from_vector(d), zeros<mat22d>({n})}));
}

TEST_CASE("atomic_max of vectors: each component's winner gets that component's gradient") {
  std::vector<vec3d> v = {vec3d{{1.0, 5.0, -2.0}}, vec3d{{3.0, 0.5, -1.0}}, vec3d{{2.0, 4.0, -3.0}}};
  auto V = from_vector(v), hi = from_vector(std::vector<vec3d>{vec3d{{-9, -9, -9}}});
  launch(combo::vec_max, 3, V, hi);
  auto h = hi.to_vector<vec3d>()[0];
  CHECK(h[0] == 6.0);
  CHECK(h[1] == 10.0);
  CHECK(h[2] == -2.0);
  auto gv = zeros<vec3d>({3}), ghi = from_vector(std::vector<vec3d>{vec3d{{1.0, 10.0, 100.0}}});
  launch_adjoint(combo::vec_max, 3, {V, hi}, {gv, ghi});
  auto g = gv.to_vector<vec3d>();
  // component 0 from thread 1, component 1 from thread 0, component 2 from thread 1 (x 2)
  CHECK(g[0][0] == 0.0);
  CHECK(g[0][1] == 20.0);
  CHECK(g[0][2] == 0.0);
  CHECK(g[1][0] == 2.0);
  CHECK(g[1][1] == 0.0);
  CHECK(g[1][2] == 200.0);
  CHECK(g[2][0] == 0.0);
  CHECK(g[2][1] == 0.0);
  CHECK(g[2][2] == 0.0);
  // The element's adjoint went to its winners: nothing is left for its prior value.
  auto left = ghi.to_vector<vec3d>()[0];
  CHECK(left[0] == 0.0);
  CHECK(left[1] == 0.0);
  CHECK(left[2] == 0.0);
}

TEST_CASE("atomic_min of matrices works per component") {
  std::vector<mat22d> m(2);
  m[0][0][0] = 1; m[0][0][1] = -4; m[0][1][0] = 3; m[0][1][1] = 0;
  m[1][0][0] = 2; m[1][0][1] = -5; m[1][1][0] = 1; m[1][1][1] = 7;
  mat22d init;
  for (int p = 0; p < 2; ++p) for (int q = 0; q < 2; ++q) init[p][q] = 100;
  auto M = from_vector(m), lo = from_vector(std::vector<mat22d>{init});
  launch(combo::mat_min, 2, M, lo);
  mat22d seed;
  for (int p = 0; p < 2; ++p) for (int q = 0; q < 2; ++q) seed[p][q] = 1 + p * 2 + q;
  auto gm = zeros<mat22d>({2}), glo = from_vector(std::vector<mat22d>{seed});
  launch_adjoint(combo::mat_min, 2, {M, lo}, {gm, glo});
  auto g = gm.to_vector<mat22d>();
  CHECK(g[0][0][0] == 1.0);  // 1 < 2
  CHECK(g[1][0][1] == 2.0);  // -5 < -4
  CHECK(g[1][1][0] == 3.0);  // 1 < 3
  CHECK(g[0][1][1] == 4.0);  // 0 < 7
  CHECK(g[1][0][0] + g[0][0][1] + g[0][1][0] + g[1][1][1] == 0.0);
}

TEST_CASE("atomic_max ties: exactly one tying thread receives the adjoint") {
  // Threads 0, 2 and 3 tie at the maximum; the prior value ties too.
  std::vector<double> x = {4.0, 1.0, 4.0, 4.0};
  auto X = from_vector(x), hi = from_vector(std::vector<double>{4.0});
  launch(combo::scalar_max, 4, X, hi);
  for (int trial = 0; trial < 20; ++trial) {
    auto gx = zeros<double>({4}), ghi = from_vector(std::vector<double>{1.0});
    launch_adjoint(combo::scalar_max, 4, {X, hi}, {gx, ghi});
    auto g = gx.to_vector<double>();
    CHECK(g[1] == 0.0);
    int winners = 0;
    for (double v : g) winners += v == 1.0;
    CHECK(winners == 1);
    CHECK(g[0] + g[1] + g[2] + g[3] + ghi.to_vector<double>()[0] == 1.0);  // the total is kept
  }
  // No thread reaches the prior value: its adjoint stays with it.
  auto low = from_vector(std::vector<double>{-1.0, -2.0});
  auto big = from_vector(std::vector<double>{9.0});
  launch(combo::scalar_max, 2, low, big);
  auto gl = zeros<double>({2}), gbig = from_vector(std::vector<double>{1.0});
  launch_adjoint(combo::scalar_max, 2, {low, big}, {gl, gbig});
  CHECK(gl.to_vector<double>() == std::vector<double>{0.0, 0.0});
  CHECK(gbig.to_vector<double>()[0] == 1.0);
}

/// The refusal of a store that a loop overwrites at an index it does not change.
static void expect_overwrite_refusal(const Error& e) {
  const std::string m = e.what();
  CHECK(e.kind() == ErrorKind::User);
  CHECK(m.find("array 'out' is written at") != std::string::npos);
  CHECK(m.find("inside the loop at") != std::string::npos);
  CHECK(m.find("at an index the loop does not change") != std::string::npos);
}

TEST_CASE("a store at a loop-invariant loaded index inside a loop is refused, naming both lines") {
  auto X = from_vector(std::vector<double>{0.5, 0.25}), out = zeros<double>({2});
  auto slot = from_vector(std::vector<int>{1, 0});
  auto refused = [&](const auto& k) {
    INFO(k.def().name());
    launch(k, 2, X, slot, 3, out);  // the forward is fine
    CHECK(out.to_vector<double>() == std::vector<double>{0.25 * 1.5 * 1.5 * 1.5, 0.5 * 1.5 * 1.5 * 1.5});
    try {
      launch_adjoint(k, 2, {X, slot, 3, out}, {zeros<double>({2}), {}, {}, from_vector(std::vector<double>{1.0, 1.0})});
      FAIL("no error");
    } catch (const Error& e) {
      const std::string m = e.what();
      expect_overwrite_refusal(e);
      CHECK(m.find("combination_gradients.cpp:") != std::string::npos);
    }
  };
  refused(combo::loaded_slot_in_loop);
  refused(combo::var_slot_in_loop);
  // A loaded index that changes with the loop is accepted, and right.
  auto many = from_vector(std::vector<int>{0, 1, 2, 3, 4, 5});
  expect_pass(check_gradients(combo::loaded_slot_moving, 2, {X, many, 3, zeros<double>({6})}));
}

TEST_CASE("a Break leaves only its own loop: a store before an inner loop's Break is still overwritten by the outer loop") {
  auto X = from_vector(std::vector<double>{0.5, 0.25}), out = zeros<double>({2});
  launch(combo::break_inner_store_outer, 2, X, 3, out);
  CHECK(out.to_vector<double>() == std::vector<double>{0.5 * 1.5 * 1.5 * 1.5, 0.25 * 1.5 * 1.5 * 1.5});
  try {
    launch_adjoint(combo::break_inner_store_outer, 2, {X, 3, out},
                   {zeros<double>({2}), {}, from_vector(std::vector<double>{1.0, 1.0})});
    FAIL("no error: the adjoint would sum every iteration's store (3x the gradient)");
  } catch (const Error& e) {
    expect_overwrite_refusal(e);
  }
  // With a Break that leaves the outer loop too, the store is written once: accepted, right.
  expect_pass(check_gradients(combo::break_leaves_outer_too, 2, {X, 3, zeros<double>({2})}));
  auto gx = zeros<double>({2});
  launch_adjoint(combo::break_leaves_outer_too, 2, {X, 3, zeros<double>({2})},
                 {gx, {}, from_vector(std::vector<double>{1.0, 1.0})});
  CHECK(gx.to_vector<double>() == std::vector<double>{1.5, 1.5});
}

TEST_CASE("strong zero: an inf on a dead path leaves live gradients finite and exact") {
  // Reverse mode multiplies each incoming adjoint by its partial; an exactly zero adjoint
  // must contribute zero even when the partial is inf (0 * inf would be NaN).
  const std::vector<double> a = {0.5, 1.5, -2.0};
  auto A = from_vector(a);
  auto out = zeros<double>({3});
  launch(combo::dead_overflow_chain, 3, A, 8, out);
  for (double o : out.to_vector<double>()) CHECK(std::isfinite(o));
  auto ga = zeros<double>({3});
  launch_adjoint(combo::dead_overflow_chain, 3, {A, 8, out}, {ga, 0, from_vector(std::vector<double>{1.0, 1.0, 1.0})});
  for (double g : ga.to_vector<double>()) CHECK(g == 3.0);

  auto out2 = zeros<double>({3}), gb = zeros<double>({3});
  launch(combo::dead_component, 3, A, out2);
  launch_adjoint(combo::dead_component, 3, {A, out2}, {gb, from_vector(std::vector<double>{1.0, 1.0, 1.0})});
  auto g = gb.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) CHECK(g[i] == doctest::Approx(2.0 + std::cos(a[i])).epsilon(1e-14));
}

TEST_CASE("two kernels of one module share a device function with a dynamic loop") {
  const std::vector<double> x = {0.8, 1.1, -0.7};
  auto X = from_vector(x);
  auto o1 = zeros<double>({3}), o2 = zeros<double>({3});
  launch(combo::shared_loop_once, 3, X, 3, o1);
  launch(combo::shared_loop_twice, 3, X, 3, o2);
  auto power = [](double v, int n) { double y = v; for (int i = 0; i < n; ++i) y = y * v * 0.9; return y; };
  auto a = o1.to_vector<double>(), b = o2.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    CHECK(a[i] == doctest::Approx(power(x[i], 3)).epsilon(1e-14));
    CHECK(b[i] == doctest::Approx(power(x[i], 3) + power(x[i] * 0.5, 4)).epsilon(1e-14));
  }
  expect_pass(check_gradients(combo::shared_loop_once, 3, {X, 3, zeros<double>({3})}));
  expect_pass(check_gradients(combo::shared_loop_twice, 3, {X, 3, zeros<double>({3})}));
}

TEST_CASE("atomic_exch of a differentiable value has no adjoint: refused, naming the line") {
  auto X = from_vector(std::vector<double>{1.0, 2.0}), out = zeros<double>({1});
  launch(combo::exch_float, 2, X, out);
  try {
    launch_adjoint(combo::exch_float, 2, {X, out}, {zeros<double>({2}), from_vector(std::vector<double>{1.0})});
    FAIL("no error");
  } catch (const Error& e) {
    const std::string m = e.what();
    CHECK(m.find("atomic_exch on array 'out' has no adjoint") != std::string::npos);
    CHECK(m.find("combination_gradients.cpp:") != std::string::npos);
  }
  // On integers it is a plain effect: the kernel differentiates.
  auto flag = zeros<int32_t>({1});
  expect_pass(check_gradients(combo::exch_int, 2, {X, flag, zeros<double>({2})}));
}

TEST_CASE("a codegen failure names the kernel and where it is defined") {
  const ir::Function& fn = combo::inner_break.def().ir();
  codegen::CodegenOptions o;
  o.loop_checkpoints = 3;  // odd: the adjoint emitter refuses it
  try {
    codegen::generate_module("autodiff_combinations", {&fn}, o);
    FAIL("no error");
  } catch (const Error& e) {
    const std::string m = e.what();
    CHECK(m.find("kernel 'combo::inner_break' (") != std::string::npos);
    CHECK(m.find("combination_gradients.cpp:") != std::string::npos);
    CHECK(m.find("code generation failed") != std::string::npos);
  }
  // Through the module options the value is refused up front, naming the option.
  ModuleOptions bad;
  bad.loop_checkpoints = 3;
  try {
    kjit::module("autodiff_combinations").set_options(bad);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    CHECK(std::string(e.what()).find("loop_checkpoints must be an even number >= 2") != std::string::npos);
  }
}
