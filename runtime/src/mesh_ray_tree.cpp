// kjit::Mesh's ray tree: the binary BVH rewritten two levels a node for the first-hit ray query
// (int32 words; boxes and vertices are float32 bit patterns).
#include "mesh_ray_tree.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kjit/error.hpp"

namespace kjit::detail {
namespace {

// The layout the mesh prelude reads (its kRayRefs, kRayBlocks; a leaf's rows): word 0 the
// root's reference, word 1 its block word; a node or leaf at a multiple of kAlign words (64
// bytes), so that a node fills two cache lines.
constexpr int64_t kNodeWords = 32, kRefs = 24, kBlocks = 28, kFaceWords = 10, kAlign = 16;  // kFaceWords: a face's share of its leaf
/// A block word: the block's first line (its word / kAlign) above kBlockLineBits bits of its
/// lines. A block holds at most four leaves of three lines (kBvhLeafItems faces: 41 words).
constexpr int kBlockLineBits = 4;
static_assert(kBvhLeafItems <= 4, "the prelude tests a leaf's faces as the lanes of one four-lane vector");

/// Writes (with `out` set) or only sizes the ray tree. A node's children (its slots' leaves,
/// then its slots' nodes) lie side by side in one block, which the prelude prefetches whole
/// when it pushes the node: a node's record arrives with its siblings', a level before the walk
/// reaches it, and its leaves with it.
struct RayTreeWriter {
  const BvhTree& tree;
  const vec3f* points;
  const int32_t* indices;
  int32_t* out;  // null: only count
  int64_t size = kAlign;
  bool exact = true;  // every pair's box the union of its slots'

  bool is_leaf(int32_t n) const { return tree.links[size_t(2 * n)] < 0; }
  int32_t link(int64_t i) const { return tree.links[size_t(i)]; }
  void put(int64_t at, float v) const {
    if (out) std::memcpy(out + at, &v, sizeof v);
  }
  void put_int(int64_t at, int32_t v) const {
    if (out) out[at] = v;
  }
  int64_t take(int64_t words) {
    const int64_t at = size;
    size = (at + words + kAlign - 1) / kAlign * kAlign;
    if (out) std::fill(out + at, out + size, 0);  // the padding (the array is not zeroed first)
    return at;
  }
  /// Binary leaf n's faces (their vertices as nine rows of `count` lanes, then their
  /// indices); returns its reference.
  int32_t leaf(int32_t n) {
    const int32_t first = -link(2 * n) - 1, count = link(2 * n + 1);
    const int64_t at = take(1 + kFaceWords * count);
    put_int(at, count);
    for (int32_t k = 0; out && k < count; ++k) {
      const int32_t f = link(first + k);
      put_int(at + 1 + 9 * count + k, f);
      for (int v = 0; v < 3; ++v)
        for (int c = 0; c < 3; ++c) put(at + 1 + (3 * v + c) * count + k, points[indices[3 * int64_t(f) + v]].c[c]);
    }
    return int32_t(-(at + 1));
  }
  /// Box of binary node n into lane `lane` of the rows of `lanes` lanes at word `rows`.
  void box(int64_t rows, int lanes, int lane, int32_t n) const {
    const vec3f& lo = tree.bounds[size_t(2 * n)];
    const vec3f& hi = tree.bounds[size_t(2 * n + 1)];
    for (int c = 0; c < 3; ++c) {
      put(rows + c * lanes + lane, lo.c[c]);
      put(rows + (3 + c) * lanes + lane, hi.c[c]);
    }
  }
  /// Whether binary node n's box is the union of its children's, exactly: the prelude derives
  /// a pair's box from its slots'.
  bool union_of_children(int32_t n) const {
    const int32_t l = link(2 * n), r = link(2 * n + 1);
    const vec3f *b = &tree.bounds[size_t(2 * n)], *bl = &tree.bounds[size_t(2 * l)], *br = &tree.bounds[size_t(2 * r)];
    for (int c = 0; c < 3; ++c)
      if (b[0].c[c] != std::min(bl[0].c[c], br[0].c[c]) || b[1].c[c] != std::max(bl[1].c[c], br[1].c[c])) return false;
    return true;
  }
  /// Fills the node at word `at` (taken) for inner binary node n and its children: the
  /// children's block next, then each child node's own; returns the block word of n's block.
  int32_t node(int64_t at, int32_t n) {
    int32_t slot[4] = {0, 0, 0, 0};  // binary nodes; 0 (the root, never a slot): empty
    for (int p = 0; p < 2; ++p) {
      const int32_t x = link(2 * n + p);
      if (is_leaf(x)) {
        slot[2 * p] = x;
      } else {
        exact = exact && union_of_children(x);
        slot[2 * p] = link(2 * x);
        slot[2 * p + 1] = link(2 * x + 1);
      }
    }
    for (int s = 0; s < 4; ++s) box(at, 4, s, slot[s] ? slot[s] : slot[s - 1]);
    const int64_t block = size;
    int32_t ref[4] = {0, 0, 0, 0};
    for (int s = 0; s < 4; ++s)
      if (slot[s] && is_leaf(slot[s])) ref[s] = leaf(slot[s]);
    for (int s = 0; s < 4; ++s)
      if (slot[s] && !is_leaf(slot[s])) ref[s] = int32_t(take(kNodeWords));
    const int64_t lines = std::min<int64_t>((size - block) / kAlign, (1 << kBlockLineBits) - 1);
    for (int s = 0; s < 4; ++s) {
      put_int(at + kRefs + s, ref[s]);
      if (ref[s] > 0) put_int(at + kBlocks + s, node(ref[s], slot[s]));
    }
    return int32_t((block / kAlign) << kBlockLineBits | lines);
  }
  void write() {
    for (int64_t i = 0; out && i < kAlign; ++i) out[i] = 0;
    if (is_leaf(0)) {
      put_int(0, leaf(0));
      return;
    }
    const int64_t root = take(kNodeWords);
    put_int(0, int32_t(root));
    put_int(1, node(root, 0));
  }
};

}  // namespace

int64_t mesh_ray_tree_min_faces() {
  const char* env = std::getenv("KJIT_MESH_RAY_TREE_MIN_FACES");
  if (!env) return int64_t(1) << 17;
  char* end = nullptr;
  const long long v = std::strtoll(env, &end, 10);
  if (end == env || *end != '\0' || v < 0)
    throw Error(ErrorKind::User, std::string("KJIT_MESH_RAY_TREE_MIN_FACES='") + env +
                                     "' is not a non-negative integer (the fewest faces a kjit::Mesh writes a ray tree for)");
  return int64_t(v);
}

int64_t mesh_ray_tree_words(const BvhTree& tree) {
  RayTreeWriter w{tree, nullptr, nullptr, nullptr};
  w.write();
  return w.size;
}

bool mesh_ray_tree(const BvhTree& tree, const vec3f* points, const int32_t* indices, int32_t* out) {
  RayTreeWriter w{tree, points, indices, out};
  w.write();
  return w.exact;
}

}  // namespace kjit::detail
