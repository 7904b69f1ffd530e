// A mesh's BVH built into caller-provided buffers (kjit/runtime/internal/mesh_bvh_into.hpp),
// and the triangle boxes kjit::Mesh builds over too.
#include "kjit/runtime/internal/mesh_bvh_into.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "bvh_build.hpp"
#include "kjit/error.hpp"

namespace kjit::detail {

int64_t bvh_node_capacity(int64_t items) { return items > 0 ? 2 * items - 1 : 0; }

void triangle_boxes(const char* what, const vec3f* p, int64_t n_points, const int32_t* idx, int64_t n_indices,
                    std::vector<vec3f>& lo, std::vector<vec3f>& hi) {
  auto fail = [&](const std::string& m) { throw Error(ErrorKind::User, std::string(what) + ": " + m); };
  for (int64_t i = 0; i < n_points; ++i)
    for (int a = 0; a < 3; ++a)
      if (std::isnan(p[i].c[a]))
        fail("points[" + std::to_string(i) + "] has a NaN component; a mesh's points must be numbers");
  const size_t faces = size_t(n_indices / 3);
  lo.resize(faces);
  hi.resize(faces);
  for (size_t f = 0; f < faces; ++f) {
    const int32_t* t = idx + 3 * f;
    for (int k = 0; k < 3; ++k)
      if (t[k] < 0 || int64_t(t[k]) >= n_points)
        fail("indices[" + std::to_string(3 * f + size_t(k)) + "] = " + std::to_string(t[k]) +
             " is outside the points array (" + std::to_string(n_points) + " points)");
    // The corners in locals and each box stored once: stores into lo and hi may alias the
    // points for all the compiler knows, which kept it reloading them (a refit every step).
    const vec3f a = p[t[0]], b = p[t[1]], c = p[t[2]];
    vec3f l, h;
    for (int x = 0; x < 3; ++x) {
      l.c[x] = std::min(std::min(a.c[x], b.c[x]), c.c[x]);
      h.c[x] = std::max(std::max(a.c[x], b.c[x]), c.c[x]);
    }
    lo[f] = l;
    hi[f] = h;
  }
}

void mesh_bvh_into(const char* what, const vec3f* points, int64_t n_points, const int32_t* indices,
                   int64_t n_indices, vec3f* bounds, int32_t* links) {
  if (n_indices == 0 || n_indices % 3 != 0)
    throw Error(ErrorKind::User, std::string(what) + ": indices has " + std::to_string(n_indices) +
                                     " entries; a mesh needs three per triangle and at least one triangle");
  std::vector<vec3f> lo, hi;
  triangle_boxes(what, points, n_points, indices, n_indices, lo, hi);
  const int64_t faces = n_indices / 3, capacity = bvh_node_capacity(faces);
  const BvhTree tree = bvh_build(lo.data(), hi.data(), faces);
  KJIT_CHECK(tree.nodes <= capacity && int64_t(tree.links.size()) == 2 * tree.nodes + faces,
             "the BVH has more nodes than a binary tree over its faces can");
  std::copy(tree.bounds.begin(), tree.bounds.end(), bounds);
  std::fill(bounds + tree.bounds.size(), bounds + 2 * capacity, vec3f());
  std::copy(tree.links.begin(), tree.links.end(), links);
  std::fill(links + tree.links.size(), links + 2 * capacity + faces, 0);
}

}  // namespace kjit::detail
