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
#include <array>
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

// The kernels below are written once over the scalar type S and instantiated for double and
// float: float kernels' adjoints run KJ_WIDE_LANES lanes per block (32 with AVX-512), double
// ones KJ_LANES (16).

/// If/ElseIf/Else with a loop in one side (masked sides), then a small If (inside the lane
/// loop, both sides under bits).
template <class S>
void branches_body(Array<S> x, Array<S> out) {
  using R = Value<S>;
  Int i = tid();
  R v = x[i];
  Var<S> y = 0.0;
  If(v > 1.0, [&] { y = v * v * sin(v); })
      .ElseIf(v > -1.0, [&] { y = exp(v * 0.5) + 3.0; })
      .Else([&] {
        y = -v * cos(v);
        For(0, i % 3 + 1, [&](Int) { y = y * 1.1 + v; });
      });
  If(v < 0.5, [&] { y = y * v; });
  out[i] = y * v;
}
KJIT_KERNEL(branches, (Array<Double> x, Array<Double> out)) { branches_body<double>(x, out); }
KJIT_KERNEL(branches_f32, (Array<Float> x, Array<Float> out)) { branches_body<float>(x, out); }

/// Per-lane begin, end and step (both signs), a nested loop whose count depends on the outer
/// induction value, and a uniform loop inside the divergent one.
template <class S>
void trips_body(Array<S> x, Array<Int> lo, Array<Int> hi, Array<Int> st, Int un, Array<S> out) {
  using R = Value<S>;
  Int i = tid();
  Var<S> acc = x[i];
  For(lo[i], hi[i], st[i], [&](Int k) {
    acc = acc * 0.9 + sin(acc) * R(k);
    For(0, k % 4, [&](Int m) { acc = acc * 1.01 + x[i] * R(m); });
    For(0, un, [&](Int) { acc = acc + 0.25 * acc / (1.0 + acc * acc); });
  });
  out[i] = acc;
}
KJIT_KERNEL(trips, (Array<Double> x, Array<Int> lo, Array<Int> hi, Array<Int> st, Int un, Array<Double> out)) {
  trips_body<double>(x, lo, hi, st, un, out);
}
KJIT_KERNEL(trips_f32, (Array<Float> x, Array<Int> lo, Array<Int> hi, Array<Int> st, Int un, Array<Float> out)) {
  trips_body<float>(x, lo, hi, st, un, out);
}

/// Return before any loop, Continue and Break in a While, Break in a For.
template <class S>
void exits_body(Array<S> x, Int n, Array<S> out) {
  using R = Value<S>;
  Int i = tid();
  R v = x[i];
  If(v < -2.0, [&] { Return(); });
  Var<S> y = v;
  Var<Int> k = 0;
  While([&] { return k < n; }, [&] {
    k = k + 1;
    If((k + i) % 3 == 0, [&] { Continue(); });
    y = y * 1.25 + sin(y) * 0.1;
    If(y > 4.0, [&] { Break(); });
  });
  For(0, n, [&](Int j) {
    If(y * R(j) > 6.0, [&] { Break(); });
    y = y + 0.1 * cos(y);
  });
  out[i] = y * y;
}
KJIT_KERNEL(exits, (Array<Double> x, Int n, Array<Double> out)) { exits_body<double>(x, n, out); }
KJIT_KERNEL(exits_f32, (Array<Float> x, Int n, Array<Float> out)) { exits_body<float>(x, n, out); }

