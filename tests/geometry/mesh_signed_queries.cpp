// The signed and furthest point queries and the ray counts against float64 brute force over
// every triangle: signs on closed meshes against the winding number (inside: 1) or the parity
// of crossings, points pushed off vertices and edges, misses; the furthest vertex; hit counts and
// any-hit with grazing rays left out; gradients of the signed queries' u, v (reverse against
// central differences; forward against reverse, in the query and the mesh's points).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
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

/// The generalized winding number of the mesh around p (solid angles, Van Oosterom and
/// Strackee): 1 inside a closed mesh whose faces turn counter-clockwise seen from outside.
double winding_number(const SoupMesh& m, const D3& p) {
  double w = 0;
  for (int f = 0; f < m.faces(); ++f) {
    const D3 a = sub(m.vertex(f, 0), p), b = sub(m.vertex(f, 1), p), c = sub(m.vertex(f, 2), p);
    const double la = std::sqrt(dot(a, a)), lb = std::sqrt(dot(b, b)), lc = std::sqrt(dot(c, c));
    w += 2 * std::atan2(dot(a, cross(b, c)), la * lb * lc + dot(a, b) * lc + dot(b, c) * la + dot(c, a) * lb);
  }
  return w / (4 * M_PI);
}

/// How many faces the ray o + t d (t >= 0) meets, or -1 when it passes within `margin` of an
/// edge of a face it meets the plane of (rounding decides those).
int brute_count(const SoupMesh& m, const D3& o, const D3& d, double max_t, double margin) {
  int n = 0;
  for (int f = 0; f < m.faces(); ++f) {
    const D3 nf = cross(sub(m.vertex(f, 1), m.vertex(f, 0)), sub(m.vertex(f, 2), m.vertex(f, 0)));
    if (std::sqrt(dot(nf, nf)) < 1e-12) continue;  // no area: no hit either way
    const double t = ray_face(m, f, o, d);
    if (edge_margin(m, f, o, d) < margin * std::sqrt(dot(d, d))) {
      const double tp = dot(sub(m.vertex(f, 0), o), nf) / dot(d, nf);  // where the plane is met
      if (tp >= -1e-9 && tp < max_t * (1 + 1e-6)) return -1;
    }
    if (t >= 0 && t < max_t) {
      if (std::fabs(t - max_t) < 1e-6 * max_t) return -1;  // at the end of the ray
      ++n;
    }
  }
  return n;
}

/// A closed mesh that is not convex: two spheres of radius 0.5 side by side, apart.
SoupMesh two_spheres() {
  SoupMesh a = sphere_mesh(2), m;
  const int np = int(a.points.size() / 3);
  for (int s = 0; s < 2; ++s) {
    for (int i = 0; i < np; ++i)
      m.points.insert(m.points.end(), {0.5f * a.points[3 * size_t(i)] + (s ? 0.6f : -0.6f), 0.5f * a.points[3 * size_t(i) + 1],
                                       0.5f * a.points[3 * size_t(i) + 2]});
    for (int32_t k : a.indices) m.indices.push_back(k + s * np);
  }
  return m;
}

/// Query points: random ones off the surface, vertices and edge midpoints pushed 2 % in and out.
std::vector<vec3f> sign_points(const SoupMesh& m, std::mt19937& rng, const D3& centre) {
  std::uniform_real_distribution<float> u(-1.6f, 1.6f);
  std::vector<vec3f> q;
  while (q.size() < 300) {
    vec3f p(u(rng), u(rng), u(rng));
    if (brute_closest(m, d3(p)).first > 1e-3) q.push_back(p);
  }
  for (int f = 0; f < m.faces(); f += 5) {
    for (const D3& x : {m.vertex(f, 0), mul(add(m.vertex(f, 1), m.vertex(f, 2)), 0.5)}) {
      const D3 r = sub(x, centre);
      for (double s : {0.98, 1.02}) q.push_back(f3(add(centre, mul(r, s))));
    }
  }
  return q;
}

