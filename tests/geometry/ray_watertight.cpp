// The watertight ray/triangle test of the mesh ray queries: rays aimed exactly at the shared
// edges and vertices of closed meshes all hit and cross them an even number of times, and
// mesh_query_ray's t, u, v have the bits of the float32 watertight test written on the host.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>

#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"
#include "mesh_arrays.hpp"
#include "mesh_kernels.hpp"
#include "mesh_query_kernels.hpp"
#include "mesh_reference.hpp"
#include "test_support.hpp"

using namespace kjit;
using namespace kjit::test::geo;

namespace {

/// The cube [-1, 1]^3 with each side a g x g grid of squares, each split into two triangles,
/// vertices shared (closed), wound outwards.
SoupMesh grid_cube(int g) {
  SoupMesh m;
  std::map<std::array<int, 3>, int32_t> ids;  // vertex by integer grid coordinates
  auto vertex = [&](std::array<int, 3> c) {
    auto it = ids.find(c);
    if (it != ids.end()) return it->second;
    for (int k = 0; k < 3; ++k) m.points.push_back(2.0f * float(c[size_t(k)]) / float(g) - 1.0f);
    return ids[c] = int32_t(m.points.size() / 3 - 1);
  };
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
      for (int i = 0; i < g; ++i)
        for (int j = 0; j < g; ++j) {
          auto at = [&](int di, int dj) {
            std::array<int, 3> c{};
            c[size_t(axis)] = side * g;
            c[size_t(a1)] = i + di;
            c[size_t(a2)] = j + dj;
            return vertex(c);
          };
          const int32_t p00 = at(0, 0), p10 = at(1, 0), p11 = at(1, 1), p01 = at(0, 1);
          if (side) m.indices.insert(m.indices.end(), {p00, p10, p11, p00, p11, p01});
          else m.indices.insert(m.indices.end(), {p00, p11, p10, p00, p01, p11});
        }
    }
  return m;
}

/// a*b - c*d with c*d's rounding error recovered (float32).
float diff_product(float a, float b, float c, float d) {
  const float cd = c * d;
  return std::fma(a, b, -cd) + std::fma(-c, d, cd);
}

/// Woop, Benthin and Wald's test in float32, step by step as the paper (and Warp) computes it:
/// the oracle for the bits of t, u, v. Whether the line meets the triangle on the ray's side.
bool woop_f32(const vec3f& o, const vec3f& d, const vec3f& a, const vec3f& b, const vec3f& c, float& t, float& u,
              float& v) {
  int kz = 0;
  if (std::fabs(d.c[1]) > std::fabs(d.c[kz])) kz = 1;
  if (std::fabs(d.c[2]) > std::fabs(d.c[kz])) kz = 2;
  int kx = (kz + 1) % 3, ky = (kx + 1) % 3;
  if (d.c[kz] < 0) std::swap(kx, ky);
  const float sx = d.c[kx] / d.c[kz], sy = d.c[ky] / d.c[kz], sz = 1.0f / d.c[kz];
  float px[3], py[3], pz[3];
  const vec3f* vs[3] = {&a, &b, &c};
  for (int k = 0; k < 3; ++k) {
    float p[3];
    for (int i = 0; i < 3; ++i) p[i] = vs[k]->c[i] - o.c[i];
    px[k] = p[kx] - sx * p[kz];
    py[k] = p[ky] - sy * p[kz];
    pz[k] = sz * p[kz];
  }
  float eu = diff_product(px[2], py[1], py[2], px[1]), ev = diff_product(px[0], py[2], py[0], px[2]),
        ew = diff_product(px[1], py[0], py[1], px[0]);
  if (eu == 0 || ev == 0 || ew == 0) {
    eu = float(double(px[2]) * py[1] - double(py[2]) * px[1]);
    ev = float(double(px[0]) * py[2] - double(py[0]) * px[2]);
    ew = float(double(px[1]) * py[0] - double(py[1]) * px[0]);
  }
  if ((eu < 0 || ev < 0 || ew < 0) && (eu > 0 || ev > 0 || ew > 0)) return false;
  const float det = eu + ev + ew;
  if (det == 0) return false;
  const float tt = eu * pz[0] + ev * pz[1] + ew * pz[2];
  if ((det < 0 ? -tt : tt) < 0) return false;
  const float inv = 1.0f / det;
  u = eu * inv;
  v = ev * inv;
  t = tt * inv;
  return true;
}

vec3f vertex_f(const SoupMesh& m, int f, int k) {
  const int32_t i = m.indices[3 * size_t(f) + size_t(k)];
  return vec3f(m.points[3 * size_t(i)], m.points[3 * size_t(i) + 1], m.points[3 * size_t(i) + 2]);
}