/// Reads at other threads' indices (their adjoints add atomically), atomic_add under a mask,
/// atomic_max (its adjoint goes to the winner, whose element's adjoint it consumes). The
/// indices under the masks are far out of bounds for the lanes that are off: any access of
/// theirs, forward or adjoint, would fault.
template <class S>
void scatter_body(Array<S> x, Array<Int> idx, Array<S> acc, Array<S> out) {
  using R = Value<S>;
  Int i = tid();
  Int n = x.shape(0);
  Int far = 1 << 28;
  R v = x[i];
  R g = x[idx[i]];
  If(v > 0.0, [&] {
    Int j = where(v > 0.0, (i * 3 + 1) % n, far);
    atomic_add(acc, i % 7, v * g * x[j]);
  });
  If(v < 0.5, [&] { out[i] = g * g + v; }).Else([&] { out[i] = sin(g) * v; });
  If(g > 1.0, [&] { atomic_max(acc, where(g > 1.0, 7 + i % 3, far), g * v); });
}
KJIT_KERNEL(scatter, (Array<Double> x, Array<Int> idx, Array<Double> acc, Array<Double> out)) {
  scatter_body<double>(x, idx, acc, out);
}
KJIT_KERNEL(scatter_f32, (Array<Float> x, Array<Int> idx, Array<Float> acc, Array<Float> out)) {
  scatter_body<float>(x, idx, acc, out);
}

