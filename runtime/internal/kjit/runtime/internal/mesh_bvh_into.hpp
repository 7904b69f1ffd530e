// Building a triangle mesh's BVH into caller-provided, fixed-size buffers (the FFI's mesh
// handler, whose outputs XLA allocates before the call): the sizes depend on the face count
// alone, whatever shape the tree takes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/types.hpp"

namespace kjit::detail {

/// Most nodes a BVH over `items` items can have: a binary tree with at least one item a leaf
/// has at most 2 items - 1 nodes (whatever the split heuristic).
int64_t bvh_node_capacity(int64_t items);

/// The bounding boxes of the triangles of (points, indices), three indices a face. Errors
/// (User, starting with `what`) name a NaN point or an index outside the points.
void triangle_boxes(const char* what, const vec3f* points, int64_t n_points, const int32_t* indices,
                    int64_t n_indices, std::vector<vec3f>& lo, std::vector<vec3f>& hi);

/// Builds the BVH of the mesh's triangles with kjit::Mesh's builder into `bounds`
/// (2 * bvh_node_capacity(faces) vec3f: lower, upper per node) and `links`
/// (2 * bvh_node_capacity(faces) + faces int32: two per node, then the leaves' items), the
/// layout of kjit/dsl/mesh.hpp's Mesh: the tree's arrays first (its item lists start at
/// 2 * its own node count), zeros after, which no traversal reaches.
void mesh_bvh_into(const char* what, const vec3f* points, int64_t n_points, const int32_t* indices,
                   int64_t n_indices, vec3f* bounds, int32_t* links);

}  // namespace kjit::detail