struct PointResults {
  std::vector<int32_t> face;
  std::vector<vec3f> uvs;
};

PointResults run_points(const Mesh& mesh, const std::vector<vec3f>& pts, float dist, int kind) {
  const int n = int(pts.size());
  NdArray face = zeros<int32_t>({n}), uvs = zeros<vec3f>({n});
  launch(meshq::point_queries, n, mesh, from_vector(pts), dist, kind, face, uvs);
  return {face.to_vector<int32_t>(), uvs.to_vector<vec3f>()};
}

/// The signed query of `kind` on a closed mesh: the closest point as brute force finds it, and
/// the sign against the winding number (-1 inside, for every kind of sign). Points
/// whose rays pass within 1e-4 of an edge are left out for the ray-based signs.
void check_signs(const SoupMesh& m, const std::vector<vec3f>& pts, int kind) {
  CAPTURE(kind);
  Mesh mesh(points_of(m), from_vector(m.indices), NdArray(), true);
  PointResults r = run_points(mesh, pts, 1.0e6f, kind);
  int checked = 0, inside = 0;
  const D3 parity_dir = {0.5773126, 0.5774912, 0.5773778};
  for (size_t i = 0; i < pts.size(); ++i) {
    CAPTURE(i);
    const D3 p = d3(pts[i]);
    REQUIRE(r.face[i] >= 0);
    auto [best, bf] = brute_closest(m, p);
    (void)bf;
    CHECK(std::fabs(dist(eval(m, r.face[i], r.uvs[i].c[0], r.uvs[i].c[1]), p) - best) <= 2e-5 * (1 + best));
    const bool in = winding_number(m, p) > 0.5;
    bool ambiguous = false;
    if (kind == 0)
      for (int a = 0; a < 3; ++a) ambiguous = ambiguous || brute_count(m, p, {double(a == 0), double(a == 1), double(a == 2)}, 1e30, 1e-4) < 0;
    if (kind == 2) ambiguous = brute_count(m, p, parity_dir, 1e30, 1e-4) < 0;
    if (ambiguous) continue;
    ++checked;
    inside += in;
    CHECK(r.uvs[i].c[2] == (in ? -1.0f : 1.0f));
  }
  MESSAGE("kind " << kind << ": " << checked << " of " << pts.size() << " signs checked, " << inside << " inside");
  // The subdivided octahedron has its edges in the coordinate planes, where the axis rays from
  // points pushed off those vertices run: about a sixth of them are left out for the ray signs.
  CHECK(checked >= int(pts.size()) * 4 / 5);
  CHECK(inside >= 20);
}

}  // namespace

TEST_CASE("mesh_query_point, _sign_normal, _sign_parity, _sign_winding_number: the sign inside and outside closed meshes against the winding number") {
  std::mt19937 rng(5);
  SoupMesh sphere = sphere_mesh(2);
  SoupMesh twins = two_spheres();
  for (int kind : {0, 1, 2, 4}) {
    check_signs(sphere, sign_points(sphere, rng, {0, 0, 0}), kind);
    // The pushed vertices of the second sphere move along its own radius: take its centre.
    std::vector<vec3f> pts = sign_points(twins, rng, {0.6, 0, 0});
    check_signs(twins, pts, kind);
  }
}

