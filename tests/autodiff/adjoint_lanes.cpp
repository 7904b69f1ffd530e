// The cpu's adjoint lane functions (codegen/src/adjoint_lanes.cpp): with dense arrays, a
// kernel with branches, loops or atomics runs its adjoint 16 threads at a time under lane
// masks. Every way lanes diverge in the reverse sweep — If/ElseIf/Else, per-lane trip counts
// (nested, both signs, a uniform loop inside a divergent one), Break, Continue and Return,
// a loop past its checkpoint bound in some lanes, atomics under a mask, reads at other threads'
// indices, vector and matrix state, a value every lane shares, device functions, prints — must
// give each thread's gradient exactly as the scalar adjoint does. Each case runs the adjoint
// with dense arrays (lane blocks and a tail) and with strided ones (one thread at a time), and
// checks both against gradients of a C++ reference computed with forward-mode dual numbers.
// The suite runs with KJIT_BOUNDS_CHECK=1, whose modules have no lane functions: these cases
// turn it off.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "strided_views.hpp"
#include "kjit/runtime/compile_input.hpp"
#include "test_support.hpp"

using namespace kjit;
using kjit::test::make_array;
using kjit::test::read_array;

namespace lane_adjoints {
using namespace kjit::dsl;
KJIT_MODULE(autodiff_lanes)

/// A device function with a loop, reading a table at a lane's own index: called per lane
/// under a divergent branch, its adjoint adds to the table's adjoint atomically.
inline const auto smooth = func("lanes_smooth", [](Double v, Array<Double> t, Int j) {
  Var<Double> r = v;
  For(0, j % 3 + 1, [&](Int) { r = r * t[j] + sin(r) * 0.1; });
  return Double(r);
});

/// If/ElseIf/Else with a loop in one side (masked sides), then a small If (inside the lane
/// loop, both sides under bits).
KJIT_KERNEL(branches, (Array<Double> x, Array<Double> out)) {
  Int i = tid();
  Double v = x[i];
  Var<Double> y = 0.0;
  If(v > 1.0, [&] { y = v * v * sin(v); })
      .ElseIf(v > -1.0, [&] { y = exp(v * 0.5) + 3.0; })
      .Else([&] {
        y = -v * cos(v);
        For(0, i % 3 + 1, [&](Int) { y = y * 1.1 + v; });
      });
  If(v < 0.5, [&] { y = y * v; });
  out[i] = y * v;
}

/// Per-lane begin, end and step (both signs), a nested loop whose count depends on the outer
/// induction value, and a uniform loop inside the divergent one.
KJIT_KERNEL(trips, (Array<Double> x, Array<Int> lo, Array<Int> hi, Array<Int> st, Int un, Array<Double> out)) {
  Int i = tid();
  Var<Double> acc = x[i];
  For(lo[i], hi[i], st[i], [&](Int k) {
    acc = acc * 0.9 + sin(acc) * Double(k);
    For(0, k % 4, [&](Int m) { acc = acc * 1.01 + x[i] * Double(m); });
    For(0, un, [&](Int) { acc = acc + 0.25 * acc / (1.0 + acc * acc); });
  });
  out[i] = acc;
}

/// Return before any loop, Continue and Break in a While, Break in a For.
KJIT_KERNEL(exits, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Double v = x[i];
  If(v < -2.0, [&] { Return(); });
  Var<Double> y = v;
  Var<Int> k = 0;
  While([&] { return k < n; }, [&] {
    k = k + 1;
    If((k + i) % 3 == 0, [&] { Continue(); });
    y = y * 1.25 + sin(y) * 0.1;
    If(y > 4.0, [&] { Break(); });
  });
  For(0, n, [&](Int j) {
    If(y * Double(j) > 6.0, [&] { Break(); });
    y = y + 0.1 * cos(y);
  });
  out[i] = y * y;
}

/// Reads at other threads' indices (their adjoints add atomically), atomic_add under a mask,
/// atomic_max (its adjoint goes to the winner, whose element's adjoint it consumes). The
/// indices under the masks are far out of bounds for the lanes that are off: any access of
/// theirs, forward or adjoint, would fault.
KJIT_KERNEL(scatter, (Array<Double> x, Array<Int> idx, Array<Double> acc, Array<Double> out)) {
  Int i = tid();
  Int n = x.shape(0);
  Int far = 1 << 28;
  Double v = x[i];
  Double g = x[idx[i]];
  If(v > 0.0, [&] {
    Int j = where(v > 0.0, (i * 3 + 1) % n, far);
    atomic_add(acc, i % 7, v * g * x[j]);
  });
  If(v < 0.5, [&] { out[i] = g * g + v; }).Else([&] { out[i] = sin(g) * v; });
  If(g > 1.0, [&] { atomic_max(acc, where(g > 1.0, 7 + i % 3, far), g * v); });
}

/// Vector and matrix state through a divergent loop with a branch inside.
KJIT_KERNEL(aggregates, (Array<Vec3d> p, Array<Mat33d> m, Array<Int> n, Array<Vec3d> out)) {
  Int i = tid();
  Var<Vec3d> w = p[i];
  Var<Mat33d> a = m[i];
  For(0, n[i], [&](Int k) {
    w = a * w * 0.5 + Vec3d(Double(k), 1.0, -1.0);
    If(w.x() > 1.0, [&] {
      a = a * 0.9;
      w = normalize(w) * 2.0;
    });
  });
  out[i] = w + a * Vec3d(1.0, 1.0, 1.0);
}

/// A value every lane shares (s[0]: its gradient is the sum over all threads) and a uniform
/// variable from a parameter, in a uniform loop and a divergent branch.
KJIT_KERNEL(shared, (Array<Double> x, Array<Double> s, Double c, Int n, Array<Double> out)) {
  Int i = tid();
  Double common = s[0];
  Var<Double> k = c;
  Var<Double> y = x[i];
  For(0, n, [&](Int) {
    k = k * 1.1;
    y = y * common + k * 0.01;
  });
  If(x[i] > 0.0, [&] { y = y * common; });
  out[i] = y;
}

/// A device function per lane, under a divergent branch.
KJIT_KERNEL(calls, (Array<Double> x, Array<Double> table, Array<Double> out)) {
  Int i = tid();
  Double v = x[i];
  Var<Double> y = v;
  If(v > 0.0, [&] { y = smooth(v, table, where(v > 0.0, i % 5, 1 << 28)); });  // far out of bounds when off
  out[i] = y * v;
}

/// print() of a uniform value and of a per-lane one: the reverse sweep prints each thread's
/// adjoints.
KJIT_KERNEL(prints, (Array<Double> x, Double c, Array<Double> out)) {
  Int i = tid();
  Double u = c * 2.0;
  print(u);
  Double y = x[i] * u;
  If(y > 0.0, [&] { print(y); });
  out[i] = y * y;
}
}  // namespace lane_adjoints

