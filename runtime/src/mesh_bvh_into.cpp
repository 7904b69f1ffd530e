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
  // The checks run at every refit: first a pass without early exits (which the compiler can
  // vectorize), then, only when it found something, the search for the first culprit to name.
  bool nan = false;
  for (int64_t i = 0; i < n_points; ++i) nan |= (p[i].c[0] != p[i].c[0]) | (p[i].c[1] != p[i].c[1]) | (p[i].c[2] != p[i].c[2]);
  if (nan)
    for (int64_t i = 0; i < n_points; ++i)
      for (int a = 0; a < 3; ++a)
        if (std::isnan(p[i].c[a]))
          fail("points[" + std::to_string(i) + "] has a NaN component; a mesh's points must be numbers");
  const size_t faces = size_t(n_indices / 3);
  // A negative index wraps to a large unsigned one: one comparison catches both ends.
  uint64_t top = 0;
  for (int64_t k = 0; k < 3 * int64_t(faces); ++k) top = std::max(top, uint64_t(int64_t(idx[k])));
  if (top >= uint64_t(n_points))
    for (size_t k = 0; k < 3 * faces; ++k)
      if (idx[k] < 0 || int64_t(idx[k]) >= n_points)
        fail("indices[" + std::to_string(k) + "] = " + std::to_string(idx[k]) + " is outside the points array (" +
             std::to_string(n_points) + " points)");
  lo.resize(faces);
  hi.resize(faces);
  vec3f* out_lo = lo.data();
  vec3f* out_hi = hi.data();
  for (size_t f = 0; f < faces; ++f) {
    const int32_t* t = idx + 3 * f;
    // The corners in locals and each box stored once: stores into lo and hi may alias the
    // points for all the compiler knows, which kept it reloading them (a refit every step).
    // The axes spelled out: GCC at -O2 kept a loop over them.
    const vec3f a = p[t[0]], b = p[t[1]], c = p[t[2]];
    vec3f l, h;
    l.c[0] = std::min(std::min(a.c[0], b.c[0]), c.c[0]);
    l.c[1] = std::min(std::min(a.c[1], b.c[1]), c.c[1]);
    l.c[2] = std::min(std::min(a.c[2], b.c[2]), c.c[2]);
    h.c[0] = std::max(std::max(a.c[0], b.c[0]), c.c[0]);
    h.c[1] = std::max(std::max(a.c[1], b.c[1]), c.c[1]);
    h.c[2] = std::max(std::max(a.c[2], b.c[2]), c.c[2]);
    out_lo[f] = l;
    out_hi[f] = h;
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
