// Mesh queries against brute force over every triangle in float64: closest points (points on
// vertices, edges and faces, degenerate and tiny triangles, max_dist misses), ray casts (rays
// through vertices and edges, grazing, misses), evaluations; on a random soup and a sphere.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"
#include "mesh_arrays.hpp"
#include "mesh_kernels.hpp"
#include "mesh_reference.hpp"
#include "test_support.hpp"

using namespace kjit;
using namespace kjit::test::geo;

namespace {

vec3f f3(const D3& d) { return vec3f(float(d[0]), float(d[1]), float(d[2])); }
D3 d3(const vec3f& v) { return {v.c[0], v.c[1], v.c[2]}; }

/// Query points: random ones, every vertex, edge midpoints and points a third along edges,
/// face centroids, and points just off faces along their normals.
std::vector<vec3f> query_points(const SoupMesh& m, std::mt19937& rng, int random) {
  std::uniform_real_distribution<float> u(-1.5f, 1.5f);
  std::vector<vec3f> q;
  for (int i = 0; i < random; ++i) q.push_back(vec3f(u(rng), u(rng), u(rng)));
  for (int f = 0; f < m.faces(); f += 3) {
    const D3 a = m.vertex(f, 0), b = m.vertex(f, 1), c = m.vertex(f, 2);
    q.push_back(f3(a));
    q.push_back(f3(mul(add(a, b), 0.5)));
    q.push_back(f3(add(b, mul(sub(c, b), 1.0 / 3))));
    q.push_back(f3(mul(add(add(a, b), c), 1.0 / 3)));
    const D3 n = cross(sub(b, a), sub(c, a));
    const double l = std::sqrt(dot(n, n));
    if (l > 1e-6) q.push_back(f3(add(mul(add(add(a, b), c), 1.0 / 3), mul(n, 0.05 / l))));
  }
  return q;
}

void check_closest(const SoupMesh& m, const std::vector<vec3f>& pts, float max_dist) {
  Mesh mesh(points_of(m), from_vector(m.indices));
  const int n = int(pts.size());
  NdArray face = zeros<int32_t>({n}), uvr = zeros<vec3f>({n});
  launch(meshk::closest, n, mesh, from_vector(pts), max_dist, face, uvr);
  const std::vector<int32_t> fs = face.to_vector<int32_t>();
  const std::vector<vec3f> r = uvr.to_vector<vec3f>();
  int hits = 0, misses = 0;
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    const D3 p = d3(pts[size_t(i)]);
    auto [best, best_face] = brute_closest(m, p);
    const double tol = 2e-5 * (1 + best);
    if (fs[size_t(i)] < 0) {  // a miss: nothing closer than max_dist (rounding aside)
      ++misses;
      CHECK(best >= max_dist - tol);
      CHECK(r[size_t(i)].c[0] == 0.0f);
      CHECK(r[size_t(i)].c[1] == 0.0f);
      CHECK(r[size_t(i)].c[2] == 0.0f);
      continue;
    }
    ++hits;
    CHECK(r[size_t(i)].c[2] == 1.0f);
    CHECK(best < max_dist + tol);
    // The returned point lies on the returned face, and is as close as the closest one.
    const int f = fs[size_t(i)];
    const double u = r[size_t(i)].c[0], v = r[size_t(i)].c[1];
    CHECK(u >= -1e-6);
    CHECK(v >= -1e-6);
    CHECK(u + v <= 1 + 1e-6);
    const double d = dist(eval(m, f, u, v), p);
    CHECK(std::fabs(d - best) <= tol);
  }
  MESSAGE(hits << " hits, " << misses << " misses (max_dist " << max_dist << ")");
}

}  // namespace