namespace lane_adjoints_bounded {
using namespace kjit::dsl;
KJIT_MODULE(autodiff_lanes_bounded)

/// A divergent loop and a uniform one inside a divergent branch: either can pass the bound
/// (loop_checkpoints 4: 16 iterations) in some lanes only.
KJIT_KERNEL(bounded, (Array<Double> x, Array<Int> n, Int m, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  For(0, n[i], [&](Int) { y = y * 1.01 + 0.1 * sin(y); });
  If(x[i] > 0.0, [&] { For(0, m, [&](Int) { y = y * 0.99 + 0.05 * cos(y); }); });
  out[i] = y;
}
}  // namespace lane_adjoints_bounded

namespace lane_adjoints_large {
using namespace kjit::dsl;
KJIT_MODULE(autodiff_lanes_large)

/// With 512 checkpoints, a block's slots of a 3x3 matrix would take 2 * 512 * 16 * 72 bytes:
/// more than a lane function's frame may hold, so the adjoint runs one thread at a time.
KJIT_KERNEL(large, (Array<Mat33d> m, Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Mat33d> a = m[i];
  Double c = x[i];
  For(0, n, [&](Int) { a = a * c; });
  out[i] = trace(a);
}
}  // namespace lane_adjoints_large

namespace {

// --- the reference: forward-mode dual numbers ---------------------------------------------

struct Dual {
  double v = 0, d = 0;
  Dual(double x = 0, double dx = 0) : v(x), d(dx) {}
};
Dual operator+(Dual a, Dual b) { return {a.v + b.v, a.d + b.d}; }
Dual operator-(Dual a, Dual b) { return {a.v - b.v, a.d - b.d}; }
Dual operator-(Dual a) { return {-a.v, -a.d}; }
Dual operator*(Dual a, Dual b) { return {a.v * b.v, a.d * b.v + a.v * b.d}; }
Dual operator/(Dual a, Dual b) { return {a.v / b.v, (a.d * b.v - a.v * b.d) / (b.v * b.v)}; }
Dual sin(Dual a) { return {std::sin(a.v), std::cos(a.v) * a.d}; }
Dual cos(Dual a) { return {std::cos(a.v), -std::sin(a.v) * a.d}; }
Dual exp(Dual a) { return {std::exp(a.v), std::exp(a.v) * a.d}; }
Dual sqrt(Dual a) { return {std::sqrt(a.v), a.d / (2 * std::sqrt(a.v))}; }
double val(Dual x) { return x.v; }
using std::cos;
using std::exp;
using std::sin;
using std::sqrt;

template <class T> T branches_ref(T v, int i) {
  T y;
  if (val(v) > 1.0) {
    y = v * v * sin(v);
  } else if (val(v) > -1.0) {
    y = exp(v * 0.5) + 3.0;
  } else {
    y = -v * cos(v);
    for (int k = 0; k < i % 3 + 1; ++k) y = y * 1.1 + v;
  }
  if (val(v) < 0.5) y = y * v;
  return y * v;
}

template <class T> T trips_ref(T x, int lo, int hi, int st, int un) {
  T acc = x;
  for (int k = lo; st > 0 ? k < hi : (st < 0 && k > hi); k += st) {
    acc = acc * 0.9 + sin(acc) * double(k);
    for (int m = 0; m < k % 4; ++m) acc = acc * 1.01 + x * double(m);
    for (int u = 0; u < un; ++u) acc = acc + 0.25 * acc / (1.0 + acc * acc);
  }
  return acc;
}

/// `exit`: 0 returned, 1 left the While by its condition, 2 by Break.
template <class T> T exits_ref(T v, int i, int n, int& exit) {
  exit = 0;
  if (val(v) < -2.0) return T(0.0);
  T y = v;
  exit = 1;
  for (int k = 0; k < n;) {
    k = k + 1;
    if ((k + i) % 3 == 0) continue;
    y = y * 1.25 + sin(y) * 0.1;
    if (val(y) > 4.0) {
      exit = 2;
      break;
    }
  }
  for (int j = 0; j < n; ++j) {
    if (val(y) * double(j) > 6.0) break;
    y = y + 0.1 * cos(y);
  }
  return y * y;
}

template <class T> struct V3 { T c[3]; };
template <class T> struct M3 { T c[3][3]; };
template <class T> V3<T> mul(const M3<T>& a, const V3<T>& w) {
  V3<T> r;
  for (int i = 0; i < 3; ++i) r.c[i] = a.c[i][0] * w.c[0] + a.c[i][1] * w.c[1] + a.c[i][2] * w.c[2];
  return r;
}

/// `branched`: counts the iterations that took the branch.
template <class T> V3<T> aggregates_ref(V3<T> w, M3<T> a, int n, int& branched) {
  for (int k = 0; k < n; ++k) {
    V3<T> aw = mul(a, w);
    w = V3<T>{{aw.c[0] * 0.5 + double(k), aw.c[1] * 0.5 + 1.0, aw.c[2] * 0.5 - 1.0}};
    if (val(w.c[0]) > 1.0) {
      ++branched;
      for (auto& row : a.c)
        for (T& e : row) e = e * 0.9;
      T len = sqrt(w.c[0] * w.c[0] + w.c[1] * w.c[1] + w.c[2] * w.c[2]);
      for (T& e : w.c) e = e / len * 2.0;
    }
  }
  V3<T> a1 = mul(a, V3<T>{{T(1.0), T(1.0), T(1.0)}});
  return V3<T>{{w.c[0] + a1.c[0], w.c[1] + a1.c[1], w.c[2] + a1.c[2]}};
}

template <class T> T shared_ref(T x, T common, double c, int n) {
  T y = x;
  double k = c;
  for (int j = 0; j < n; ++j) {
    k = k * 1.1;
    y = y * common + k * 0.01;
  }
  if (val(x) > 0.0) y = y * common;
  return y;
}

template <class T> T bounded_ref(T x, int n, int m) {
  T y = x;
  for (int k = 0; k < n; ++k) y = y * 1.01 + 0.1 * sin(y);
  if (val(x) > 0.0)
    for (int k = 0; k < m; ++k) y = y * 0.99 + 0.05 * cos(y);
  return y;
}

template <class T> T smooth_ref(T v, const std::vector<T>& t, int j) {
  T r = v;
  for (int k = 0; k < j % 3 + 1; ++k) r = r * t[size_t(j)] + sin(r) * 0.1;
  return r;
}

// --- layouts ---------------------------------------------------------------------------------

/// Inputs that make neighbouring lanes take different paths.
double input(int i) { return std::sin(double(i) * 1.7) * 3.0; }
/// Output seeds (the cotangents of the outputs).
double seed(int i) { return 0.5 + 0.25 * std::cos(double(i) * 0.9); }

void near(double got, double want) { REQUIRE(std::fabs(got - want) <= 1e-9 * (1.0 + std::fabs(want))); }

/// Runs `check(strided, keep, n)` for dense arrays (lane blocks and a tail) and strided ones
/// (one thread at a time), at 37 threads (two blocks and a tail of 5) and 1003 (62 and 11),
/// in modules without bounds checks (which would have no lane functions).
void each_layout(const std::function<void(bool, std::vector<NdArray>&, int)>& check, std::vector<int> sizes = {37, 1003}) {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  for (int n : sizes)
    for (bool strided : {false, true}) {
      CAPTURE(n);
      CAPTURE(strided);
      std::vector<NdArray> keep;
      check(strided, keep, n);
    }
}

/// The generated text of `module` (without bounds checks).
std::string module_text(const char* module) {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  const compiler::ModuleSource s = module_compile_input(module).source;
  return s.text.empty() ? s.generate() : s.text;
}

std::vector<double> inputs(int n) {
  std::vector<double> xs(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) xs[size_t(i)] = input(i);
  return xs;
}
std::vector<double> seeds(int n) {
  std::vector<double> w(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) w[size_t(i)] = seed(i);
  return w;
}

}  // namespace

TEST_CASE("every kernel of the suite's modules gets an adjoint lane function") {
  const std::string text = module_text("autodiff_lanes") + module_text("autodiff_lanes_bounded");
  for (const char* k : {"branches", "trips", "exits", "scatter", "aggregates", "shared", "calls", "prints", "bounded"}) {
    CHECK_MESSAGE(text.find("__" + std::string(k) + "_fwd(") != std::string::npos, k);
    CHECK_MESSAGE(text.find("__" + std::string(k) + "_adj_lanes(") != std::string::npos, k);
  }
}

TEST_CASE("a kernel whose lane frame would be too large keeps its scalar adjoint, and its gradients") {
  ModuleOptions o;
  o.loop_checkpoints = 512;
  kjit::module("autodiff_lanes_large").set_options(o);
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  const std::string text = module_text("autodiff_lanes_large");
  CHECK(text.find("__large_fwd_lanes(") != std::string::npos);
  CHECK(text.find("__large_adj_lanes(") == std::string::npos);
  const int n = 37, iters = 5;
  std::vector<mat33d> ms(static_cast<size_t>(n));
  std::vector<double> xs = inputs(n), w = seeds(n);
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) ms[size_t(i)].c[r][c] = 1.0 + 0.1 * (r + 3 * c) + 0.01 * i;
  auto m = NdArray::from_vector(ms), x = NdArray::from_vector(xs), out = zeros<double>({n});
  auto gx = zeros<double>({n}), gout = NdArray::from_vector(w);
  launch(lane_adjoints_large::large, n, m, x, iters, out);
  launch_adjoint(lane_adjoints_large::large, n, {m, x, iters, out}, {NdArray{}, gx, {}, gout});
  const std::vector<double> g = gx.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    const mat33d& a = ms[size_t(i)];
    near(g[size_t(i)], w[size_t(i)] * (a.c[0][0] + a.c[1][1] + a.c[2][2]) * iters * std::pow(xs[size_t(i)], iters - 1));
  }
}