TEST_CASE("mesh_query_point_sign_normal where the faces within reach outnumber what one walk keeps: apexes of 16 faces") {
  // A closed bipyramid over a 16-gon: each apex is shared by 16 faces, more than the 8 faces
  // the closest-face walk keeps, so points near an apex take the second walk; points near the
  // ring's vertices (4 faces) and edges take the faces the first walk kept. Signs against the
  // winding number.
  SoupMesh m;
  const int sides = 16;
  for (int i = 0; i < sides; ++i) {
    const double a = 2 * 3.14159265358979 * i / sides;
    m.points.insert(m.points.end(), {float(std::cos(a)), float(std::sin(a)), 0.0f});
  }
  m.points.insert(m.points.end(), {0.0f, 0.0f, 1.0f, 0.0f, 0.0f, -1.0f});
  for (int i = 0; i < sides; ++i) {
    const int j = (i + 1) % sides;
    m.indices.insert(m.indices.end(), {i, j, sides, j, i, sides + 1});
  }
  Mesh mesh(points_of(m), from_vector(m.indices));
  std::mt19937 rng(11);
  std::normal_distribution<double> g;
  std::vector<vec3f> pts;
  for (int i = 0; i < 240; ++i) {
    const int v = i % 3 == 0 ? sides : i % 3 == 1 ? sides + 1 : i % sides;  // apexes, ring vertices
    const D3 c = m.point(v);
    D3 d{g(rng), g(rng), g(rng)};
    const double len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    const double r = i % 2 ? 1e-3 : 2e-2;
    pts.push_back(f3({c[0] + r * d[0] / len, c[1] + r * d[1] / len, c[2] + r * d[2] / len}));
  }
  PointResults r = run_points(mesh, pts, 10.0f, 1);
  int checked = 0, inside = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    CAPTURE(i);
    if (brute_closest(m, d3(pts[i])).first < 1e-5) continue;  // on the surface: either sign
    const bool in = winding_number(m, d3(pts[i])) > 0.5;
    ++checked;
    inside += in;
    CHECK(r.uvs[i].c[2] == (in ? -1.0f : 1.0f));
  }
  CHECK(checked >= 230);
  CHECK(inside >= 20);
}

TEST_CASE("signed queries on an open soup: the closest point as the unsigned query's, a sign of +-1, and misses") {
  std::mt19937 rng(77);
  SoupMesh m = random_soup(rng, 120);
  Mesh mesh(points_of(m), from_vector(m.indices), NdArray(), true);
  std::uniform_real_distribution<float> u(-1.5f, 1.5f);
  std::vector<vec3f> pts;
  for (int i = 0; i < 200; ++i) pts.push_back(vec3f(u(rng), u(rng), u(rng)));
  for (int f = 0; f < m.faces(); f += 4) pts.push_back(f3(m.vertex(f, 1)));  // on vertices: distance 0
  for (int kind : {0, 1, 2, 4}) {
    CAPTURE(kind);
    PointResults r = run_points(mesh, pts, 1.0e6f, kind);
    for (size_t i = 0; i < pts.size(); ++i) {
      CAPTURE(i);
      auto [best, bf] = brute_closest(m, d3(pts[i]));
      (void)bf;
      REQUIRE(r.face[i] >= 0);
      CHECK(std::fabs(dist(eval(m, r.face[i], r.uvs[i].c[0], r.uvs[i].c[1]), d3(pts[i])) - best) <= 2e-5 * (1 + best));
      CHECK(std::fabs(r.uvs[i].c[2]) == 1.0f);
    }
    // Nothing within 1e-3 of most random points: a miss is face -1, u = v = sign = 0.
    PointResults miss = run_points(mesh, pts, 1e-3f, kind);
    int misses = 0;
    for (size_t i = 0; i < pts.size(); ++i) {
      if (brute_closest(m, d3(pts[i])).first < 2e-3) continue;
      ++misses;
      CHECK(miss.face[i] == -1);
      CHECK(miss.uvs[i].c[0] == 0.0f);
      CHECK(miss.uvs[i].c[1] == 0.0f);
      CHECK(miss.uvs[i].c[2] == 0.0f);
    }
    CHECK(misses > 150);
  }
}