TEST_CASE("mesh_query_point_no_sign: the closest face against brute force, on a random soup with degenerate and tiny triangles") {
  std::mt19937 rng(1234);
  for (int faces : {1, 3, 7, 200}) {
    CAPTURE(faces);
    SoupMesh m = random_soup(rng, faces);
    std::vector<vec3f> pts = query_points(m, rng, 300);
    check_closest(m, pts, 1.0e6f);
    check_closest(m, pts, 0.15f);  // many misses
  }
  SoupMesh s = sphere_mesh(3);
  check_closest(s, query_points(s, rng, 300), 1.0e6f);
  check_closest(s, query_points(s, rng, 100), 0.0f);  // nothing is strictly closer than 0
}

/// Warp 1.19's closest_point_to_triangle in float32 (its regions, its order of operations: the
/// reciprocal of the face region's denominator, then products), then the (u, v) its mesh point
/// queries return: v, and u recomputed as 1 - v - w from w = 1 - u - v.
std::array<float, 2> warp_query_uv(const vec3f& a, const vec3f& b, const vec3f& c, const vec3f& p) {
  auto sub3 = [](const vec3f& x, const vec3f& y) { return vec3f(x.c[0] - y.c[0], x.c[1] - y.c[1], x.c[2] - y.c[2]); };
  auto dot3 = [](const vec3f& x, const vec3f& y) { return x.c[0] * y.c[0] + x.c[1] * y.c[1] + x.c[2] * y.c[2]; };
  const vec3f ab = sub3(b, a), ac = sub3(c, a), ap = sub3(p, a), bp = sub3(p, b), cp = sub3(p, c);
  const float d1 = dot3(ab, ap), d2 = dot3(ac, ap), d3 = dot3(ab, bp), d4 = dot3(ac, bp);
  const float d5 = dot3(ab, cp), d6 = dot3(ac, cp);
  const float vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
  float v, w;
  if (d1 <= 0.0f && d2 <= 0.0f) v = 0.0f, w = 0.0f;
  else if (d3 >= 0.0f && d4 <= d3) v = 1.0f, w = 0.0f;
  else if (vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f) v = d1 / (d1 - d3), w = 0.0f;
  else if (d6 >= 0.0f && d5 <= d6) v = 0.0f, w = 1.0f;
  else if (vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f) v = 0.0f, w = d2 / (d2 - d6);
  else if (va <= 0.0f && d4 - d3 >= 0.0f && d5 - d6 >= 0.0f) w = (d4 - d3) / ((d4 - d3) + (d5 - d6)), v = 1.0f - w;
  else {
    const float denom = 1.0f / (va + vb + vc);
    v = vb * denom, w = vc * denom;
  }
  const float u = 1.0f - v - w;  // closest_point_to_triangle's u
  return {1.0f - v - (1.0f - u - v), v};
}

TEST_CASE("mesh_query_point_no_sign: u and v carry Warp 1.19's bits (its closest point's rounding)") {
  // Faces with area only (Warp has no sliver rule), points in every region: vertices, edges,
  // faces, just off faces, and random points inside and outside the sphere.
  std::mt19937 rng(77);
  SoupMesh s = sphere_mesh(3);
  std::vector<vec3f> pts = query_points(s, rng, 2000);
  Mesh mesh(points_of(s), from_vector(s.indices));
  const int n = int(pts.size());
  NdArray face = zeros<int32_t>({n}), uvr = zeros<vec3f>({n});
  launch(meshk::closest, n, mesh, from_vector(pts), 1.0e6f, face, uvr);
  const std::vector<int32_t> fs = face.to_vector<int32_t>();
  const std::vector<vec3f> r = uvr.to_vector<vec3f>();
  int same = 0, edge_or_face = 0;
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    const int f = fs[size_t(i)];
    REQUIRE(f >= 0);
    const vec3f a = f3(s.vertex(f, 0)), b = f3(s.vertex(f, 1)), c = f3(s.vertex(f, 2));
    const std::array<float, 2> w = warp_query_uv(a, b, c, pts[size_t(i)]);
    CHECK(r[size_t(i)].c[0] == w[0]);
    CHECK(r[size_t(i)].c[1] == w[1]);
    same += r[size_t(i)].c[0] == w[0] && r[size_t(i)].c[1] == w[1];
    edge_or_face += w[1] != 0.0f && w[1] != 1.0f;
  }
  CHECK(same == n);
  CHECK(edge_or_face > n / 2);  // not only vertex regions, whose (u, v) are exact
}

