// The box and ray loops (bvh_query_aabb / bvh_query_ray + bvh_query_next, mesh_query_aabb +
// mesh_query_aabb_next, and their _for forms) against float64 brute force over every item: each
// item that overlaps visited exactly once, nothing else; empty results, boxes that only touch,
// degenerate (point and flat) items; gradients through the _for forms.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"
#include "mesh_arrays.hpp"
#include "mesh_query_kernels.hpp"
#include "mesh_reference.hpp"
#include "strided_views.hpp"
#include "test_support.hpp"

using namespace kjit;
using namespace kjit::test::geo;

namespace {

vec3f f3(const D3& d) { return vec3f(float(d[0]), float(d[1]), float(d[2])); }
D3 d3(const vec3f& v) { return {v.c[0], v.c[1], v.c[2]}; }

/// The bounds of face f of m (float32, as the kernel computes them).
void face_bounds(const SoupMesh& m, int f, vec3f& lo, vec3f& hi) {
  lo = f3(m.vertex(f, 0));
  hi = lo;
  for (int k = 1; k < 3; ++k)
    for (int a = 0; a < 3; ++a) {
      lo.c[a] = std::min(lo.c[a], float(m.vertex(f, k)[size_t(a)]));
      hi.c[a] = std::max(hi.c[a], float(m.vertex(f, k)[size_t(a)]));
    }
}

bool overlap(const vec3f& alo, const vec3f& ahi, const vec3f& blo, const vec3f& bhi) {
  for (int k = 0; k < 3; ++k)
    if (!(alo.c[k] <= bhi.c[k] && blo.c[k] <= ahi.c[k])) return false;
  return true;
}

/// Where the ray o + t d, t in [0, max_t], is within the box [lo, hi] in float64: (t0, t1), empty
/// when t0 > t1. `slack` is the smallest gap of the slab tests (small: rounding decides).
std::pair<double, double> ray_box(const vec3f& o, const vec3f& d, double max_t, const vec3f& lo, const vec3f& hi,
                                  double& slack) {
  double t0 = 0, t1 = max_t;
  slack = INFINITY;
  for (int k = 0; k < 3; ++k) {
    const double ok = o.c[k], dk = d.c[k], l = lo.c[k], h = hi.c[k];
    if (dk == 0) {
      if (ok < l || ok > h) return {1, 0};
      slack = std::min({slack, ok - l, h - ok});
      continue;
    }
    const double a = (l - ok) / dk, b = (h - ok) / dk;
    t0 = std::max(t0, std::min(a, b));
    t1 = std::min(t1, std::max(a, b));
  }
  slack = std::min(slack, std::fabs(t1 - t0));
  return {t0, t1};
}

/// Random boxes in [-1, 1]^3 up to 0.3 wide; every 7th a point, every 5th flat on one axis.
void random_items(std::mt19937& rng, int n, std::vector<vec3f>& lo, std::vector<vec3f>& hi) {
  std::uniform_real_distribution<float> u(-1, 1), s(0, 0.3f);
  lo.resize(size_t(n));
  hi.resize(size_t(n));
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      const float c = u(rng), w = i % 7 == 0 || (i % 5 == 0 && k == 1) ? 0.0f : s(rng);
      lo[size_t(i)].c[k] = c - w;
      hi[size_t(i)].c[k] = c + w;
    }
}

/// `count` cubes of half-width up to 0.4 centred in [-1.2, 1.2]^3.
void random_cubes(std::mt19937& rng, int count, std::vector<vec3f>& lo, std::vector<vec3f>& hi) {
  std::uniform_real_distribution<float> u(-1.2f, 1.2f), s(0, 0.4f);
  for (int q = 0; q < count; ++q) {
    vec3f c(u(rng), u(rng), u(rng));
    const float w = s(rng);
    lo.push_back(vec3f(c.c[0] - w, c.c[1] - w, c.c[2] - w));
    hi.push_back(vec3f(c.c[0] + w, c.c[1] + w, c.c[2] + w));
  }
}

/// Runs bvh_loops with `kind` over the queries (a, b): hits per query and item.
std::vector<int32_t> run_bvh(const Bvh& bvh, const std::vector<vec3f>& a, const std::vector<vec3f>& b, float max_t,
                             int kind, int items) {
  const int n = int(a.size());
  NdArray hits = zeros<int32_t>({n * items});
  launch(meshq::bvh_loops, n, bvh, from_vector(a), from_vector(b), max_t, kind, items, hits);
  return hits.to_vector<int32_t>();
}

}  // namespace