TEST_CASE("adjoint lanes: If, ElseIf and Else give each lane its own branch's gradient") {
  each_layout([](bool strided, std::vector<NdArray>& keep, int n) {
    const std::vector<double> xs = inputs(n), w = seeds(n);
    auto x = make_array(xs, strided, keep), out = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
    auto gx = make_array(std::vector<double>(size_t(n), 0.0), strided, keep), gout = make_array(w, strided, keep);
    launch(lane_adjoints::branches, n, x, out);
    launch_adjoint(lane_adjoints::branches, n, {x, out}, {gx, gout});
    const std::vector<double> g = read_array<double>(gx);
    int sides[3] = {0, 0, 0};
    for (int i = 0; i < n; ++i) {
      near(g[size_t(i)], w[size_t(i)] * branches_ref(Dual(xs[size_t(i)], 1.0), i).d);
      ++sides[xs[size_t(i)] > 1.0 ? 0 : xs[size_t(i)] > -1.0 ? 1 : 2];
    }
    for (int s : sides) CHECK(s > n / 6);  // every side is taken by many lanes
  });
}

TEST_CASE("adjoint lanes: loops whose trip counts differ per lane reverse each lane's own iterations") {
  each_layout([](bool strided, std::vector<NdArray>& keep, int n) {
    std::vector<int32_t> lo(static_cast<size_t>(n)), hi(static_cast<size_t>(n)), st(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      lo[size_t(i)] = i % 7 - 2;
      hi[size_t(i)] = (i * 5) % 11;
      st[size_t(i)] = i % 9 == 0 ? -1 - i % 2 : 1 + i % 3;  // some lanes count down, some run none
      if (st[size_t(i)] < 0) std::swap(lo[size_t(i)], hi[size_t(i)]);
    }
    const int un = 2;
    const std::vector<double> xs = inputs(n), w = seeds(n);
    std::vector<double> x0(xs);
    for (double& v : x0) v = 0.3 * v;
    auto x = make_array(x0, strided, keep), out = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
    auto L = make_array(lo, strided, keep), H = make_array(hi, strided, keep), S = make_array(st, strided, keep);
    auto gx = make_array(std::vector<double>(size_t(n), 0.0), strided, keep), gout = make_array(w, strided, keep);
    launch(lane_adjoints::trips, n, x, L, H, S, un, out);
    launch_adjoint(lane_adjoints::trips, n, {x, L, H, S, un, out}, {gx, {}, {}, {}, {}, gout});
    const std::vector<double> g = read_array<double>(gx);
    int none = 0, down = 0;
    for (int i = 0; i < n; ++i) {
      const size_t k = size_t(i);
      near(g[k], w[k] * trips_ref(Dual(x0[k], 1.0), lo[k], hi[k], st[k], un).d);
      none += g[k] == w[k];
      down += st[k] < 0;
    }
    CHECK(none > 0);  // some lanes run no iteration
    CHECK(down > 0);
  });
}