/// Vector and matrix state through a divergent loop with a branch inside.
template <class S>
void aggregates_body(Array<kjit::vec<3, S>> p, Array<kjit::mat<3, 3, S>> m, Array<Int> n, Array<kjit::vec<3, S>> out) {
  using R = Value<S>;
  using V = Value<kjit::vec<3, S>>;
  Int i = tid();
  Var<kjit::vec<3, S>> w = p[i];
  Var<kjit::mat<3, 3, S>> a = m[i];
  For(0, n[i], [&](Int k) {
    w = a * w * 0.5 + V(R(k), 1.0, -1.0);
    If(w.x() > 1.0, [&] {
      a = a * 0.9;
      w = normalize(w) * 2.0;
    });
  });
  out[i] = w + a * V(1.0, 1.0, 1.0);
}
KJIT_KERNEL(aggregates, (Array<Vec3d> p, Array<Mat33d> m, Array<Int> n, Array<Vec3d> out)) {
  aggregates_body<double>(p, m, n, out);
}
KJIT_KERNEL(aggregates_f32, (Array<Vec3f> p, Array<Mat33f> m, Array<Int> n, Array<Vec3f> out)) {
  aggregates_body<float>(p, m, n, out);
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

/// Gradients (as doubles) of the same launch with dense arrays ([0], lane blocks and a tail)
/// and strided ones ([1], one thread at a time).
using Both = std::array<std::vector<double>, 2>;

/// Runs `run(strided, keep, n)`, which returns the gradients, for both layouts at 37 and 1003
/// threads, and checks them against `ref(n)`. Float64 kernels must match the reference to
/// 1e-9; float32 ones (KJ_WIDE_LANES lanes per block) must match each other to 1e-5 (the same
/// float operations in another order) and the float64 reference to 2e-3, but for the odd
/// thread whose float path crosses a branch's threshold elsewhere than the reference's.
template <class S>
void both_layouts(const std::function<std::vector<double>(bool, std::vector<NdArray>&, int)>& run,
                  const std::function<std::vector<double>(int)>& ref, std::vector<int> sizes = {37, 1003}) {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  for (int n : sizes) {
    CAPTURE(n);
    Both g;
    for (bool strided : {false, true}) {
      std::vector<NdArray> keep;
      g[strided] = run(strided, keep, n);
    }
    const std::vector<double> r = ref(n);
    REQUIRE(g[0].size() == r.size());
    REQUIRE(g[1].size() == r.size());
    size_t off = 0;
    for (size_t k = 0; k < r.size(); ++k) {
      CAPTURE(k);
      if (std::is_same_v<S, double>) {
        near(g[0][k], r[k]);
        near(g[1][k], r[k]);
      } else {
        REQUIRE(std::fabs(g[0][k] - g[1][k]) <= 1e-5 * (1.0 + std::fabs(g[1][k])));
        off += std::fabs(g[0][k] - r[k]) > 2e-3 * (1.0 + std::fabs(r[k]));
      }
    }
    CHECK(off <= r.size() / 50);
  }
}

/// `v` as doubles.
template <class T>
std::vector<double> as_doubles(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}
/// `xs` in scalar type S.
template <class S>
std::vector<S> as(const std::vector<double>& xs) {
  return std::vector<S>(xs.begin(), xs.end());
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
  for (const char* k : {"branches", "trips", "exits", "scatter", "aggregates", "shared", "calls", "prints", "bounded",
                        "branches_f32", "trips_f32", "exits_f32", "scatter_f32", "aggregates_f32"}) {
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

template <class S, class K>
void branches_case(const K& kernel) {
  both_layouts<S>(
      [&](bool strided, std::vector<NdArray>& keep, int n) {
        auto x = make_array(as<S>(inputs(n)), strided, keep), out = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep);
        auto gx = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep), gout = make_array(as<S>(seeds(n)), strided, keep);
        launch(kernel, n, x, out);
        launch_adjoint(kernel, n, {x, out}, {gx, gout});
        return as_doubles(read_array<S>(gx));
      },
      [](int n) {
        std::vector<double> r(static_cast<size_t>(n));
        int sides[3] = {0, 0, 0};
        for (int i = 0; i < n; ++i) {
          const double x = double(S(input(i)));
          r[size_t(i)] = double(S(seed(i))) * branches_ref(Dual(x, 1.0), i).d;
          ++sides[x > 1.0 ? 0 : x > -1.0 ? 1 : 2];
        }
        for (int s : sides) CHECK(s > n / 6);  // every side is taken by many lanes
        return r;
      });
}

TEST_CASE("adjoint lanes: If, ElseIf and Else give each lane its own branch's gradient") {
  branches_case<double>(lane_adjoints::branches);
  branches_case<float>(lane_adjoints::branches_f32);
}

/// Per-lane begin, end and step of the trips kernels: some lanes count down, some run none.
struct Trips {
  std::vector<int32_t> lo, hi, st;
  explicit Trips(int n) : lo(static_cast<size_t>(n)), hi(static_cast<size_t>(n)), st(static_cast<size_t>(n)) {
    for (int i = 0; i < n; ++i) {
      lo[size_t(i)] = i % 7 - 2;
      hi[size_t(i)] = (i * 5) % 11;
      st[size_t(i)] = i % 9 == 0 ? -1 - i % 2 : 1 + i % 3;
      if (st[size_t(i)] < 0) std::swap(lo[size_t(i)], hi[size_t(i)]);
    }
  }
};

template <class S, class K>
void trips_case(const K& kernel) {
  const int un = 2;
  auto x0 = [](int n) {
    std::vector<double> v = inputs(n);
    for (double& e : v) e = double(S(0.3 * e));
    return v;
  };
  both_layouts<S>(
      [&](bool strided, std::vector<NdArray>& keep, int n) {
        const Trips t(n);
        auto x = make_array(as<S>(x0(n)), strided, keep), out = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep);
        auto L = make_array(t.lo, strided, keep), H = make_array(t.hi, strided, keep), St = make_array(t.st, strided, keep);
        auto gx = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep), gout = make_array(as<S>(seeds(n)), strided, keep);
        launch(kernel, n, x, L, H, St, un, out);
        launch_adjoint(kernel, n, {x, L, H, St, un, out}, {gx, {}, {}, {}, {}, gout});
        return as_doubles(read_array<S>(gx));
      },
      [&](int n) {
        const Trips t(n);
        const std::vector<double> x = x0(n);
        std::vector<double> r(static_cast<size_t>(n));
        int none = 0, down = 0;
        for (int i = 0; i < n; ++i) {
          const size_t k = size_t(i);
          r[k] = double(S(seed(i))) * trips_ref(Dual(x[k], 1.0), t.lo[k], t.hi[k], t.st[k], un).d;
          none += t.st[k] > 0 ? t.lo[k] >= t.hi[k] : t.lo[k] <= t.hi[k];
          down += t.st[k] < 0;
        }
        CHECK(none > 0);  // some lanes run no iteration
        CHECK(down > 0);
        return r;
      });
}

TEST_CASE("adjoint lanes: loops whose trip counts differ per lane reverse each lane's own iterations") {
  trips_case<double>(lane_adjoints::trips);
  trips_case<float>(lane_adjoints::trips_f32);
}