TEST_CASE("bvh_query_aabb + bvh_query_next and bvh_query_aabb_for: every overlapping item once, against brute force") {
  std::mt19937 rng(8);
  for (int items : {1, 3, 5, 64, 700}) {
    CAPTURE(items);
    std::vector<vec3f> ilo, ihi;
    random_items(rng, items, ilo, ihi);
    Bvh bvh(from_vector(ilo), from_vector(ihi));
    std::vector<vec3f> qlo, qhi;
    random_cubes(rng, 150, qlo, qhi);
    qlo.push_back(vec3f(-5, -5, -5));  // everything
    qhi.push_back(vec3f(5, 5, 5));
    qlo.push_back(vec3f(3, 3, 3));  // nothing
    qhi.push_back(vec3f(4, 4, 4));
    qlo.push_back(ihi[0]);  // touches item 0 at its upper corner only
    qhi.push_back(vec3f(ihi[0].c[0] + 1, ihi[0].c[1] + 1, ihi[0].c[2] + 1));
    const int nq = int(qlo.size());
    for (int kind : {0, 2}) {
      CAPTURE(kind);
      std::vector<int32_t> hits = run_bvh(bvh, qlo, qhi, 0.0f, kind, items);
      int total = 0, empty = 0;
      for (int q = 0; q < nq; ++q) {
        int here = 0;
        for (int i = 0; i < items; ++i) {
          CAPTURE(q);
          CAPTURE(i);
          const int want = overlap(ilo[size_t(i)], ihi[size_t(i)], qlo[size_t(q)], qhi[size_t(q)]) ? 1 : 0;
          CHECK(hits[size_t(q) * size_t(items) + size_t(i)] == want);
          here += want;
        }
        total += here;
        empty += here == 0;
      }
      CHECK(hits[size_t(nq - 3) * size_t(items)] == 1);  // the box around everything has item 0
      CHECK(hits[size_t(nq - 1) * size_t(items)] == 1);  // touching counts
      if (items == 700) {
        MESSAGE(total << " hits over " << nq << " boxes, " << empty << " empty");
        CHECK(empty >= 1);
        CHECK(total > nq);
      }
    }
  }
}

TEST_CASE("bvh_query_ray + bvh_query_next and bvh_query_ray_for: every item whose box the ray meets, against brute force") {
  std::mt19937 rng(9);
  std::vector<vec3f> ilo, ihi;
  const int items = 500;
  random_items(rng, items, ilo, ihi);
  Bvh bvh(from_vector(ilo), from_vector(ihi));
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<vec3f> starts, dirs;
  for (int q = 0; q < 200; ++q) {
    vec3f o(2.5f * u(rng), 2.5f * u(rng), 2.5f * u(rng));
    starts.push_back(o);
    dirs.push_back(q % 9 == 0 ? vec3f(0, 1, 0) : vec3f(u(rng) - 0.2f * o.c[0], u(rng) - 0.2f * o.c[1], u(rng) - 0.2f * o.c[2]));
  }
  starts.push_back(vec3f(4, 4, 4));  // pointing away: nothing
  dirs.push_back(vec3f(1, 1, 1));
  const int nq = int(starts.size());
  for (float max_t : {1.0e30f, 1.5f}) {
    for (int kind : {1, 3}) {
      CAPTURE(max_t);
      CAPTURE(kind);
      std::vector<int32_t> hits = run_bvh(bvh, starts, dirs, max_t, kind, items);
      int checked = 0, met = 0;
      for (int q = 0; q < nq; ++q)
        for (int i = 0; i < items; ++i) {
          double slack = 0;
          auto [t0, t1] = ray_box(starts[size_t(q)], dirs[size_t(q)], max_t, ilo[size_t(i)], ihi[size_t(i)], slack);
          if (slack < 1e-5) continue;  // grazing: rounding decides
          ++checked;
          met += t0 <= t1;
          CAPTURE(q);
          CAPTURE(i);
          CHECK(hits[size_t(q) * size_t(items) + size_t(i)] == (t0 <= t1 ? 1 : 0));
        }
      MESSAGE(checked << " ray-item pairs checked, " << met << " met");
      CHECK(checked > nq * items * 9 / 10);
      CHECK(met > 100);
      for (int i = 0; i < items; ++i) CHECK(hits[size_t(nq - 1) * size_t(items) + size_t(i)] == 0);
    }
  }
}

TEST_CASE("mesh_query_aabb + mesh_query_aabb_next and mesh_query_aabb_for: the faces whose bounds overlap a box") {
  std::mt19937 rng(10);
  for (bool sphere : {false, true}) {
    SoupMesh m = sphere ? sphere_mesh(2) : random_soup(rng, 300);
    Mesh mesh(points_of(m), from_vector(m.indices));
    const int faces = m.faces();
    std::vector<vec3f> qlo, qhi;
    random_cubes(rng, 150, qlo, qhi);
    qlo.push_back(vec3f(7, 7, 7));  // nothing
    qhi.push_back(vec3f(8, 8, 8));
    const int nq = int(qlo.size());
    for (int kind : {0, 1}) {
      NdArray hits = zeros<int32_t>({nq * faces});
      launch(meshq::mesh_boxes, nq, mesh, from_vector(qlo), from_vector(qhi), kind, faces, hits);
      const std::vector<int32_t> h = hits.to_vector<int32_t>();
      int total = 0;
      for (int q = 0; q < nq; ++q)
        for (int f = 0; f < faces; ++f) {
          vec3f lo, hi;
          face_bounds(m, f, lo, hi);
          const int want = overlap(lo, hi, qlo[size_t(q)], qhi[size_t(q)]) ? 1 : 0;
          CAPTURE(q);
          CAPTURE(f);
          CHECK(h[size_t(q) * size_t(faces) + size_t(f)] == want);
          total += want;
        }
      CHECK(total > nq);
    }
  }
}