/// Rays aimed at every vertex (when `vertices`) or at points on every edge (the float32
/// midpoint and a point a third along), from random origins 2.5 to 5 away on the outer side
/// (near the target's direction from the centre, and inside the wedge of a cube's edge or
/// corner, so that no ray only touches the closed mesh at a silhouette edge or corner). Aimed
/// exactly, the direction is the float32 target minus the origin, which puts the target
/// exactly on the ray in the test's sheared coordinates: edge functions exactly 0. `nudge`
/// moves the target off by about 8 float32 ulps instead: tiny edge functions of either sign,
/// where a test without a consistent rule per edge lets rays through.
void edge_rays(const SoupMesh& m, std::mt19937& rng, bool vertices, bool nudge, std::vector<vec3f>& starts,
               std::vector<vec3f>& dirs) {
  std::normal_distribution<float> g;
  std::uniform_real_distribution<float> r(2.5f, 5.0f);
  for (int f = 0; f < m.faces(); ++f)
    for (int k = 0; k < 3; ++k) {
      const vec3f a = vertex_f(m, f, k), b = vertex_f(m, f, (k + 1) % 3);
      std::vector<vec3f> targets = {a};
      if (!vertices) targets = {(a + b) * 0.5f, a + (b - a) * (1.0f / 3.0f)};
      for (vec3f x : targets) {
        const float lx = std::sqrt(x.c[0] * x.c[0] + x.c[1] * x.c[1] + x.c[2] * x.c[2]);
        vec3f out;
        bool entering = false;
        while (!entering) {
          out = x * (1.0f / lx) + vec3f(g(rng), g(rng), g(rng)) * 0.2f;
          entering = true;
          for (int c = 0; c < 3; ++c)
            if (std::fabs(x.c[c]) == 1.0f) entering = entering && out.c[c] * x.c[c] > 0.2f;
        }
        out = out * (r(rng) / std::sqrt(out.c[0] * out.c[0] + out.c[1] * out.c[1] + out.c[2] * out.c[2]));
        if (nudge) x = x + vec3f(g(rng), g(rng), g(rng)) * 1e-6f;
        const vec3f o = x + out;
        starts.push_back(o);
        dirs.push_back(x - o);
      }
    }
}

}  // namespace

TEST_CASE("mesh_query_ray and the ray counts are watertight: rays at shared edges and vertices of closed meshes") {
  std::mt19937 rng(2024);
  for (int which = 0; which < 2; ++which)
    for (int mode = 0; mode < 4; ++mode) {
      const bool vertices = mode % 2, nudge = mode >= 2;
      CAPTURE(which);
      CAPTURE(vertices);
      CAPTURE(nudge);
      const SoupMesh m = which == 0 ? sphere_mesh(3) : grid_cube(4);
      Mesh mesh(points_of(m), from_vector(m.indices));
      std::vector<vec3f> starts, dirs;
      edge_rays(m, rng, vertices, nudge, starts, dirs);
      const int n = int(starts.size());
      NdArray face = zeros<int32_t>({n}), tuv = zeros<vec3f>({n}), sign = zeros<float>({n}),
              normal = zeros<vec3f>({n});
      launch(meshk::ray, n, mesh, from_vector(starts), from_vector(dirs), 1.0e6f, face, tuv, sign, normal);
      NdArray count = zeros<int32_t>({n}), any = zeros<int32_t>({n});
      launch(meshq::ray_counts, n, mesh, from_vector(starts), from_vector(dirs), 1.0e6f, count, any);
      const std::vector<int32_t> fs = face.to_vector<int32_t>(), cs = count.to_vector<int32_t>(),
                                 as = any.to_vector<int32_t>();
      const std::vector<vec3f> r = tuv.to_vector<vec3f>();
      int missed = 0, odd = 0, no_any = 0, far = 0, once = 0;
      for (int i = 0; i < n; ++i) {
        missed += fs[size_t(i)] < 0;
        no_any += as[size_t(i)] != 1;
        odd += cs[size_t(i)] % 2 != 0;
        once += cs[size_t(i)] < 2;  // a leak at the entry or the exit
        far += fs[size_t(i)] >= 0 && std::fabs(r[size_t(i)].c[0] - 1.0f) > 1e-5f;  // the target is at t = 1
      }
      MESSAGE(n << " rays at shared " << (vertices ? std::string("vertices") : std::string("edges"))
                << (nudge ? std::string(" (8 ulps off)") : std::string(" (exactly)")) << ": " << missed << " missed, " << no_any
                << " without any hit, " << far << " hit away from the target, " << once << " crossing under twice, " << odd
                << " with an odd crossing count");
      CHECK(missed == 0);
      CHECK(no_any == 0);
      CHECK(far == 0);
      CHECK(once == 0);
      // Odd counts are not leaks: near the ray the sheared coordinates are multiples of about
      // an ulp of the mesh's size, so the edge functions through the point aimed at are often
      // exactly 0, and then the test (Warp's: Woop's as published, with no tie-breaking rule)
      // meets every face around that point. Reported, not checked; parity is checked below on
      // rays that meet no edge.
      (void)nudge;
    }
}

