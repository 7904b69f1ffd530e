// The fast winding number's per-node data (Barill et al. 2018, first order): summed area
// vectors, centres and radii, computed bottom-up in float64 over the tree's node order.
#include "mesh_winding.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace kjit::detail {

namespace {
using D3 = std::array<double, 3>;
D3 d3(const vec3f& v) { return {v.c[0], v.c[1], v.c[2]}; }
double distance(const D3& a, const D3& b) {
  return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}
struct NodeData {
  D3 area_vector{0, 0, 0}, centre{0, 0, 0};
  double area = 0, radius = 0;
};
}  // namespace

std::vector<vec3f> mesh_winding_nodes(const BvhTree& tree, const std::vector<vec3f>& points,
                                      const std::vector<int32_t>& indices) {
  std::vector<NodeData> nd(size_t(tree.nodes));
  // Children follow their parent: from the last node back, every child is done before its parent.
  for (int64_t n = tree.nodes - 1; n >= 0; --n) {
    const int32_t l = tree.links[size_t(2 * n)], r = tree.links[size_t(2 * n + 1)];
    NodeData& d = nd[size_t(n)];
    if (l >= 0) {
      const NodeData &a = nd[size_t(l)], &b = nd[size_t(r)];
      for (int k = 0; k < 3; ++k) d.area_vector[k] = a.area_vector[k] + b.area_vector[k];
      d.area = a.area + b.area;
      for (int k = 0; k < 3; ++k)
        d.centre[k] = d.area > 0 ? (a.area * a.centre[k] + b.area * b.centre[k]) / d.area : 0.5 * (a.centre[k] + b.centre[k]);
      d.radius = std::max(distance(d.centre, a.centre) + a.radius, distance(d.centre, b.centre) + b.radius);
      continue;
    }
    D3 mean{0, 0, 0};
    for (int32_t k = -l - 1; k < -l - 1 + r; ++k) {
      const int32_t f = tree.links[size_t(k)];
      const D3 a = d3(points[size_t(indices[3 * size_t(f)])]), b = d3(points[size_t(indices[3 * size_t(f) + 1])]),
               c = d3(points[size_t(indices[3 * size_t(f) + 2])]);
      const D3 e1 = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2 = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
      const D3 half = {0.5 * (e1[1] * e2[2] - e1[2] * e2[1]), 0.5 * (e1[2] * e2[0] - e1[0] * e2[2]),
                       0.5 * (e1[0] * e2[1] - e1[1] * e2[0])};
      const double area = std::sqrt(half[0] * half[0] + half[1] * half[1] + half[2] * half[2]);
      for (int k = 0; k < 3; ++k) {
        d.area_vector[k] += half[k];
        d.centre[k] += area * (a[k] + b[k] + c[k]) / 3;
        mean[k] += (a[k] + b[k] + c[k]) / (3.0 * r);
      }
      d.area += area;
    }
    for (int k = 0; k < 3; ++k) d.centre[k] = d.area > 0 ? d.centre[k] / d.area : mean[k];
    for (int32_t k = -l - 1; k < -l - 1 + r; ++k)
      for (int v = 0; v < 3; ++v) {
        const int32_t f = tree.links[size_t(k)];
        d.radius = std::max(d.radius, distance(d.centre, d3(points[size_t(indices[3 * size_t(f) + size_t(v)])])));
      }
  }
  std::vector<vec3f> out(size_t(3 * tree.nodes));
  for (size_t n = 0; n < nd.size(); ++n) {
    const NodeData& d = nd[n];
    out[3 * n] = vec3f(float(d.area_vector[0]), float(d.area_vector[1]), float(d.area_vector[2]));
    out[3 * n + 1] = vec3f(float(d.centre[0]), float(d.centre[1]), float(d.centre[2]));
    // Rounded up a little: the float radius must still hold every vertex.
    out[3 * n + 2] = vec3f(float(d.radius * (1 + 1e-6)), float(d.area), 0.0f);
  }
  return out;
}

}  // namespace kjit::detail