template <class S, class K>
void exits_case(const K& kernel) {
  const int iters = 9;
  both_layouts<S>(
      [&](bool strided, std::vector<NdArray>& keep, int n) {
        auto x = make_array(as<S>(inputs(n)), strided, keep), out = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep);
        auto gx = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep), gout = make_array(as<S>(seeds(n)), strided, keep);
        launch(kernel, n, x, iters, out);
        launch_adjoint(kernel, n, {x, iters, out}, {gx, {}, gout});
        return as_doubles(read_array<S>(gx));
      },
      [&](int n) {
        std::vector<double> r(static_cast<size_t>(n));
        int exits[3] = {0, 0, 0};
        for (int i = 0; i < n; ++i) {
          int exit = 0;
          r[size_t(i)] = double(S(seed(i))) * exits_ref(Dual(double(S(input(i))), 1.0), i, iters, exit).d;
          ++exits[exit];
        }
        for (int e : exits) CHECK(e > n / 8);  // Return, the While's condition and Break: each common
        return r;
      });
}

TEST_CASE("adjoint lanes: Break, Continue and Return act per lane") {
  exits_case<double>(lane_adjoints::exits);
  exits_case<float>(lane_adjoints::exits_f32);
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

std::vector<int32_t> scatter_indices(int n) {
  std::vector<int32_t> idx(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) idx[size_t(i)] = (i * 7 + 3) % n;
  return idx;
}
/// The scatter kernels' acc before the launch, and its cotangents.
std::vector<double> acc_start() {
  std::vector<double> a(10, 0.0);
  for (int s = 7; s < 10; ++s) a[size_t(s)] = -100.0;
  return a;
}
std::vector<double> acc_seeds() {
  std::vector<double> w(10);
  for (int s = 0; s < 10; ++s) w[size_t(s)] = 0.3 + 0.1 * s;
  return w;
}

template <class S, class K>
void scatter_case(const K& kernel) {
  // The gradients with acc's adjoint, then without it (the sweep reads it: lane blocks then
  // run one thread at a time).
  both_layouts<S>(
      [&](bool strided, std::vector<NdArray>& keep, int n) {
        auto x = make_array(as<S>(inputs(n)), strided, keep), I = make_array(scatter_indices(n), strided, keep);
        auto acc = make_array(as<S>(acc_start()), strided, keep), out = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep);
        auto gx = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep), gout = make_array(as<S>(seeds(n)), strided, keep);
        auto gacc = make_array(as<S>(acc_seeds()), strided, keep);
        launch(kernel, n, x, I, acc, out);
        launch_adjoint(kernel, n, {x, I, acc, out}, {gx, {}, gacc, gout});
        // atomic_max's adjoint consumed the winners' elements; atomic_add's are left as they were.
        const std::vector<S> ga = read_array<S>(gacc);
        for (int s = 0; s < 7; ++s) CHECK(ga[size_t(s)] == S(acc_seeds()[size_t(s)]));
        for (int s = 7; s < 10; ++s) CHECK(ga[size_t(s)] == S(0));
        auto gx2 = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep);
        launch_adjoint(kernel, n, {x, I, acc, out}, {gx2, {}, {}, gout});
        std::vector<double> g = as_doubles(read_array<S>(gx)), g2 = as_doubles(read_array<S>(gx2));
        g.insert(g.end(), g2.begin(), g2.end());
        return g;
      },
      [](int n) {
        // L = sum w out + sum wacc acc over the whole launch, one dual seed per input.
        const std::vector<int32_t> idx = scatter_indices(n);
        std::vector<double> acc0 = acc_start(), w = seeds(n), wacc = acc_seeds();
        for (double& e : w) e = double(S(e));
        for (double& e : wacc) e = double(S(e));
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
        std::vector<Dual> xd;
        for (int i = 0; i < n; ++i) xd.emplace_back(double(S(input(i))));
        std::vector<double> r(2 * static_cast<size_t>(n));
        for (int pass = 0; pass < 2; ++pass) {
          if (pass == 1) std::fill(wacc.begin(), wacc.end(), 0.0);
          for (int j = 0; j < n; ++j) {
            xd[size_t(j)].d = 1.0;
            r[size_t(pass * n + j)] = loss(xd).d;
            xd[size_t(j)].d = 0.0;
          }
        }
        return r;
      },
      {37, 203});
}