TEST_CASE("adjoint lanes: Break, Continue and Return act per lane") {
  each_layout([](bool strided, std::vector<NdArray>& keep, int n) {
    const std::vector<double> xs = inputs(n), w = seeds(n);
    const int iters = 9;
    auto x = make_array(xs, strided, keep), out = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
    auto gx = make_array(std::vector<double>(size_t(n), 0.0), strided, keep), gout = make_array(w, strided, keep);
    launch(lane_adjoints::exits, n, x, iters, out);
    launch_adjoint(lane_adjoints::exits, n, {x, iters, out}, {gx, {}, gout});
    const std::vector<double> g = read_array<double>(gx);
    int exits[3] = {0, 0, 0};
    for (int i = 0; i < n; ++i) {
      int exit = 0;
      near(g[size_t(i)], w[size_t(i)] * exits_ref(Dual(xs[size_t(i)], 1.0), i, iters, exit).d);
      ++exits[exit];
    }
    for (int e : exits) CHECK(e > n / 8);  // Return, the While's condition and Break: each common
  });
}

TEST_CASE("adjoint lanes: a loop past its checkpoint bound in some lanes reports it, and those lanes add nothing") {
  ModuleOptions o;
  o.loop_checkpoints = 4;  // bound: 16 iterations
  kjit::module("autodiff_lanes_bounded").set_options(o);
  for (bool uniform_loop : {false, true}) {
    CAPTURE(uniform_loop);
    each_layout([&](bool strided, std::vector<NdArray>& keep, int n) {
      const std::vector<double> xs = inputs(n), w = seeds(n);
      std::vector<int32_t> counts(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) counts[size_t(i)] = !uniform_loop && i % 5 == 0 ? 20 : 10;
      const int m = uniform_loop ? 17 : 3;  // past the bound in the lanes with x > 0
      auto x = make_array(xs, strided, keep), N = make_array(counts, strided, keep);
      auto out = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
      auto gx = make_array(std::vector<double>(size_t(n), 0.0), strided, keep), gout = make_array(w, strided, keep);
      launch(lane_adjoints_bounded::bounded, n, x, N, m, out);
      try {
        launch_adjoint(lane_adjoints_bounded::bounded, n, {x, N, m, out}, {gx, {}, {}, gout});
        FAIL("no error");
      } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::User);
        CHECK(std::string(e.what()).find("more than 16 iterations") != std::string::npos);
      }
      const std::vector<double> g = read_array<double>(gx);
      int past = 0;
      for (int i = 0; i < n; ++i) {
        const bool over = counts[size_t(i)] > 16 || (xs[size_t(i)] > 0.0 && m > 16);
        CAPTURE(i);
        if (over) REQUIRE(g[size_t(i)] == 0.0);
        else near(g[size_t(i)], w[size_t(i)] * bounded_ref(Dual(xs[size_t(i)], 1.0), counts[size_t(i)], m).d);
        past += over;
      }
      CHECK(past > n / 8);
      CHECK(past < n - n / 8);
    });
  }
}