TEST_CASE("mesh_query_ray: the first hit against brute force: random rays, rays through vertices and edges, misses") {
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (bool sphere : {false, true}) {
    CAPTURE(sphere);
    SoupMesh m = sphere ? sphere_mesh(2) : random_soup(rng, 150);
    Mesh mesh(points_of(m), from_vector(m.indices));
    std::vector<vec3f> starts, dirs;
    for (int i = 0; i < 400; ++i) {  // random rays from outside
      vec3f o(3 * u(rng), 3 * u(rng), 3 * u(rng)), target(0.8f * u(rng), 0.8f * u(rng), 0.8f * u(rng));
      starts.push_back(o);
      dirs.push_back(vec3f(target.c[0] - o.c[0], target.c[1] - o.c[1], target.c[2] - o.c[2]));
    }
    for (int f = 0; f < m.faces(); f += 2) {  // aimed at vertices, edge midpoints, centroids
      const D3 a = m.vertex(f, 0), b = m.vertex(f, 1), c = m.vertex(f, 2);
      for (const D3& target : {a, mul(add(a, b), 0.5), mul(add(add(a, b), c), 1.0 / 3)}) {
        const D3 o = {2.5, 1.5 * double(u(rng)), -2.0};
        starts.push_back(f3(o));
        dirs.push_back(f3(sub(target, o)));
      }
    }
    starts.push_back(vec3f(5, 5, 5));  // pointing away: a miss
    dirs.push_back(vec3f(1, 0, 0));
    starts.push_back(vec3f(0, 0, 5));  // an axis-aligned ray (infinite inverse components)
    dirs.push_back(vec3f(0, 0, -1));
    const int n = int(starts.size());
    NdArray face = zeros<int32_t>({n}), tuv = zeros<vec3f>({n}), sign = zeros<float>({n}), normal = zeros<vec3f>({n});
    launch(meshk::ray, n, mesh, from_vector(starts), from_vector(dirs), 1.0e6f, face, tuv, sign, normal);
    const std::vector<int32_t> fs = face.to_vector<int32_t>();
    const std::vector<vec3f> r = tuv.to_vector<vec3f>(), nr = normal.to_vector<vec3f>();
    const std::vector<float> sg = sign.to_vector<float>();
    int hits = 0, ambiguous = 0, slivers = 0;
    for (int i = 0; i < n; ++i) {
      CAPTURE(i);
      const D3 o = d3(starts[size_t(i)]), d = d3(dirs[size_t(i)]);
      auto [t, bf] = brute_ray(m, o, d, 1e6);
      const int f = fs[size_t(i)];
      if ((f < 0) != (bf < 0)) {  // only where the ray grazes an edge may rounding decide
        ++ambiguous;
        const int g = f >= 0 ? f : bf;
        CHECK(edge_margin(m, g, o, d) < 1e-5 * std::sqrt(dot(d, d)));
        continue;
      }
      if (f < 0) {
        CHECK(r[size_t(i)].c[0] == 0.0f);
        CHECK(sg[size_t(i)] == 0.0f);
        continue;
      }
      ++hits;
      const double tk = r[size_t(i)].c[0];
      if (std::fabs(tk - t) > 1e-4 * (1 + t)) {  // two faces: rounding at the nearer one's edge decides
        ++ambiguous;
        CHECK(edge_margin(m, tk < t ? f : bf, o, d) < 1e-5 * std::sqrt(dot(d, d)));
        // The kernel's face is hit in float64 too, or grazed.
        CHECK((ray_face(m, f, o, d) >= 0 || edge_margin(m, f, o, d) < 1e-5 * std::sqrt(dot(d, d))));
        continue;
      }
      // The hit point from (u, v) on the returned face is the ray's point at t.
      const D3 x = eval(m, f, r[size_t(i)].c[1], r[size_t(i)].c[2]);
      CHECK(dist(x, add(o, mul(d, tk))) <= 1e-4 * (1 + tk * std::sqrt(dot(d, d))));
      const D3 e1 = sub(m.vertex(f, 1), m.vertex(f, 0)), e2 = sub(m.vertex(f, 2), m.vertex(f, 0));
      const D3 nf = cross(e1, e2);
      const double ln = std::sqrt(dot(nf, nf));
      // A sliver (collinear corners, rounded to float32) has a normal and barycentrics that are
      // rounding noise; the watertight test hits one whose sheared area rounds to non-zero.
      if (ln <= 1e-3 * std::sqrt(dot(e1, e1) * dot(e2, e2))) {
        ++slivers;
        continue;
      }
      // u and v as the float64 watertight test gives them.
      double ur = -1, vr = -1;
      if (ray_face(m, f, o, d, &ur, &vr) >= 0) {
        CHECK(std::fabs(r[size_t(i)].c[1] - ur) <= 1e-4);
        CHECK(std::fabs(r[size_t(i)].c[2] - vr) <= 1e-4);
      }
      for (int k = 0; k < 3; ++k) CHECK(std::fabs(nr[size_t(i)].c[k] - nf[size_t(k)] / ln) <= 1e-5);
      CHECK(sg[size_t(i)] == (dot(d, nf) < 0 ? 1.0f : -1.0f));
    }
    MESSAGE(hits << " hits of " << n << " rays, " << ambiguous << " decided by rounding at an edge, " << slivers
                 << " on slivers");
    CHECK(hits > n / 4);
  }
}