TEST_CASE("mesh_query_furthest_point_no_sign: the furthest vertex against brute force; min_dist past it misses") {
  std::mt19937 rng(3);
  for (bool sphere : {false, true}) {
    SoupMesh m = sphere ? sphere_mesh(2) : random_soup(rng, 150);
    Mesh mesh(points_of(m), from_vector(m.indices));
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    std::vector<vec3f> pts;
    for (int i = 0; i < 300; ++i) pts.push_back(vec3f(u(rng), u(rng), u(rng)));
    pts.push_back(f3(m.vertex(0, 0)));
    std::vector<double> far(pts.size(), 0);
    for (size_t i = 0; i < pts.size(); ++i)
      for (int f = 0; f < m.faces(); ++f)
        for (int k = 0; k < 3; ++k) far[i] = std::max(far[i], dist(m.vertex(f, k), d3(pts[i])));
    PointResults r = run_points(mesh, pts, 0.0f, 3);
    for (size_t i = 0; i < pts.size(); ++i) {
      CAPTURE(i);
      REQUIRE(r.face[i] >= 0);
      const float uu = r.uvs[i].c[0], vv = r.uvs[i].c[1];
      CHECK(((uu == 1 && vv == 0) || (uu == 0 && vv == 1) || (uu == 0 && vv == 0)));
      CHECK(r.uvs[i].c[2] == 0.0f);
      CHECK(std::fabs(dist(eval(m, r.face[i], uu, vv), d3(pts[i])) - far[i]) <= 1e-5 * (1 + far[i]));
    }
    r = run_points(mesh, pts, 10.0f, 3);  // nothing is 10 away
    for (size_t i = 0; i < pts.size(); ++i) {
      CHECK(r.face[i] == -1);
      CHECK(r.uvs[i].c[0] == 0.0f);
    }
  }
}

TEST_CASE("mesh_query_ray_count_intersections and mesh_query_ray_anyhit against brute force, grazing rays left out") {
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (bool sphere : {false, true}) {
    CAPTURE(sphere);
    SoupMesh m = sphere ? two_spheres() : random_soup(rng, 200);
    Mesh mesh(points_of(m), from_vector(m.indices));
    std::vector<vec3f> starts, dirs;
    for (int i = 0; i < 500; ++i) {
      const float s = i % 3 == 0 ? 0.3f : 2.5f;  // from inside the spheres too
      vec3f o(s * u(rng), s * u(rng), s * u(rng)), target(0.9f * u(rng), 0.9f * u(rng), 0.9f * u(rng));
      starts.push_back(o);
      dirs.push_back(i % 7 == 0 ? vec3f(0, 0, 1) : vec3f(target.c[0] - o.c[0], target.c[1] - o.c[1], target.c[2] - o.c[2]));
    }
    starts.push_back(vec3f(5, 5, 5));  // away from everything: none
    dirs.push_back(vec3f(1, 0, 0));
    const int n = int(starts.size());
    const float max_t = 0.7f;
    NdArray count = zeros<int32_t>({n}), any = zeros<int32_t>({n});
    launch(meshq::ray_counts, n, mesh, from_vector(starts), from_vector(dirs), max_t, count, any);
    const std::vector<int32_t> c = count.to_vector<int32_t>(), a = any.to_vector<int32_t>();
    int checked = 0, several = 0, some = 0;
    for (int i = 0; i < n; ++i) {
      CAPTURE(i);
      const D3 o = d3(starts[size_t(i)]), d = d3(dirs[size_t(i)]);
      const int all = brute_count(m, o, d, 1e30, 1e-5), near = brute_count(m, o, d, max_t, 1e-5);
      if (all < 0 || near < 0) continue;
      ++checked;
      several += all >= 2;
      some += near > 0;
      CHECK(c[size_t(i)] == all);
      CHECK(a[size_t(i)] == (near > 0 ? 1 : 0));
    }
    MESSAGE(checked << " of " << n << " rays checked; " << several << " cross 2 or more faces, " << some << " hit within max_t");
    CHECK(checked >= n * 9 / 10);
    CHECK(several > 50);
    CHECK(some > 20);
    CHECK(c.back() == 0);
    CHECK(a.back() == 0);
  }
}