TEST_CASE("adjoint lanes: loops longer than their checkpoints, within the bound, reverse segment by segment") {
  ModuleOptions o;
  o.loop_checkpoints = 4;  // checkpoints every 2 or 4 iterations past 4; bound 16
  kjit::module("autodiff_lanes_bounded").set_options(o);
  each_layout([&](bool strided, std::vector<NdArray>& keep, int n) {
    const std::vector<double> xs = inputs(n), w = seeds(n);
    std::vector<int32_t> counts(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) counts[size_t(i)] = (i * 7) % 17;  // 0..16: lanes end inside segments
    const int m = 7;                                              // the uniform loop: segments of 2
    auto x = make_array(xs, strided, keep), N = make_array(counts, strided, keep);
    auto out = make_array(std::vector<double>(static_cast<size_t>(n), 0.0), strided, keep);
    auto gx = make_array(std::vector<double>(static_cast<size_t>(n), 0.0), strided, keep), gout = make_array(w, strided, keep);
    launch(lane_adjoints_bounded::bounded, n, x, N, m, out);
    launch_adjoint(lane_adjoints_bounded::bounded, n, {x, N, m, out}, {gx, {}, {}, gout});
    const std::vector<double> g = read_array<double>(gx);
    for (int i = 0; i < n; ++i)
      near(g[size_t(i)], w[size_t(i)] * bounded_ref(Dual(xs[size_t(i)], 1.0), counts[size_t(i)], m).d);
  });
}

