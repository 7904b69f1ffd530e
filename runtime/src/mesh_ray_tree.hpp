// kjit::Mesh's ray tree (internal): its BVH two levels a node, with the leaves' vertices copied
// in, which the prelude's first-hit ray traversal walks (the Mesh struct's bvh_rays).
#pragma once

#include <cstdint>

#include "bvh_build.hpp"

namespace kjit::detail {

/// The fewest faces a mesh gets a ray tree for: KJIT_MESH_RAY_TREE_MIN_FACES (a non-negative
/// integer; anything else is a User error naming it), else 131,072. A smaller mesh's nodes stay
/// in the caches, where the binary walk took less time (Warp's 12,200-face bunny: the ray tree
/// took 1.1-1.2x its cpu time); from a quarter million faces on the ray tree takes 15-30 % off.
int64_t mesh_ray_tree_min_faces();

/// The int32 words of the ray tree of `tree` (a mesh's BVH).
int64_t mesh_ray_tree_words(const BvhTree& tree);

/// Writes the ray tree of `tree` over the faces (points, indices: three per face) into `out`
/// (mesh_ray_tree_words(tree) words; floats as their bit patterns): the layout the mesh
/// prelude's ray_tree_first_hit reads (nodes of 32 words standing for an inner node and its
/// children, whose four children's boxes they hold as rows of four lanes, a node's children side
/// by side in one block that the walk prefetches; leaves holding each face's index and
/// vertices). False when an inner node's box is not exactly the union of its
/// children's, which the prelude relies on (then the tree is not to be used).
bool mesh_ray_tree(const BvhTree& tree, const vec3f* points, const int32_t* indices, int32_t* out);

}  // namespace kjit::detail
