// The mesh tests' float32 arrays of a reference mesh (what a kjit::Mesh is built from).
#pragma once

#include <vector>

#include "kjit/kjit.hpp"
#include "mesh_reference.hpp"

namespace kjit::test::geo {

/// The points of `m` as a 1-D vec3f array.
inline NdArray points_of(const SoupMesh& m) {
  std::vector<vec3f> v(m.points.size() / 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = vec3f(m.points[3 * i], m.points[3 * i + 1], m.points[3 * i + 2]);
  return from_vector(v);
}

}  // namespace kjit::test::geo
