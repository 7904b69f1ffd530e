// closest_point_edge_edge: (s, t, distance) against an independent float64 oracle (the minimum
// of the squared distance over the unit square: the interior critical point and the four
// sides' clamped projections) on random segments and on degenerate ones (parallel, collinear,
// zero-length, crossing); Warp 1.19's choices where the answer is not unique; gradients
// against float64 central differences, the tangent, and the dot-product identity; NVRTC.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "../builtins/nvrtc_check.hpp"

namespace edge_k {
using namespace kjit::dsl;
KJIT_MODULE(geometry_edge)

KJIT_KERNEL(edge_f, (Array<Vec3f> p1, Array<Vec3f> q1, Array<Vec3f> p2, Array<Vec3f> q2, Float eps, Array<Vec3f> out)) {
  Int i = tid();
  out[i] = closest_point_edge_edge(p1[i], q1[i], p2[i], q2[i], eps);
}
KJIT_KERNEL(edge_d, (Array<Vec3d> p1, Array<Vec3d> q1, Array<Vec3d> p2, Array<Vec3d> q2, Double eps, Array<Vec3d> out)) {
  Int i = tid();
  out[i] = closest_point_edge_edge(p1[i], q1[i], p2[i], q2[i], eps);
}
}  // namespace edge_k

using namespace kjit;