TEST_CASE("adjoint lanes: atomics under masks and reads at other threads' indices") {
  each_layout([](bool strided, std::vector<NdArray>& keep, int n) {
    const std::vector<double> xs = inputs(n), w = seeds(n);
    std::vector<int32_t> idx(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) idx[size_t(i)] = (i * 7 + 3) % n;
    std::vector<double> acc0(10, 0.0), wacc(10);
    for (int s = 7; s < 10; ++s) acc0[size_t(s)] = -100.0;
    for (int s = 0; s < 10; ++s) wacc[size_t(s)] = 0.3 + 0.1 * s;
    auto x = make_array(xs, strided, keep), I = make_array(idx, strided, keep), acc = make_array(acc0, strided, keep);
    auto out = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
    auto gx = make_array(std::vector<double>(size_t(n), 0.0), strided, keep), gout = make_array(w, strided, keep);
    auto gacc = make_array(wacc, strided, keep);
    launch(lane_adjoints::scatter, n, x, I, acc, out);
    launch_adjoint(lane_adjoints::scatter, n, {x, I, acc, out}, {gx, {}, gacc, gout});
    const std::vector<double> g = read_array<double>(gx), ga = read_array<double>(gacc);
    // The reference: L = sum w out + sum wacc acc over the whole launch, one dual seed per input.
    auto loss = [&](const std::vector<Dual>& xd) {
      std::vector<Dual> a(acc0.begin(), acc0.end());
      Dual L = 0.0;
      for (int i = 0; i < n; ++i) {
        const Dual v = xd[size_t(i)], gg = xd[size_t(idx[size_t(i)])];
        if (v.v > 0.0) a[size_t(i % 7)] = a[size_t(i % 7)] + v * gg * xd[size_t((i * 3 + 1) % n)];
        L = L + w[size_t(i)] * (v.v < 0.5 ? gg * gg + v : sin(gg) * v);
        if (gg.v > 1.0 && (gg * v).v > a[size_t(7 + i % 3)].v) a[size_t(7 + i % 3)] = gg * v;
      }
      for (int s = 0; s < 10; ++s) L = L + wacc[size_t(s)] * a[size_t(s)];
      return L;
    };
    std::vector<Dual> xd(xs.begin(), xs.end());
    for (int j = 0; j < n; ++j) {
      xd[size_t(j)].d = 1.0;
      near(g[size_t(j)], loss(xd).d);
      xd[size_t(j)].d = 0.0;
    }
    // atomic_max's adjoint consumed the winners' elements; atomic_add's are left as they were.
    for (int s = 0; s < 7; ++s) CHECK(ga[size_t(s)] == wacc[size_t(s)]);
    for (int s = 7; s < 10; ++s) CHECK(ga[size_t(s)] == 0.0);
    // Without acc's adjoint (lane blocks then run one thread at a time: the sweep reads it).
    auto gx2 = make_array(std::vector<double>(static_cast<size_t>(n), 0.0), strided, keep);
    launch_adjoint(lane_adjoints::scatter, n, {x, I, acc, out}, {gx2, {}, {}, gout});
    const std::vector<double> g2 = read_array<double>(gx2);
    std::fill(wacc.begin(), wacc.end(), 0.0);
    for (int j = 0; j < n; ++j) {
      xd[size_t(j)].d = 1.0;
      near(g2[size_t(j)], loss(xd).d);
      xd[size_t(j)].d = 0.0;
    }
  }, {37, 203});
}

