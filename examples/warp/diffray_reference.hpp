// examples/warp/diffray_reference.hpp — an independent float64 restatement of diffray's forward
// program (ray cast through the mesh's inverse transform, textured Lambert shading, 2 x 2
// downsample, pseudo-Huber loss) as a function of the mesh's rotation quaternion, for checking
// the tape's gradient with central differences. Rays meet the triangles by brute force with
// Moller and Trumbore's test (no BVH, no watertight test): nothing of kjit's is reused.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

#include "kjit/kjit.hpp"

namespace diffray_reference {

using V3 = std::array<double, 3>;

inline V3 operator+(const V3& a, const V3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
inline V3 operator-(const V3& a, const V3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline V3 operator*(double s, const V3& a) { return {s * a[0], s * a[1], s * a[2]}; }
inline double dot(const V3& a, const V3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline V3 cross(const V3& a, const V3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

/// Warp's quat_rotate (x, y, z, w): p (2w^2 - 1) + 2 v (v . p) + 2w (v x p), which for a
/// quaternion that is not unit also scales: the function the kernel differentiates.
inline V3 rotate(const std::array<double, 4>& q, const V3& p) {
  const V3 v{q[0], q[1], q[2]};
  return (2.0 * q[3] * q[3] - 1.0) * p + (2.0 * dot(v, p)) * v + (2.0 * q[3]) * cross(v, p);
}

/// The program's inputs other than the rotation, in float64.
struct Scene {
  std::vector<V3> points, normals, texture, target;
  std::vector<int> indices;
  std::vector<std::array<double, 2>> tex;
  int width = 0, height = 0;
  double aspect = 0, tan = 0;
};

inline Scene scene_of(const std::vector<kjit::vec3f>& points, const std::vector<int>& indices,
                      const std::vector<kjit::vec3f>& normals, const std::vector<kjit::vec2f>& tex,
                      const std::vector<kjit::vec3f>& texture, const std::vector<kjit::vec3f>& target, int width,
                      int height, double aspect, double tan) {
  auto widen = [](const std::vector<kjit::vec3f>& v) {
    std::vector<V3> out;
    for (const kjit::vec3f& x : v) out.push_back({x[0], x[1], x[2]});
    return out;
  };
  Scene s;
  s.points = widen(points), s.normals = widen(normals), s.texture = widen(texture), s.target = widen(target);
  s.indices = indices;
  for (const kjit::vec2f& t : tex) s.tex.push_back({t[0], t[1]});
  s.width = width, s.height = height, s.aspect = aspect, s.tan = tan;
  return s;
}

/// The colour of the ray from `ro` along `rd` in the mesh's space (`inv` rotates the lights).
inline V3 shade(const Scene& s, const V3& ro, const V3& rd, const std::array<double, 4>& inv) {
  double best = 1.0e6, u = 0, v = 0;
  int face = -1;
  for (size_t f = 0; f < s.indices.size() / 3; ++f) {
    const V3 &a = s.points[size_t(s.indices[3 * f])], &b = s.points[size_t(s.indices[3 * f + 1])],
             &c = s.points[size_t(s.indices[3 * f + 2])];
    const V3 e1 = b - a, e2 = c - a, p = cross(rd, e2);
    const double det = dot(e1, p);
    if (det == 0.0) continue;
    const V3 t0 = ro - a, q = cross(t0, e1);
    const double b1 = dot(t0, p) / det, b2 = dot(rd, q) / det, t = dot(e2, q) / det;
    if (b1 < 0.0 || b2 < 0.0 || b1 + b2 > 1.0 || t < 0.0 || t >= best) continue;
    best = t, face = int(f), u = 1.0 - b1 - b2, v = b1;  // hit = u a + v b + (1 - u - v) c
  }
  if (face < 0) return {0.0, 0.0, 0.0};
  auto interp = [&](auto get) { return u * get(0) + v * get(1) + (1.0 - u - v) * get(2); };
  const size_t f = size_t(face);
  const V3 normal = (u * s.normals[size_t(s.indices[3 * f])] + v * s.normals[size_t(s.indices[3 * f + 1])]) +
                    (1.0 - u - v) * s.normals[size_t(s.indices[3 * f + 2])];
  const double tu = interp([&](int k) { return s.tex[size_t(s.indices[3 * f + size_t(k)])][0]; });
  const double tv = interp([&](int k) { return s.tex[size_t(s.indices[3 * f + size_t(k)])][1]; });
  // Bilinear lookup of the 256 x 256 texture, rows flipped; a neighbour past the end of a row
  // (weight 0) is the next row's first texel, as the kernel's flat address reads it.
  const double tx = tu * 255.0, ty = (1.0 - tv) * 255.0;
  const int x0 = int(tx), y0 = int(ty);
  const double ax = tx - x0, ay = ty - y0;
  auto texel = [&](int y, int x) {
    const size_t i = size_t(y) * 256 + size_t(x);
    return i < s.texture.size() ? s.texture[i] : V3{0.0, 0.0, 0.0};
  };
  const V3 lower = (1.0 - ax) * texel(y0, x0) + ax * texel(y0, x0 + 1);
  const V3 upper = (1.0 - ax) * texel(y0 + 1, x0) + ax * texel(y0 + 1, x0 + 1);
  V3 color = (1.0 - ay) * lower + ay * upper;
  const V3 dirs[2] = {{1.0, 0.0, 0.0}, {0.0, 0.0, 1.0}};
  const double intensities[2] = {2.0, double(0.2f)};
  double lambert = 0.0;
  for (int l = 0; l < 2; ++l) lambert += std::max(0.0, intensities[l] * dot(normal, rotate(inv, dirs[l])));
  color = lambert * color;
  for (double& c : color) c = std::min(c, 1.0);
  return color;
}

/// The loss for the mesh rotated by `rot` (x, y, z, w; at the origin), camera at (0, 0.75, 7).
inline double loss(const Scene& s, const std::array<double, 4>& rot) {
  const std::array<double, 4> inv{-rot[0], -rot[1], -rot[2], rot[3]};  // Warp's quat_inverse
  const int rays_width = 2 * s.width, rays_height = 2 * s.height;
  std::vector<V3> rays(size_t(rays_width) * size_t(rays_height));
  const V3 ro = rotate(inv, V3{0.0, 0.75, 7.0});  // the inverse transform's translation is 0
  for (size_t t = 0; t < rays.size(); ++t) {
    const int x = int(t % size_t(rays_width)), y = rays_height - int(t / size_t(rays_width));
    const double sx = 2.0 * x / rays_width - 1.0, sy = 2.0 * y / rays_height - 1.0;
    V3 rd{sx * s.tan * s.aspect, sy * s.tan, -1.0};
    rd = (1.0 / std::sqrt(dot(rd, rd))) * rd;
    rays[t] = shade(s, ro, rotate(inv, rd), inv);
  }
  double sum = 0.0;
  for (int py = 0; py < s.height; ++py)
    for (int px = 0; px < s.width; ++px) {
      const size_t start = size_t(py) * 2 * size_t(rays_width) + size_t(px) * 2;
      const V3 pixel = 0.25 * (((rays[start] + rays[start + 1]) + rays[start + size_t(rays_width)]) +
                               rays[start + size_t(rays_width) + 1]);
      const V3 diff = s.target[size_t(py) * size_t(s.width) + size_t(px)] - pixel;
      for (double d : diff) sum += std::sqrt(1.0 + d * d) - 1.0;
    }
  return sum;
}

/// d loss / d rot by central differences of step h, component by component.
inline std::array<double, 4> central_differences(const Scene& s, const std::array<double, 4>& rot, double h) {
  std::array<double, 4> g{};
  for (size_t k = 0; k < 4; ++k) {
    std::array<double, 4> plus = rot, minus = rot;
    plus[k] += h, minus[k] -= h;
    g[k] = (loss(s, plus) - loss(s, minus)) / (2.0 * h);
  }
  return g;
}

}  // namespace diffray_reference
