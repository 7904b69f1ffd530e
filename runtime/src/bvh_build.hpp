// The host BVH builder behind kjit::Bvh and kjit::Mesh (internal): it writes the node layout
// that kjit/dsl/mesh.hpp's Mesh struct documents, which the prelude's traversals read.
#pragma once

#include <cstdint>
#include <vector>

#include "kjit/types.hpp"

namespace kjit::detail {

/// At most this many items a leaf.
constexpr int64_t kBvhLeafItems = 4;
/// The deepest a leaf lies (the root at depth 0): a traversal's stack holds at most depth + 2
/// nodes, and the prelude's traversals hold 64 (kj::kBvhStack in the mesh chunk).
constexpr int kBvhMaxDepth = 48;

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

/// Builds the tree: binned SAH splits of the items' centres (16 bins an axis), median splits
/// where SAH could lead past kBvhMaxDepth; leaves of at most kBvhLeafItems items. The
/// subtrees under 64 Ki items build in parallel on the cpu thread pool; the tree is the same
/// for any thread count (`parallel` false: all on the calling thread, for tests to compare).
BvhTree bvh_build(const vec3f* lo, const vec3f* hi, int64_t n, bool parallel = true);
/// Recomputes every node's box from the items' boxes (leaves first: children follow parents).
void bvh_refit(BvhTree& tree, const vec3f* lo, const vec3f* hi);

}  // namespace kjit::detail