TEST_CASE("mesh_eval_position, mesh_eval_face_normal, mesh_get_point and mesh_get_index read the mesh") {
  std::mt19937 rng(5);
  SoupMesh m = sphere_mesh(1);
  Mesh mesh(points_of(m), from_vector(m.indices));
  const int n = int(m.points.size() / 3);
  std::vector<int32_t> faces;
  std::vector<vec2f> uvs;
  std::uniform_real_distribution<float> u(0, 0.5f);
  for (int i = 0; i < n; ++i) {
    faces.push_back(int32_t(rng() % uint32_t(m.faces())));
    uvs.push_back(vec2f(u(rng), u(rng)));
  }
  NdArray pos = zeros<vec3f>({n}), normal = zeros<vec3f>({n}), point = zeros<vec3f>({n}), index = zeros<int32_t>({n});
  launch(meshk::evals, n, mesh, from_vector(faces), from_vector(uvs), pos, normal, point, index);
  const auto P = pos.to_vector<vec3f>(), N = normal.to_vector<vec3f>(), Q = point.to_vector<vec3f>();
  const auto I = index.to_vector<int32_t>();
  for (int i = 0; i < n; ++i) {
    const int f = faces[size_t(i)];
    const D3 x = eval(m, f, uvs[size_t(i)].c[0], uvs[size_t(i)].c[1]);
    const D3 nf = cross(sub(m.vertex(f, 1), m.vertex(f, 0)), sub(m.vertex(f, 2), m.vertex(f, 0)));
    for (int k = 0; k < 3; ++k) {
      CHECK(P[size_t(i)].c[k] == doctest::Approx(x[size_t(k)]).epsilon(1e-5));
      CHECK(N[size_t(i)].c[k] == doctest::Approx(nf[size_t(k)] / std::sqrt(dot(nf, nf))).epsilon(1e-5));
      CHECK(Q[size_t(i)].c[k] == m.points[3 * size_t(i) + size_t(k)]);
    }
    CHECK(I[size_t(i)] == m.indices[size_t(i)]);
  }
}