namespace {
using V = std::array<double, 3>;
V sub(V a, V b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
V axpy(V a, double s, V d) { return {a[0] + s * d[0], a[1] + s * d[1], a[2] + s * d[2]}; }
double dot(V a, V b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double dist(V a, V b) { return std::sqrt(dot(sub(a, b), sub(a, b))); }
double clamp01(double x) { return std::min(1.0, std::max(0.0, x)); }

/// Parameter on segment a + u d closest to point x (0 for a point segment).
double project(V a, V d, V x) { double dd = dot(d, d); return dd > 0 ? clamp01(dot(sub(x, a), d) / dd) : 0.0; }

/// The smallest distance between the segments: a convex quadratic over [0,1]^2 has its
/// minimum at the interior critical point or on a side, where it is a 1-D clamp.
double oracle_distance(V p1, V q1, V p2, V q2) {
  V d1 = sub(q1, p1), d2 = sub(q2, p2);
  double best = 1e300;
  auto consider = [&](double s, double t) { best = std::min(best, dist(axpy(p1, s, d1), axpy(p2, t, d2))); };
  for (double s : {0.0, 1.0}) consider(s, project(p2, d2, axpy(p1, s, d1)));
  for (double t : {0.0, 1.0}) consider(project(p1, d1, axpy(p2, t, d2)), t);
  double a = dot(d1, d1), b = dot(d1, d2), e = dot(d2, d2), den = a * e - b * b;
  if (den > 1e-12 * a * e) {
    V r = sub(p1, p2);
    double c = dot(d1, r), f = dot(d2, r);
    double s = (b * f - c * e) / den, t = (a * f - b * c) / den;
    if (s >= 0 && s <= 1 && t >= 0 && t <= 1) consider(s, t);
  }
  return best;
}

struct Edge { V p1, q1, p2, q2; };

template <class T>
std::vector<V> run(const std::vector<Edge>& edges, double eps) {
  using Vec = kjit::vec<3, T>;
  std::vector<Vec> p1, q1, p2, q2;
  auto to = [](V v) { return Vec{{T(v[0]), T(v[1]), T(v[2])}}; };
  for (const Edge& e : edges) { p1.push_back(to(e.p1)); q1.push_back(to(e.q1)); p2.push_back(to(e.p2)); q2.push_back(to(e.q2)); }
  NdArray out = NdArray::zeros(ir_type_of<Vec>(), {int64_t(edges.size())});
  if constexpr (std::is_same_v<T, float>)
    launch(edge_k::edge_f, int64_t(edges.size()), from_vector(p1), from_vector(q1), from_vector(p2), from_vector(q2), float(eps), out);
  else
    launch(edge_k::edge_d, int64_t(edges.size()), from_vector(p1), from_vector(q1), from_vector(p2), from_vector(q2), eps, out);
  std::vector<V> r;
  for (const Vec& v : out.to_vector<Vec>()) r.push_back({double(v.c[0]), double(v.c[1]), double(v.c[2])});
  return r;
}

std::vector<Edge> random_edges(int n, uint64_t seed, double scale) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  auto rv = [&] { return V{u(rng), u(rng), u(rng)}; };
  std::vector<Edge> e;
  for (int i = 0; i < n; ++i) e.push_back({rv(), rv(), rv(), rv()});
  return e;
}

/// Checks (s, t, d): s, t in [0, 1], d the distance of the two points they name, d the
/// oracle's minimum.
template <class T>
void check_against_oracle(const std::vector<Edge>& edges, const std::vector<V>& got, double tol) {
  for (size_t i = 0; i < edges.size(); ++i) {
    const Edge& e = edges[i];
    CAPTURE(i);
    double s = got[i][0], t = got[i][1], d = got[i][2];
    CHECK(s >= 0.0);
    CHECK(s <= 1.0);
    CHECK(t >= 0.0);
    CHECK(t <= 1.0);
    double named = dist(axpy(e.p1, s, sub(e.q1, e.p1)), axpy(e.p2, t, sub(e.q2, e.p2)));
    double scale = 1 + dist(e.p1, e.q1) + dist(e.p2, e.q2);
    CHECK(std::abs(named - d) <= tol * scale);
    CHECK(std::abs(d - oracle_distance(e.p1, e.q1, e.p2, e.q2)) <= tol * scale);
  }
}
}  // namespace

TEST_CASE("closest_point_edge_edge matches the float64 oracle on random segments (float32 and float64)") {
  for (double scale : {1.0, 1e-3, 100.0}) {
    CAPTURE(scale);
    std::vector<Edge> edges = random_edges(2000, 7, scale);
    check_against_oracle<double>(edges, run<double>(edges, 0.0), 1e-12);
    check_against_oracle<float>(edges, run<float>(edges, 0.0), 3e-6);
  }
  // Random short segments far apart and crossing ones (distance 0 in exact arithmetic).
  std::vector<Edge> crossing;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < 500; ++i) {
    V c{u(rng), u(rng), u(rng)}, a{u(rng), u(rng), u(rng)}, b{u(rng), u(rng), u(rng)};
    crossing.push_back({axpy(c, -0.5, a), axpy(c, 0.5, a), axpy(c, -0.3, b), axpy(c, 0.7, b)});
  }
  std::vector<V> got = run<double>(crossing, 0.0);
  for (size_t i = 0; i < crossing.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i][2] < 1e-12);
    CHECK(got[i][0] == doctest::Approx(0.5).epsilon(1e-9));
    CHECK(got[i][1] == doctest::Approx(0.3).epsilon(1e-9));
  }
}