TEST_CASE("signed queries: gradients of u, v in the query points against float64 central differences") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  SoupMesh m = sphere_mesh(1);
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-1.4f, 1.4f);
  const double h = 1e-4;
  // Points whose closest face stays the same under the step, inside it away from its edges.
  std::vector<vec3f> qs;
  while (qs.size() < 24) {
    vec3f p(u(rng), u(rng), u(rng));
    if (brute_closest(m, d3(p)).first >= 1e-2 && stable_closest(m, d3(p), h)) qs.push_back(p);
  }
  auto loss_ref = [&](const D3& p, double sign) {
    const int f = brute_closest(m, p).second;
    auto uv = closest_uv(m.vertex(f, 0), m.vertex(f, 1), m.vertex(f, 2), p);
    const D3 e = sub(eval(m, f, uv[0], uv[1]), p);
    return sign * (0.3 * uv[0] - 0.7 * uv[1]) + dot(e, e);
  };
  const int n = int(qs.size());
  Mesh mesh(points_of(m), from_vector(m.indices), NdArray(), true);
  for (int kind : {0, 1, 2, 3}) {
    CAPTURE(kind);
    NdArray pts = from_vector(qs), out = zeros<float>({n}), g = zeros<vec3f>({n});
    launch(meshq::signed_loss, n, mesh, pts, kind, out);
    std::vector<float> seeds(size_t(n), 1.0f);
    launch_adjoint(meshq::signed_loss, n, {mesh, pts, kind, out}, {{}, g, {}, from_vector(seeds)});
    const std::vector<float> l = out.to_vector<float>();
    const std::vector<vec3f> gp = g.to_vector<vec3f>();
    for (int i = 0; i < n; ++i) {
      CAPTURE(i);
      const D3 p = d3(qs[size_t(i)]);
      const double sign = winding_number(m, p) > 0.5 ? -1 : 1;
      CHECK(l[size_t(i)] == doctest::Approx(loss_ref(p, sign)).epsilon(1e-4));
      for (int k = 0; k < 3; ++k) {
        D3 a = p, b = p;
        a[size_t(k)] += h;
        b[size_t(k)] -= h;
        const double ref = (loss_ref(a, sign) - loss_ref(b, sign)) / (2 * h);
        CAPTURE(k);
        CHECK(gp[size_t(i)].c[k] == doctest::Approx(ref).epsilon(2e-3).scale(1));
      }
    }
  }
}

TEST_CASE("signed queries in forward mode: tangents in the query and the mesh's points match the adjoints (dot-product identity)") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  SoupMesh m = sphere_mesh(1);
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto random_vecs = [&](size_t n, float s) {
    std::vector<vec3f> r(n);
    for (vec3f& x : r) x = vec3f(s * u(rng), s * u(rng), s * u(rng));
    return r;
  };
  const int n = 29;
  const std::vector<vec3f> pts = random_vecs(size_t(n), 1.4f), dpts = random_vecs(size_t(n), 1.0f),
                           dpoints = random_vecs(m.points.size() / 3, 1.0f);
  std::vector<float> w(static_cast<size_t>(n));
  for (float& x : w) x = u(rng);
  auto dot_all = [](const std::vector<vec3f>& a, const std::vector<vec3f>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i)
      for (int k = 0; k < 3; ++k) s += double(a[i].c[k]) * b[i].c[k];
    return s;
  };
  for (int kind : {0, 1, 2, 3}) {
    CAPTURE(kind);
    NdArray mesh_points = points_of(m);
    mesh_points.requires_grad();
    Mesh mesh(mesh_points, from_vector(m.indices), NdArray(), true);
    NdArray dpoints_array = from_vector(dpoints);
    kjit::dsl::Mesh dmesh;
    dmesh.points = dpoints_array;
    NdArray p = from_vector(pts), out = zeros<float>({n}), dout = zeros<float>({n}), gp = zeros<vec3f>({n});
    launch_tangent(meshq::signed_loss, n, {mesh, p, kind, out}, {dmesh, from_vector(dpts), {}, dout});
    launch_adjoint(meshq::signed_loss, n, {mesh, p, kind, out}, {{}, gp, {}, from_vector(w)});
    const std::vector<float> jt = dout.to_vector<float>();
    double jv = 0;
    for (int i = 0; i < n; ++i) jv += double(jt[size_t(i)]) * w[size_t(i)];
    const double vjw = dot_all(dpts, gp.to_vector<vec3f>()) + dot_all(dpoints, test::read_array<vec3f>(mesh_points.grad()));
    CHECK(std::fabs(jv) > 1e-2);
    CHECK(jv == doctest::Approx(vjw).epsilon(1e-4));
  }
}