TEST_CASE("mesh_query_ray_count_intersections: rays from outside through closed meshes cross them an even number of times") {
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::normal_distribution<float> g;
  for (int which = 0; which < 2; ++which) {
    CAPTURE(which);
    const SoupMesh m = which == 0 ? sphere_mesh(3) : grid_cube(4);
    Mesh mesh(points_of(m), from_vector(m.indices));
    std::vector<vec3f> starts, dirs;
    for (int i = 0; i < 3000; ++i) {
      vec3f o(g(rng), g(rng), g(rng));
      o = o * (4.0f / std::sqrt(o.c[0] * o.c[0] + o.c[1] * o.c[1] + o.c[2] * o.c[2]));
      starts.push_back(o);
      dirs.push_back(vec3f(u(rng), u(rng), u(rng)) - o);
    }
    const int n = int(starts.size());
    NdArray count = zeros<int32_t>({n}), any = zeros<int32_t>({n});
    launch(meshq::ray_counts, n, mesh, from_vector(starts), from_vector(dirs), 1.0e6f, count, any);
    const std::vector<int32_t> cs = count.to_vector<int32_t>();
    int two = 0;
    for (int i = 0; i < n; ++i) two += cs[size_t(i)] == 2;  // convex: in once, out once
    MESSAGE(two << " of " << n << " rays crossed exactly twice");
    CHECK(two == n);
  }
}

TEST_CASE("mesh_query_ray: t, u, v have the bits of the float32 watertight test on the face it returns") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int which = 0; which < 2; ++which) {
    CAPTURE(which);
    const SoupMesh m = which == 0 ? random_soup(rng, 200) : sphere_mesh(3);
    Mesh mesh(points_of(m), from_vector(m.indices));
    std::vector<vec3f> starts, dirs;
    for (int i = 0; i < 600; ++i) {
      const vec3f o(3 * u(rng), 3 * u(rng), 3 * u(rng)), x(0.8f * u(rng), 0.8f * u(rng), 0.8f * u(rng));
      starts.push_back(o);
      dirs.push_back(x - o);
    }
    if (which == 1)
      for (int mode = 0; mode < 4; ++mode) edge_rays(m, rng, mode % 2, mode >= 2, starts, dirs);
    const int n = int(starts.size());
    NdArray face = zeros<int32_t>({n}), tuv = zeros<vec3f>({n}), sign = zeros<float>({n}), normal = zeros<vec3f>({n});
    launch(meshk::ray, n, mesh, from_vector(starts), from_vector(dirs), 1.0e6f, face, tuv, sign, normal);
    const std::vector<int32_t> fs = face.to_vector<int32_t>();
    const std::vector<vec3f> r = tuv.to_vector<vec3f>();
    const std::vector<float> sg = sign.to_vector<float>();
    int hits = 0, same = 0, nearest = 0;
    for (int i = 0; i < n; ++i) {
      CAPTURE(i);
      const int f = fs[size_t(i)];
      // The nearest float32 hit over every face: the traversal's choice up to ties in t.
      float best = 1.0e6f;
      for (int g = 0; g < m.faces(); ++g) {
        float t, uu, vv;
        if (woop_f32(starts[size_t(i)], dirs[size_t(i)], vertex_f(m, g, 0), vertex_f(m, g, 1), vertex_f(m, g, 2), t,
                     uu, vv) &&
            t >= 0 && t < best)
          best = t;
      }
      if (f < 0) {
        CHECK(best == 1.0e6f);
        continue;
      }
      ++hits;
      float t = 0, uu = 0, vv = 0;
      REQUIRE(woop_f32(starts[size_t(i)], dirs[size_t(i)], vertex_f(m, f, 0), vertex_f(m, f, 1), vertex_f(m, f, 2), t,
                       uu, vv));
      same += r[size_t(i)].c[0] == t && r[size_t(i)].c[1] == uu && r[size_t(i)].c[2] == vv;
      // Faces around a vertex the ray passes through give t's a rounding apart, and a box's
      // entry rounds too: the traversal's choice is the nearest to a few ulps.
      nearest += t <= best * (1 + 4e-7f);
      // The side the edge functions saw: their sum's sign is the face's orientation along the ray.
      const D3 a = m.vertex(f, 0), nf = cross(sub(m.vertex(f, 1), a), sub(m.vertex(f, 2), a));
      const D3 d = {dirs[size_t(i)].c[0], dirs[size_t(i)].c[1], dirs[size_t(i)].c[2]};
      if (std::fabs(dot(d, nf)) > 1e-6 * std::sqrt(dot(d, d) * dot(nf, nf)))
        CHECK(sg[size_t(i)] == (dot(d, nf) < 0 ? 1.0f : -1.0f));
    }
    MESSAGE(hits << " hits of " << n << " rays; t, u, v bit-identical on " << same << ", nearest float32 hit on "
                 << nearest);
    CHECK(same == hits);
    CHECK(nearest == hits);
    CHECK(hits > n / 4);
  }
}