TEST_CASE("adjoint lanes: vector and matrix state through a divergent loop") {
  each_layout([](bool strided, std::vector<NdArray>& keep, int n) {
    std::vector<vec3d> ps(static_cast<size_t>(n)), wv(static_cast<size_t>(n));
    std::vector<mat33d> ms(static_cast<size_t>(n));
    std::vector<int32_t> ns(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      ps[size_t(i)] = vec3d{{input(i), -input(i + 1), 0.25 * double(i % 8)}};
      wv[size_t(i)] = vec3d{{seed(i), seed(i + 1), -seed(i + 2)}};
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) ms[size_t(i)].c[r][c] = (r == c ? 1.0 : 0.1 * input(i + r + 3 * c));
      ns[size_t(i)] = i % 6;
    }
    auto p = make_array(ps, strided, keep), m = make_array(ms, strided, keep), N = make_array(ns, strided, keep);
    auto out = make_array(std::vector<vec3d>(static_cast<size_t>(n)), strided, keep);
    auto gp = make_array(std::vector<vec3d>(static_cast<size_t>(n)), strided, keep), gm = make_array(std::vector<mat33d>(static_cast<size_t>(n)), strided, keep);
    auto gout = make_array(wv, strided, keep);
    launch(lane_adjoints::aggregates, n, p, m, N, out);
    launch_adjoint(lane_adjoints::aggregates, n, {p, m, N, out}, {gp, gm, {}, gout});
    const std::vector<vec3d> g = read_array<vec3d>(gp);
    const std::vector<mat33d> h = read_array<mat33d>(gm);
    int branched = 0;
    for (int i = 0; i < n; ++i) {
      const size_t k = size_t(i);
      auto grad = [&](int component) {  // d (w . out) / d input component (0-2: p, 3-11: m)
        V3<Dual> w0;
        M3<Dual> a0;
        for (int c = 0; c < 3; ++c) w0.c[c] = Dual(ps[k].c[c], component == c ? 1.0 : 0.0);
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) a0.c[r][c] = Dual(ms[k].c[r][c], component == 3 + 3 * r + c ? 1.0 : 0.0);
        const V3<Dual> o = aggregates_ref(w0, a0, ns[k], branched);
        return wv[k].c[0] * o.c[0].d + wv[k].c[1] * o.c[1].d + wv[k].c[2] * o.c[2].d;
      };
      for (int c = 0; c < 3; ++c) near(g[k].c[c], grad(c));
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) near(h[k].c[r][c], grad(3 + 3 * r + c));
    }
    CHECK(branched > n);  // taken in many lanes' iterations (counted once per gradient component)
  });
}