TEST_CASE("mesh_query_winding_number against the float64 winding number over every face; refit updates it") {
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> u(-1.6f, 1.6f);
  for (int which = 0; which < 3; ++which) {
    CAPTURE(which);
    SoupMesh m = which == 0 ? sphere_mesh(3) : which == 1 ? two_spheres() : random_soup(rng, 300);
    Mesh mesh(points_of(m), from_vector(m.indices), NdArray(), true);
    std::vector<vec3f> pts;
    while (pts.size() < 300) {
      vec3f p(u(rng), u(rng), u(rng));
      if (brute_closest(m, d3(p)).first > 0.05) pts.push_back(p);
    }
    const int n = int(pts.size());
    NdArray out = zeros<float>({n});
    // A huge accuracy opens every node: the exact sum of solid angles. The default 2 approximates
    // far nodes by dipoles: within a few hundredths here, far from the 0.5 threshold.
    for (float accuracy : {1.0e9f, 2.0f}) {
      launch(meshq::winding, n, mesh, from_vector(pts), accuracy, out);
      const std::vector<float> w = out.to_vector<float>();
      double worst = 0;
      for (int i = 0; i < n; ++i) worst = std::max(worst, std::fabs(w[size_t(i)] - winding_number(m, d3(pts[size_t(i)]))));
      MESSAGE("accuracy " << accuracy << ": largest error " << worst);
      CHECK(worst < (accuracy > 1e6f ? 1e-4 : 0.05));
    }
  }
  // Refit: the sphere moves 3 along x; the origin is outside now, (3, 0, 0) inside.
  SoupMesh s = sphere_mesh(2);
  NdArray points = points_of(s);
  Mesh mesh(points, from_vector(s.indices), NdArray(), true);
  SoupMesh moved = s;
  for (size_t i = 0; i < moved.points.size(); i += 3) moved.points[i] += 3.0f;
  points.copy_from(points_of(moved));
  mesh.refit();
  NdArray out = zeros<float>({2});
  launch(meshq::winding, 2, mesh, from_vector(std::vector<vec3f>{vec3f(0, 0, 0), vec3f(3, 0, 0)}), 2.0f, out);
  const std::vector<float> w = out.to_vector<float>();
  CHECK(std::fabs(w[0]) < 0.02);
  CHECK(std::fabs(w[1] - 1) < 0.02);
}

TEST_CASE("mesh_query_point_sign_winding_number on a mesh built without winding-number support: the launch fails saying so") {
  SoupMesh m = sphere_mesh(1);
  Mesh plain(points_of(m), from_vector(m.indices));
  NdArray pts = from_vector(std::vector<vec3f>{vec3f(0.1f, 0, 0)}), face = zeros<int32_t>({1}), uvs = zeros<vec3f>({1});
  CHECK(test::user_error([&] { launch(meshq::point_queries, 1, plain, pts, 10.0f, 4, face, uvs); }) ==
        "launch of kernel 'meshq::point_queries' in module 'geometry_mesh_queries': thread 0 called "
        "mesh_query_point_sign_winding_number on a kjit::Mesh built without winding-number support: build it with "
        "kjit::Mesh(points, indices, velocities, true)");
  // The other signs need no such data.
  launch(meshq::point_queries, 1, plain, pts, 10.0f, 1, face, uvs);
  CHECK(uvs.to_vector<vec3f>()[0].c[2] == -1.0f);
}
