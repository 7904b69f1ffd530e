// The per-node data of the fast winding number for kjit::Mesh's winding-number support
// (internal): what the prelude's mesh_winding_number reads from kjit::dsl::Mesh::bvh_winding.
#pragma once

#include <cstdint>
#include <vector>

#include "bvh_build.hpp"
#include "kjit/types.hpp"

namespace kjit::detail {

/// Three vec3f per node of `tree` over the mesh's faces: the sum of its triangles' area vectors
/// (half their cross products), their area-weighted centre (the mean of the nodes' vertices
/// where the area is 0), and (radius, total area, 0): a ball about the centre that holds them.
std::vector<vec3f> mesh_winding_nodes(const BvhTree& tree, const std::vector<vec3f>& points,
                                      const std::vector<int32_t>& indices);

}  // namespace kjit::detail
