// Float64 references for the mesh tests: random meshes with degenerate and tiny triangles,
// closest points and ray hits by brute force over every triangle.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace kjit::test::geo {

using D3 = std::array<double, 3>;

D3 sub(const D3& a, const D3& b);
D3 add(const D3& a, const D3& b);
D3 mul(const D3& a, double s);
double dot(const D3& a, const D3& b);
D3 cross(const D3& a, const D3& b);
double dist(const D3& a, const D3& b);

/// A triangle soup: points (float32, as the mesh holds them) and three indices per face.
struct SoupMesh {
  std::vector<float> points;  // x, y, z per point
  std::vector<int32_t> indices;
  D3 point(int32_t i) const { return {points[3 * size_t(i)], points[3 * size_t(i) + 1], points[3 * size_t(i) + 2]}; }
  D3 vertex(int f, int k) const { return point(indices[3 * size_t(f) + size_t(k)]); }
  int faces() const { return int(indices.size() / 3); }
};

/// Random triangles in [-1, 1]^3, with degenerate ones (repeated vertices, collinear) and tiny
/// ones (edges near 1e-4) mixed in.
SoupMesh random_soup(std::mt19937& rng, int faces);
/// A closed sphere-like mesh (a subdivided octahedron pushed onto the unit sphere).
SoupMesh sphere_mesh(int subdivisions);

/// Barycentrics (u, v) of the closest point of (a, b, c) to p, in float64 (Ericson's regions
/// with kjit's degenerate-edge guards, as the prelude and the DSL compute them).
std::array<double, 2> closest_uv(const D3& a, const D3& b, const D3& c, const D3& p);
D3 eval(const SoupMesh& m, int f, double u, double v);
/// The smallest distance from p to any face, and the face attaining it.
std::pair<double, int> brute_closest(const SoupMesh& m, const D3& p);
/// The watertight ray/triangle test (Woop, Benthin and Wald) in float64: t of the hit of
/// o + t d with face f, or -1 for none; the hit's barycentrics (u weighs the face's first
/// vertex, v its second) where asked.
double ray_face(const SoupMesh& m, int f, const D3& o, const D3& d, double* u = nullptr, double* v = nullptr);
/// The nearest hit of the ray over every face (t, face), or (-1, -1).
std::pair<double, int> brute_ray(const SoupMesh& m, const D3& o, const D3& d, double max_t);
/// Whether p's closest point lies inside one face, away from its edges (u, v and 1 - u - v over
/// 0.02), and that face stays the closest under steps of +-2h along each axis: where float64
/// central differences of u and v with step h see one face.
bool stable_closest(const SoupMesh& m, const D3& p, double h);
/// The distance from the ray's hit point at parameter t on face f's plane to the face's
/// nearest edge (small: a ray grazing an edge, whose hit or miss rounding decides).
double edge_margin(const SoupMesh& m, int f, const D3& o, const D3& d);

}  // namespace kjit::test::geo
