// Float64 references for the mesh tests (mesh_reference.hpp).
#include "mesh_reference.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace kjit::test::geo {

D3 sub(const D3& a, const D3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
D3 add(const D3& a, const D3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
D3 mul(const D3& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
double dot(const D3& a, const D3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
D3 cross(const D3& a, const D3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dist(const D3& a, const D3& b) { return std::sqrt(dot(sub(a, b), sub(a, b))); }

SoupMesh random_soup(std::mt19937& rng, int faces) {
  std::uniform_real_distribution<float> u(-1, 1);
  SoupMesh m;
  auto add_point = [&](float x, float y, float z) {
    m.points.insert(m.points.end(), {x, y, z});
    return int32_t(m.points.size() / 3 - 1);
  };
  for (int f = 0; f < faces; ++f) {
    const int kind = f % 8;
    if (kind == 5 && f > 0) {  // shares two vertices with an earlier face: edges shared
      const int g = int(rng() % uint32_t(f));
      m.indices.insert(m.indices.end(), {m.indices[3 * size_t(g)], m.indices[3 * size_t(g) + 1],
                                         add_point(u(rng), u(rng), u(rng))});
      continue;
    }
    const float x = u(rng), y = u(rng), z = u(rng);
    const int32_t a = add_point(x, y, z);
    if (kind == 6) {  // degenerate: a repeated vertex, or three collinear points
      const int32_t b = add_point(x + 0.3f, y - 0.2f, z + 0.1f);
      if (rng() % 2) m.indices.insert(m.indices.end(), {a, b, a});
      else m.indices.insert(m.indices.end(), {a, b, add_point(x + 0.6f, y - 0.4f, z + 0.2f)});
      continue;
    }
    const float s = kind == 7 ? 1e-4f : 0.5f;  // tiny triangles
    const int32_t b = add_point(x + s * u(rng), y + s * u(rng), z + s * u(rng));
    const int32_t c = add_point(x + s * u(rng), y + s * u(rng), z + s * u(rng));
    m.indices.insert(m.indices.end(), {a, b, c});
  }
  return m;
}

SoupMesh sphere_mesh(int subdivisions) {
  std::vector<D3> pts = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  std::vector<std::array<int, 3>> tris = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4},
                                          {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
  for (int s = 0; s < subdivisions; ++s) {
    std::map<std::pair<int, int>, int> mid;
    auto midpoint = [&](int a, int b) {
      auto key = std::make_pair(std::min(a, b), std::max(a, b));
      auto it = mid.find(key);
      if (it != mid.end()) return it->second;
      D3 p = mul(add(pts[size_t(a)], pts[size_t(b)]), 0.5);
      pts.push_back(mul(p, 1.0 / std::sqrt(dot(p, p))));
      return mid[key] = int(pts.size() - 1);
    };
    std::vector<std::array<int, 3>> next;
    for (auto t : tris) {
      int ab = midpoint(t[0], t[1]), bc = midpoint(t[1], t[2]), ca = midpoint(t[2], t[0]);
      next.push_back({t[0], ab, ca});
      next.push_back({ab, t[1], bc});
      next.push_back({ca, bc, t[2]});
      next.push_back({ab, bc, ca});
    }
    tris.swap(next);
  }
  SoupMesh m;
  for (const D3& p : pts) m.points.insert(m.points.end(), {float(p[0]), float(p[1]), float(p[2])});
  for (auto t : tris) m.indices.insert(m.indices.end(), {t[0], t[1], t[2]});
  return m;
}

std::array<double, 2> closest_uv(const D3& a, const D3& b, const D3& c, const D3& p) {
  const D3 ab = sub(b, a), ac = sub(c, a), ap = sub(p, a), bp = sub(p, b), cp = sub(p, c), bc = sub(c, b);
  const double d1 = dot(ab, ap), d2 = dot(ac, ap), d3 = dot(ab, bp), d4 = dot(ac, bp), d5 = dot(ab, cp),
               d6 = dot(ac, cp);
  if (d1 <= 0 && d2 <= 0) return {1, 0};
  if (d3 >= 0 && d4 <= d3) return {0, 1};
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0 && d1 - d3 > 0) return {1 - d1 / (d1 - d3), d1 / (d1 - d3)};
  if (d6 >= 0 && d5 <= d6) return {0, 0};
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0 && d2 - d6 > 0) return {1 - d2 / (d2 - d6), 0};
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0 && (d4 - d3) + (d5 - d6) > 0)
    return {0, 1 - (d4 - d3) / ((d4 - d3) + (d5 - d6))};
  const double den = va + vb + vc;
  if (den > 1e-6 * dot(ab, ab) * dot(ac, ac)) return {1 - vb / den - vc / den, vb / den};
  // No area: the nearest of the three edges.
  auto clamp01 = [](double x) { return std::min(std::max(x, 0.0), 1.0); };
  const double lab = dot(ab, ab), lac = dot(ac, ac), lbc = dot(bc, bc);
  const double t0 = lab > 0 ? clamp01(d1 / lab) : 0, t1 = lac > 0 ? clamp01(d2 / lac) : 0,
               t2 = lbc > 0 ? clamp01(dot(bc, bp) / lbc) : 0;
  const double q0 = dot(sub(ap, mul(ab, t0)), sub(ap, mul(ab, t0))), q1 = dot(sub(ap, mul(ac, t1)), sub(ap, mul(ac, t1))),
               q2 = dot(sub(bp, mul(bc, t2)), sub(bp, mul(bc, t2)));
  if (q0 <= q1 && q0 <= q2) return {1 - t0, t0};
  if (q1 <= q2) return {1 - t1, 0};
  return {0, 1 - t2};
}

D3 eval(const SoupMesh& m, int f, double u, double v) {
  return add(add(mul(m.vertex(f, 0), u), mul(m.vertex(f, 1), v)), mul(m.vertex(f, 2), 1 - u - v));
}

std::pair<double, int> brute_closest(const SoupMesh& m, const D3& p) {
  double best = INFINITY;
  int face = -1;
  for (int f = 0; f < m.faces(); ++f) {
    auto uv = closest_uv(m.vertex(f, 0), m.vertex(f, 1), m.vertex(f, 2), p);
    const double d = dist(eval(m, f, uv[0], uv[1]), p);
    if (d < best) best = d, face = f;
  }
  return {best, face};
}

double ray_face(const SoupMesh& m, int f, const D3& o, const D3& d, double* u, double* v) {
  // Woop, Benthin and Wald's test written plainly in float64: the dominant axis of d becomes z,
  // the vertices are sheared so that the ray runs along +z, and the 2D edge functions decide.
  int kz = 0;
  for (int k = 1; k < 3; ++k)
    if (std::fabs(d[size_t(k)]) > std::fabs(d[size_t(kz)])) kz = k;
  int kx = (kz + 1) % 3, ky = (kx + 1) % 3;
  if (d[size_t(kz)] < 0) std::swap(kx, ky);
  const double sx = d[size_t(kx)] / d[size_t(kz)], sy = d[size_t(ky)] / d[size_t(kz)], sz = 1 / d[size_t(kz)];
  double px[3], py[3], pz[3];
  for (int k = 0; k < 3; ++k) {
    const D3 p = sub(m.vertex(f, k), o);
    px[k] = p[size_t(kx)] - sx * p[size_t(kz)];
    py[k] = p[size_t(ky)] - sy * p[size_t(kz)];
    pz[k] = sz * p[size_t(kz)];
  }
  const double eu = px[2] * py[1] - py[2] * px[1], ev = px[0] * py[2] - py[0] * px[2],
               ew = px[1] * py[0] - py[1] * px[0];
  if ((eu < 0 || ev < 0 || ew < 0) && (eu > 0 || ev > 0 || ew > 0)) return -1;
  const double det = eu + ev + ew;
  if (det == 0) return -1;
  const double t = (eu * pz[0] + ev * pz[1] + ew * pz[2]) / det;
  if (u) *u = eu / det;
  if (v) *v = ev / det;
  return t >= 0 ? t : -1;
}

std::pair<double, int> brute_ray(const SoupMesh& m, const D3& o, const D3& d, double max_t) {
  double best = max_t;
  int face = -1;
  for (int f = 0; f < m.faces(); ++f) {
    const double t = ray_face(m, f, o, d);
    if (t >= 0 && t < best) best = t, face = f;
  }
  return {face < 0 ? -1 : best, face};
}

bool stable_closest(const SoupMesh& m, const D3& p, double h) {
  const int f0 = brute_closest(m, p).second;
  auto uv = closest_uv(m.vertex(f0, 0), m.vertex(f0, 1), m.vertex(f0, 2), p);
  bool stable = uv[0] > 0.02 && uv[1] > 0.02 && 1 - uv[0] - uv[1] > 0.02;
  for (int k = 0; k < 3 && stable; ++k)
    for (double s : {-2 * h, 2 * h}) {
      D3 e = p;
      e[size_t(k)] += s;
      stable = stable && brute_closest(m, e).second == f0;
    }
  return stable;
}

double edge_margin(const SoupMesh& m, int f, const D3& o, const D3& d) {
  const D3 a = m.vertex(f, 0), b = m.vertex(f, 1), c = m.vertex(f, 2);
  const D3 n = cross(sub(b, a), sub(c, a));
  const double dn = dot(d, n);
  if (dn == 0) return 0;
  const D3 x = add(o, mul(d, dot(sub(a, o), n) / dn));  // where the ray meets the plane
  double margin = INFINITY;
  const D3 vs[3] = {a, b, c};
  for (int k = 0; k < 3; ++k) {
    const D3 p = vs[k], q = vs[(k + 1) % 3], e = sub(q, p);
    const double l = dot(e, e);
    const double t = l > 0 ? std::min(std::max(dot(sub(x, p), e) / l, 0.0), 1.0) : 0;
    margin = std::min(margin, dist(x, add(p, mul(e, t))));
  }
  return margin;
}

}  // namespace kjit::test::geo