TEST_CASE("closest_point_edge_edge: degenerate segments take Warp 1.19's answers") {
  std::vector<Edge> e = {
      {{0, 0, 0}, {0, 0, 0}, {1, 2, 3}, {1, 2, 3}},    // both points: s = t = 0, their distance
      {{0, 1, 0}, {0, 1, 0}, {-1, 0, 0}, {3, 0, 0}},   // first a point over the second: t = 1/4
      {{5, 1, 0}, {5, 1, 0}, {-1, 0, 0}, {3, 0, 0}},   // ... beyond its end: t clamps to 1
      {{-1, 0, 0}, {3, 0, 0}, {2, 0, 2}, {2, 0, 2}},   // second a point: s = 3/4
      {{0, 0, 0}, {2, 0, 0}, {0, 1, 0}, {2, 1, 0}},    // parallel, overlapping: s = 0, t = 0
      {{0, 0, 0}, {2, 0, 0}, {3, 1, 0}, {5, 1, 0}},    // parallel, apart: t < 0 -> t = 0, s = 1
      {{0, 0, 0}, {2, 0, 0}, {-5, 1, 0}, {-3, 1, 0}},  // parallel, before: t > 1 -> t = 1, s = 0
      {{0, 0, 0}, {2, 0, 0}, {1, 0, 0}, {4, 0, 0}},    // collinear overlapping: t < 0 -> (1/2, 0, 0)
      {{0, 0, 0}, {2, 0, 0}, {3, 0, 0}, {1, 0, 0}},    // collinear, reversed: t > 1 -> (1/2, 1, 0)
      {{0, 0, 0}, {1, 0, 0}, {0.5, -1, 1}, {0.5, 1, 1}},  // skew, crossing above: (1/2, 1/2, 1)
      {{0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {1, 5, 0}},    // touching at an end: (1, 0, 0)
  };
  std::vector<V> want = {
      {0, 0, std::sqrt(14.0)}, {0, 0.25, 1}, {0, 1, std::sqrt(5.0)}, {0.75, 0, 2}, {0, 0, 1},
      {1, 0, std::sqrt(2.0)}, {0, 1, std::sqrt(10.0)}, {0.5, 0, 0}, {0.5, 1, 0}, {0.5, 0.5, 1}, {1, 0, 0},
  };
  for (int precision = 0; precision < 2; ++precision) {
    std::vector<V> got = precision ? run<float>(e, 1e-9) : run<double>(e, 1e-9);
    for (size_t i = 0; i < e.size(); ++i) {
      CAPTURE(i);
      CAPTURE(precision);
      for (int k = 0; k < 3; ++k) CHECK(got[i][size_t(k)] == doctest::Approx(want[i][size_t(k)]).epsilon(1e-6));
    }
  }
  // epsilon decides what is a point: a segment of squared length 1/64 is one under 0.02.
  std::vector<Edge> short_edge = {{{0, 1, 0}, {0.125, 1, 0}, {-1, 0, 0}, {3, 0, 0}}};
  CHECK(run<double>(short_edge, 0.02)[0][0] == 0.0);
  CHECK(run<double>(short_edge, 0.02)[0][1] == doctest::Approx(0.25));
  CHECK(run<double>(short_edge, 0.005)[0][1] == doctest::Approx(0.25));  // parallel: s = 0 too
  std::vector<Edge> short_skew = {{{0, 1, 0}, {0, 1.1, 0.05}, {-1, 0, 0}, {3, 0, 0}}};
  CHECK(run<double>(short_skew, 0.02)[0][0] == 0.0);     // a point: s = 0
  CHECK(run<double>(short_skew, 0.001)[0][0] == 0.0);    // a segment: its lower end is closest
  std::vector<Edge> rising = {{{0, 1.1, 0}, {0, 1, 0.05}, {-1, 0, 0}, {3, 0, 0}}};
  CHECK(run<double>(rising, 0.02)[0][0] == 0.0);
  CHECK(run<double>(rising, 0.001)[0][0] == 1.0);        // as a segment its far end is closest
}

TEST_CASE("closest_point_edge_edge gradients: float64 central differences, the tangent, and the dot-product identity") {
  // Random segments, away from switches (clamps, parallel edges): generic points are. epsilon
  // 1e-6 keeps the point segment a point under the differences' steps.
  std::vector<Edge> edges = random_edges(40, 11, 1.0);
  std::vector<vec3d> p1, q1, p2, q2;
  auto to = [](V v) { return vec3d{{v[0], v[1], v[2]}}; };
  for (const Edge& e : edges) { p1.push_back(to(e.p1)); q1.push_back(to(e.q1)); p2.push_back(to(e.p2)); q2.push_back(to(e.q2)); }
  // Also: one end clamped (t = 0 side), one segment a point, and crossing at a distance.
  p1.push_back({{0, 0, 0}}); q1.push_back({{1, 0.2, 0}}); p2.push_back({{0.4, 0.5, 1}}); q2.push_back({{0.5, 2, 1.3}});
  p1.push_back({{0.3, 0.2, 0.1}}); q1.push_back({{0.3, 0.2, 0.1}}); p2.push_back({{-1, 0, 0}}); q2.push_back({{1, 0.3, 0.2}});
  p1.push_back({{0, 0, 0}}); q1.push_back({{1, 0, 0}}); p2.push_back({{0.4, -1, 0.7}}); q2.push_back({{0.6, 1, 0.9}});
  const int n = int(p1.size());
  NdArray out = NdArray::zeros(ir_type_of<vec3d>(), {n});
  GradCheckOptions o;
  o.inputs = {"p1", "q1", "p2", "q2"};
  GradCheckReport r = check_gradients(edge_k::edge_d, n, {from_vector(p1), from_vector(q1), from_vector(p2), from_vector(q2), 1e-6, out}, o);
  INFO(r.str());
  CHECK(r.passed());
  int adjoint = 0, tangent = 0, dotp = 0;
  for (const GradCheckParam& p : r.params) adjoint += p.check == "adjoint" && p.checked > 0;
  for (const GradCheckParam& p : r.tangents) {
    tangent += p.check == "tangent" && p.checked > 0;
    dotp += p.check == "dot" && p.checked > 0;
  }
  CHECK(adjoint == 4);
  CHECK(tangent >= 1);
  CHECK(dotp == 4);
}

TEST_CASE("closest_point_edge_edge: gradients stay bounded for nearly parallel segments; epsilon has none") {
  // sin^2 of the angle 1e-8: the unclamped s is held for derivatives, so |grad| stays small.
  std::vector<vec3d> p1{{{0, 0, 0}}}, q1{{{1, 0, 0}}}, p2{{{0.2, 1, 0}}}, q2{{{1.2, 1, 1e-4}}};
  NdArray out = NdArray::zeros(ir_type_of<vec3d>(), {1});
  NdArray a = from_vector(p1), b = from_vector(q1), c = from_vector(p2), d = from_vector(q2);
  launch(edge_k::edge_d, 1, a, b, c, d, 1e-12, out);
  NdArray ga = NdArray::zeros(ir_type_of<vec3d>(), {1}), gb = NdArray::zeros(ir_type_of<vec3d>(), {1});
  NdArray gc = NdArray::zeros(ir_type_of<vec3d>(), {1}), gd = NdArray::zeros(ir_type_of<vec3d>(), {1});
  double geps = 0;
  std::vector<vec3d> seed{{{1, 1, 1}}};
  launch_adjoint(edge_k::edge_d, 1, {a, b, c, d, 1e-12, out}, {ga, gb, gc, gd, &geps, from_vector(seed)});
  for (const NdArray& g : {ga, gb, gc, gd}) {
    vec3d v = g.to_vector<vec3d>()[0];
    for (int k = 0; k < 3; ++k) {
      CHECK(std::isfinite(v.c[k]));
      CHECK(std::abs(v.c[k]) < 10.0);
    }
  }
  CHECK(geps == 0.0);
}

TEST_CASE("closest_point_edge_edge compiles with NVRTC for sm_80 and sm_90, forward, adjoint and tangent") {
  std::string text = test::module_text("geometry_edge_nvrtc", {&edge_k::edge_f.def(), &edge_k::edge_d.def()}, true);
  std::string tangent = test::module_text("geometry_edge_nvrtc_tangent", {&tangent_of(edge_k::edge_f)}, false);
  for (const char* arch : {"sm_80", "sm_90"}) {
    CAPTURE(arch);
    CHECK(test::nvrtc_compile(text, arch) == "");
    CHECK(test::nvrtc_compile(tangent, arch) == "");
  }
}