TEST_CASE("gradients through mesh_query_aabb_for and bvh_query_ray_for: to the query point, the mesh's points and the items' weights") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  std::mt19937 rng(12);
  SoupMesh m = sphere_mesh(2);
  std::vector<vec3f> ilo, ihi;
  const int items = 200;
  random_items(rng, items, ilo, ihi);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<vec3f> w(items), pts;
  for (auto& x : w) x = vec3f(u(rng), u(rng), u(rng));
  for (int i = 0; i < 40; ++i) pts.push_back(vec3f(u(rng), u(rng), u(rng)));
  const int n = int(pts.size());
  NdArray mesh_points = points_of(m);
  mesh_points.requires_grad();
  Mesh mesh(mesh_points, from_vector(m.indices));
  Bvh bvh(from_vector(ilo), from_vector(ihi));
  NdArray p = from_vector(pts), wa = from_vector(w), out = zeros<float>({n}), gp = zeros<vec3f>({n}),
          gw = zeros<vec3f>({items});
  launch(meshq::loop_loss, n, mesh, bvh, p, wa, out);
  launch_adjoint(meshq::loop_loss, n, {mesh, bvh, p, wa, out}, {{}, {}, gp, gw, from_vector(std::vector<float>(size_t(n), 1.0f))});
  const std::vector<float> l = out.to_vector<float>();
  const std::vector<vec3f> g = gp.to_vector<vec3f>(), gws = gw.to_vector<vec3f>();
  const std::vector<vec3f> gm = test::read_array<vec3f>(mesh_points.grad());
  // The reference: the same sets by brute force; the loss is a sum of smooth terms over them,
  // so its gradient is the sum of theirs.
  std::vector<D3> ref_gm(m.points.size() / 3, D3{0, 0, 0}), ref_gw(size_t(items), D3{0, 0, 0});
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    const vec3f x = pts[size_t(i)];
    const D3 pd = d3(x);
    const vec3f lo(x.c[0] - 0.3f, x.c[1] - 0.3f, x.c[2] - 0.3f), hi(x.c[0] + 0.3f, x.c[1] + 0.3f, x.c[2] + 0.3f);
    double loss = 0;
    D3 grad = {0, 0, 0};
    for (int f = 0; f < m.faces(); ++f) {
      vec3f flo, fhi;
      face_bounds(m, f, flo, fhi);
      if (!overlap(flo, fhi, lo, hi)) continue;
      const D3 e = sub(m.vertex(f, 0), pd);
      loss += dot(e, e);
      grad = sub(grad, mul(e, 2));
      D3& gv = ref_gm[size_t(m.indices[3 * size_t(f)])];
      gv = add(gv, mul(e, 2));
    }
    for (int j = 0; j < items; ++j) {
      double slack = 0;
      auto [t0, t1] = ray_box(x, vec3f(0, 0, 1), 1e6, ilo[size_t(j)], ihi[size_t(j)], slack);
      if (t0 > t1) continue;
      loss += dot(d3(w[size_t(j)]), pd);
      grad = add(grad, d3(w[size_t(j)]));
      ref_gw[size_t(j)] = add(ref_gw[size_t(j)], pd);
    }
    CHECK(l[size_t(i)] == doctest::Approx(loss).epsilon(1e-4).scale(1));
    for (int k = 0; k < 3; ++k) CHECK(g[size_t(i)].c[k] == doctest::Approx(grad[size_t(k)]).epsilon(1e-4).scale(1));
  }
  int nonzero = 0;
  for (size_t j = 0; j < ref_gm.size(); ++j)
    for (int k = 0; k < 3; ++k) {
      nonzero += ref_gm[j][size_t(k)] != 0;
      CHECK(gm[j].c[k] == doctest::Approx(ref_gm[j][size_t(k)]).epsilon(1e-4).scale(1));
    }
  for (size_t j = 0; j < size_t(items); ++j)
    for (int k = 0; k < 3; ++k) CHECK(gws[j].c[k] == doctest::Approx(ref_gw[j][size_t(k)]).epsilon(1e-4).scale(1));
  CHECK(nonzero > 20);
}

TEST_CASE("box and ray loops: an empty kjit::Bvh is refused by a launch, naming it") {
  Bvh none;
  NdArray a = from_vector(std::vector<vec3f>{vec3f(0, 0, 0)}), hits = zeros<int32_t>({1});
  CHECK(test::user_error([&] { launch(meshq::bvh_loops, 1, none, a, a, 1.0f, 0, 1, hits); }) ==
        "kjit::Bvh is empty (default-constructed, moved from or released): build one before passing it to a launch");
}