TEST_CASE("adjoint lanes: a value every lane shares receives the sum of all lanes' adjoints") {
  each_layout([](bool strided, std::vector<NdArray>& keep, int n) {
    std::vector<double> xs = inputs(n);
    const std::vector<double> w = seeds(n);
    const double c = 0.7, common = 0.93;
    const int iters = 5;
    for (double& v : xs) v *= 0.2;
    auto x = make_array(xs, strided, keep), s = make_array(std::vector<double>{common}, strided, keep);
    auto out = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
    auto gx = make_array(std::vector<double>(size_t(n), 0.0), strided, keep), gs = make_array(std::vector<double>{0.0}, strided, keep);
    auto gout = make_array(w, strided, keep);
    launch(lane_adjoints::shared, n, x, s, c, iters, out);
    launch_adjoint(lane_adjoints::shared, n, {x, s, c, iters, out}, {gx, gs, {}, {}, gout});
    const std::vector<double> g = read_array<double>(gx);
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
      near(g[size_t(i)], w[size_t(i)] * shared_ref(Dual(xs[size_t(i)], 1.0), Dual(common), c, iters).d);
      sum += w[size_t(i)] * shared_ref(Dual(xs[size_t(i)]), Dual(common, 1.0), c, iters).d;
    }
    near(read_array<double>(gs)[0], sum);
  });
}

TEST_CASE("adjoint lanes: device functions run per lane under a divergent branch") {
  each_layout([](bool strided, std::vector<NdArray>& keep, int n) {
    const std::vector<double> xs = inputs(n), w = seeds(n);
    const std::vector<double> table{0.9, 1.05, 0.8, 1.1, 0.95};
    auto x = make_array(xs, strided, keep), t = make_array(table, strided, keep);
    auto out = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
    auto gx = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
    auto gt = make_array(std::vector<double>(table.size(), 0.0), strided, keep), gout = make_array(w, strided, keep);
    launch(lane_adjoints::calls, n, x, t, out);
    launch_adjoint(lane_adjoints::calls, n, {x, t, out}, {gx, gt, gout});
    const std::vector<double> g = read_array<double>(gx), gtab = read_array<double>(gt);
    std::vector<double> tsum(table.size(), 0.0);
    for (int i = 0; i < n; ++i) {
      const double v = xs[size_t(i)];
      std::vector<Dual> td(table.begin(), table.end());
      if (!(v > 0.0)) {
        near(g[size_t(i)], w[size_t(i)] * 2.0 * v);
        continue;
      }
      near(g[size_t(i)], w[size_t(i)] * (smooth_ref(Dual(v, 1.0), td, i % 5) * Dual(v, 1.0)).d);
      td[size_t(i % 5)].d = 1.0;
      tsum[size_t(i % 5)] += w[size_t(i)] * (smooth_ref(Dual(v), td, i % 5) * v).d;
    }
    for (size_t j = 0; j < table.size(); ++j) near(gtab[j], tsum[j]);
  });
}

TEST_CASE("adjoint lanes: print() prints each thread's adjoints, of uniform values too") {
  std::vector<std::string> printed[2];
  each_layout(
      [&](bool strided, std::vector<NdArray>& keep, int n) {
        const std::vector<double> xs = inputs(n), w = seeds(n);
        auto x = make_array(xs, strided, keep), out = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
        auto gx = make_array(std::vector<double>(size_t(n), 0.0), strided, keep), gout = make_array(w, strided, keep);
        test::capture_stdout([&] { launch(lane_adjoints::prints, n, x, 1.5, out); });  // the forward's prints
        const std::string text =
            test::capture_stdout([&] { launch_adjoint(lane_adjoints::prints, n, {x, 1.5, out}, {gx, {}, gout}); });
        std::vector<std::string>& lines = printed[strided];
        for (size_t a = 0, b; (b = text.find('\n', a)) != std::string::npos; a = b + 1) lines.push_back(text.substr(a, b - a));
        std::sort(lines.begin(), lines.end());
        int positive = 0;
        for (double v : xs) positive += v > 0.0;
        CHECK(lines.size() == size_t(n + positive));  // u in every thread, y where it is positive
        // d L / d u in thread i is w_i * 2 y x_i: the uniform u's adjoint differs per thread.
        CHECK(std::set<std::string>(lines.begin(), lines.end()).size() > size_t(n / 2));
      },
      {37});
  CHECK(printed[0] == printed[1]);
}
