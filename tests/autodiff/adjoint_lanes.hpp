// The kernels, the forward-mode dual-number references and the layout helpers of the adjoint
// lane function tests (adjoint_lanes.cpp, adjoint_lane_effects.cpp).
#pragma once

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

/// Variables assigned values from outside the branch that assigns them (a copy, a sum and a
/// difference: their reverse rules are plain adds and subtracts into adjoints the other lanes
/// also carry), in a small If (under a bit) and in one with a loop (under a mask); the lanes
/// that skip a branch must add nothing through it.
KJIT_KERNEL(copies, (Array<Double> x, Array<Double> out)) {
  Int i = tid();
  Double v = x[i];
  Double u = v * v;
  Var<Double> y = v, z = v * 0.5;
  If(v > 1.5, [&] { y = u; z = z + u; });
  If(v < -1.5, [&] {
    y = u;
    z = z - v;
    For(0, i % 3 + 1, [&](Int) { y = y * 1.1; });
  });
  out[i] = y * 3.0 + z * z;
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

namespace lane_adjoint_tests {
using namespace kjit;
using kjit::test::make_array;
using kjit::test::read_array;

// --- the reference: forward-mode dual numbers ---------------------------------------------

struct Dual {
  double v = 0, d = 0;
  Dual(double x = 0, double dx = 0) : v(x), d(dx) {}
};
inline Dual operator+(Dual a, Dual b) { return {a.v + b.v, a.d + b.d}; }
inline Dual operator-(Dual a, Dual b) { return {a.v - b.v, a.d - b.d}; }
inline Dual operator-(Dual a) { return {-a.v, -a.d}; }
inline Dual operator*(Dual a, Dual b) { return {a.v * b.v, a.d * b.v + a.v * b.d}; }
inline Dual operator/(Dual a, Dual b) { return {a.v / b.v, (a.d * b.v - a.v * b.d) / (b.v * b.v)}; }
inline Dual sin(Dual a) { return {std::sin(a.v), std::cos(a.v) * a.d}; }
inline Dual cos(Dual a) { return {std::cos(a.v), -std::sin(a.v) * a.d}; }
inline Dual exp(Dual a) { return {std::exp(a.v), std::exp(a.v) * a.d}; }
inline Dual sqrt(Dual a) { return {std::sqrt(a.v), a.d / (2 * std::sqrt(a.v))}; }
inline double val(Dual x) { return x.v; }
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

template <class T> T copies_ref(T v, int i) {
  T u = v * v, y = v, z = v * 0.5;
  if (val(v) > 1.5) {
    y = u;
    z = z + u;
  }
  if (val(v) < -1.5) {
    y = u;
    z = z - v;
    for (int k = 0; k < i % 3 + 1; ++k) y = y * 1.1;
  }
  return y * 3.0 + z * z;
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
inline double input(int i) { return std::sin(double(i) * 1.7) * 3.0; }
/// Output seeds (the cotangents of the outputs).
inline double seed(int i) { return 0.5 + 0.25 * std::cos(double(i) * 0.9); }

inline void near(double got, double want) { REQUIRE(std::fabs(got - want) <= 1e-9 * (1.0 + std::fabs(want))); }

/// Runs `check(strided, keep, n)` for dense arrays (lane blocks and a tail) and strided ones
/// (one thread at a time), at 37 threads (two blocks and a tail of 5) and 1003 (62 and 11),
/// in modules without bounds checks (which would have no lane functions).
inline void each_layout(const std::function<void(bool, std::vector<NdArray>&, int)>& check, std::vector<int> sizes = {37, 1003}) {
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
inline std::string module_text(const char* module) {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  const compiler::ModuleSource s = module_compile_input(module).source;
  return s.text.empty() ? s.generate() : s.text;
}

inline std::vector<double> inputs(int n) {
  std::vector<double> xs(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) xs[size_t(i)] = input(i);
  return xs;
}
inline std::vector<double> seeds(int n) {
  std::vector<double> w(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) w[size_t(i)] = seed(i);
  return w;
}

}  // namespace lane_adjoint_tests