TEST_CASE("mesh_eval_velocity and mesh_get_velocity read the mesh's velocities") {
  std::mt19937 rng(6);
  SoupMesh m = sphere_mesh(1);
  const int n = int(m.points.size() / 3);
  std::uniform_real_distribution<float> u(0, 0.5f), w(-2, 2);
  std::vector<vec3f> velocities;
  for (int i = 0; i < n; ++i) velocities.push_back(vec3f(w(rng), w(rng), w(rng)));
  Mesh mesh(points_of(m), from_vector(m.indices), from_vector(velocities));
  std::vector<int32_t> faces;
  std::vector<vec2f> uvs;
  for (int i = 0; i < n; ++i) {
    faces.push_back(int32_t(rng() % uint32_t(m.faces())));
    uvs.push_back(vec2f(u(rng), u(rng)));
  }
  NdArray vel = zeros<vec3f>({n}), point_vel = zeros<vec3f>({n});
  launch(meshk::velocity_evals, n, mesh, from_vector(faces), from_vector(uvs), vel, point_vel);
  const auto V = vel.to_vector<vec3f>(), Q = point_vel.to_vector<vec3f>();
  for (int i = 0; i < n; ++i) {
    const int f = faces[size_t(i)];
    const double a = uvs[size_t(i)].c[0], b = uvs[size_t(i)].c[1];
    for (int k = 0; k < 3; ++k) {
      auto corner = [&](int c) { return double(velocities[size_t(m.indices[3 * size_t(f) + size_t(c)])].c[k]); };
      CHECK(V[size_t(i)].c[k] == doctest::Approx(a * corner(0) + b * corner(1) + (1 - a - b) * corner(2)).epsilon(1e-5).scale(1));
      CHECK(Q[size_t(i)].c[k] == velocities[size_t(i)].c[k]);
    }
  }
}

TEST_CASE("mesh queries against brute force on a mesh whose tree hits the depth bound: exponentially spaced triangles") {
  // Triangle i lies in the plane x = 1.5^(i % 120 - 60), in column i / 120 along y: SAH alone
  // would peel one plane a split (a tree about 120 levels deep), so the builder's median
  // fallback shapes the tree's lower part, and the traversals' stack must hold.
  SoupMesh m;
  for (int i = 0; i < 2400; ++i) {
    const float x = std::pow(1.5f, float(i % 120 - 60)), y = float(i / 120);
    for (float p : {x, y, 0.0f, x, y + 1, 0.0f, x, y, 1.0f}) m.points.push_back(p);
    for (int k = 0; k < 3; ++k) m.indices.push_back(3 * i + k);
  }
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<vec3f> pts, starts, dirs;
  for (int i = 0; i < 400; ++i) {
    const float y = 20 * u(rng), z = 0.5f * u(rng);
    pts.push_back(vec3f(std::pow(1.5f, 120 * u(rng) - 60), y, z));
    // Along the axis, through every plane: from below, slanted; from far above, axis-aligned.
    starts.push_back(vec3f(i % 2 ? -1.0f : 1e12f, y, z));
    dirs.push_back(i % 2 ? vec3f(1.0f, 0.01f * u(rng), 0.01f * u(rng)) : vec3f(-1.0f, 0.0f, 0.0f));
  }
  check_closest(m, pts, 1.0e6f);
  Mesh mesh(points_of(m), from_vector(m.indices));
  const int n = int(starts.size());
  NdArray face = zeros<int32_t>({n}), tuv = zeros<vec3f>({n}), sign = zeros<float>({n}), normal = zeros<vec3f>({n});
  launch(meshk::ray, n, mesh, from_vector(starts), from_vector(dirs), 1.0e13f, face, tuv, sign, normal);
  const std::vector<int32_t> fs = face.to_vector<int32_t>();
  const std::vector<vec3f> r = tuv.to_vector<vec3f>();
  int hits = 0;
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    auto [t, bf] = brute_ray(m, d3(starts[size_t(i)]), d3(dirs[size_t(i)]), 1e13);
    REQUIRE((fs[size_t(i)] >= 0) == (bf >= 0));
    if (bf < 0) continue;
    ++hits;
    CHECK(std::fabs(r[size_t(i)].c[0] - t) <= 1e-5 * (1 + t));
  }
  CHECK(hits > n / 2);
}