TEST_CASE("adjoint lanes: atomics under masks and reads at other threads' indices") {
  scatter_case<double>(lane_adjoints::scatter);
  scatter_case<float>(lane_adjoints::scatter_f32);
}

/// The aggregates kernels' inputs (in double; float kernels get them rounded).
struct Aggregates {
  std::vector<vec3d> p, w;
  std::vector<mat33d> m;
  std::vector<int32_t> n;
  explicit Aggregates(int count) : p(static_cast<size_t>(count)), w(static_cast<size_t>(count)), m(static_cast<size_t>(count)), n(static_cast<size_t>(count)) {
    for (int i = 0; i < count; ++i) {
      p[size_t(i)] = vec3d{{input(i), -input(i + 1), 0.25 * double(i % 8)}};
      w[size_t(i)] = vec3d{{seed(i), seed(i + 1), -seed(i + 2)}};
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) m[size_t(i)].c[r][c] = (r == c ? 1.0 : 0.1 * input(i + r + 3 * c));
      n[size_t(i)] = i % 6;
    }
  }
};

template <class S, class K>
void aggregates_case(const K& kernel) {
  using V = kjit::vec<3, S>;
  using M = kjit::mat<3, 3, S>;
  auto vecs = [](const std::vector<vec3d>& v) {
    std::vector<V> out(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      for (int c = 0; c < 3; ++c) out[i].c[c] = S(v[i].c[c]);
    return out;
  };
  both_layouts<S>(
      [&](bool strided, std::vector<NdArray>& keep, int n) {
        const Aggregates in(n);
        std::vector<M> ms(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i)
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) ms[size_t(i)].c[r][c] = S(in.m[size_t(i)].c[r][c]);
        auto p = make_array(vecs(in.p), strided, keep), m = make_array(ms, strided, keep), N = make_array(in.n, strided, keep);
        auto out = make_array(std::vector<V>(static_cast<size_t>(n)), strided, keep);
        auto gp = make_array(std::vector<V>(static_cast<size_t>(n)), strided, keep), gm = make_array(std::vector<M>(static_cast<size_t>(n)), strided, keep);
        auto gout = make_array(vecs(in.w), strided, keep);
        launch(kernel, n, p, m, N, out);
        launch_adjoint(kernel, n, {p, m, N, out}, {gp, gm, {}, gout});
        const std::vector<V> g = read_array<V>(gp);
        const std::vector<M> h = read_array<M>(gm);
        std::vector<double> all;
        for (int i = 0; i < n; ++i) {
          for (int c = 0; c < 3; ++c) all.push_back(g[size_t(i)].c[c]);
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) all.push_back(h[size_t(i)].c[r][c]);
        }
        return all;
      },
      [](int n) {
        const Aggregates in(n);
        std::vector<double> r;
        int branched = 0;
        for (int i = 0; i < n; ++i) {
          const size_t k = size_t(i);
          for (int component = 0; component < 12; ++component) {  // d (w . out) / d (p, then m)
            V3<Dual> w0;
            M3<Dual> a0;
            for (int c = 0; c < 3; ++c) w0.c[c] = Dual(double(S(in.p[k].c[c])), component == c ? 1.0 : 0.0);
            for (int row = 0; row < 3; ++row)
              for (int c = 0; c < 3; ++c)
                a0.c[row][c] = Dual(double(S(in.m[k].c[row][c])), component == 3 + 3 * row + c ? 1.0 : 0.0);
            const V3<Dual> o = aggregates_ref(w0, a0, in.n[k], branched);
            double d = 0.0;
            for (int c = 0; c < 3; ++c) d += double(S(in.w[k].c[c])) * o.c[c].d;
            r.push_back(d);
          }
        }
        CHECK(branched > n);  // taken in many lanes' iterations (counted once per gradient component)
        return r;
      });
}

TEST_CASE("adjoint lanes: vector and matrix state through a divergent loop") {
  aggregates_case<double>(lane_adjoints::aggregates);
  aggregates_case<float>(lane_adjoints::aggregates_f32);
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
