// The host BVH builder behind kjit::Bvh and kjit::Mesh (internal): it writes the node layout
// that kjit/dsl/mesh.hpp's Mesh struct documents, which the prelude's traversals read.
#pragma once

#include <cstdint>
#include <vector>

#include "kjit/types.hpp"

namespace kjit::detail {

/// At most this many items a leaf.
constexpr int64_t kBvhLeafItems = 4;

/// A tree over n boxes [lo[i], hi[i]], in depth-first order (node 0 the root; children after
/// their parent). links holds two int32 per node, then the items: an inner node's two are its
/// children's node indices; a leaf's are -(first + 1) and its item count, where `first`
/// indexes links itself (the leaves' item lists, which together are a permutation of 0..n-1,
/// start at 2 * nodes). bounds holds lower, upper per node.
struct BvhTree {
  std::vector<int32_t> links;
  std::vector<vec3f> bounds;
  int64_t nodes = 0;
};

/// Nodes of the tree over n items (the shape depends on n alone: median splits).
int64_t bvh_node_count(int64_t n);
/// Builds the tree (median splits on the longest axis of the centres; the subtrees below the
/// top levels run in parallel on the cpu thread pool).
BvhTree bvh_build(const vec3f* lo, const vec3f* hi, int64_t n);
/// Recomputes every node's box from the items' boxes (leaves first: children follow parents).
void bvh_refit(BvhTree& tree, const vec3f* lo, const vec3f* hi);

}  // namespace kjit::detail
