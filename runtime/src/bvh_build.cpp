// The host BVH builder: binned SAH splits, median splits past a depth, subtrees in parallel
// (bvh_build.hpp).
#include "bvh_build.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "kjit/runtime/internal/thread_pool.hpp"

namespace kjit::detail {
namespace {

/// Bins a node's items fall into along each axis when its split plane is chosen: 16 found
/// trees as good for rays as 32 at half the binning's time.
constexpr int kBins = 16;
/// A node over fewer items than this builds in the task that reached it, not in a new one;
/// binning more items than this is split across the thread pool.
constexpr int64_t kSerialItems = 65536;

struct Box {
  vec3f lo, hi;
  static Box empty() {
    Box b;
    for (int a = 0; a < 3; ++a) b.lo.c[a] = INFINITY, b.hi.c[a] = -INFINITY;
    return b;
  }
  void grow(const vec3f& l, const vec3f& h) {
    for (int a = 0; a < 3; ++a) lo.c[a] = std::min(lo.c[a], l.c[a]), hi.c[a] = std::max(hi.c[a], h.c[a]);
  }
  void grow(const Box& b) { grow(b.lo, b.hi); }
  /// Half the surface area: what SAH weighs a box's chance of being visited by.
  float area() const {
    const float x = hi.c[0] - lo.c[0], y = hi.c[1] - lo.c[1], z = hi.c[2] - lo.c[2];
    return x < 0 ? 0.0f : x * y + y * z + z * x;
  }
};

/// A node while the tree builds: a, b are its links as the tree stores them, except that a
/// leaf's first item is -(begin + 1) with `begin` its position in the item order (the item
/// lists' offset in links is known once every node is) and that, in the top part built
/// before the parallel tasks, a = kTaskNode marks where task b's subtree goes.
struct Node {
  Box box;
  int32_t a, b;
};
constexpr int32_t kTaskNode = INT32_MIN;

/// Items [begin, end) of the order, with the bounds of their boxes and of their centres.
struct Range {
  int64_t begin, end;
  Box box, cbox;
};

/// Per axis, per bin: the items' boxes, their centres' bounds and how many there are.
struct Bins {
  Box box[3][kBins], cbox[3][kBins];
  int64_t count[3][kBins];
  static Bins empty() {
    Bins b;
    for (int a = 0; a < 3; ++a)
      for (int k = 0; k < kBins; ++k) b.box[a][k] = b.cbox[a][k] = Box::empty(), b.count[a][k] = 0;
    return b;
  }
  void merge(const Bins& o) {
    for (int a = 0; a < 3; ++a)
      for (int k = 0; k < kBins; ++k)
        box[a][k].grow(o.box[a][k]), cbox[a][k].grow(o.cbox[a][k]), count[a][k] += o.count[a][k];
  }
};

/// An item as the splits permute it: its box and index together, so that binning and
/// partitioning read memory in order (a permuted index array sent every read to a random box).
struct Ref {
  vec3f lo;
  int32_t id;
  vec3f hi;
  int32_t pad;
  vec3f centre() const {
    vec3f c;
    for (int a = 0; a < 3; ++a) c.c[a] = 0.5f * (lo.c[a] + hi.c[a]);
    return c;
  }
};

/// ceil(log2(n)) for n >= 1: the most levels median splits add below a node of n items.
int ceil_log2(int64_t n) {
  int k = 0;
  while ((int64_t(1) << k) < n) ++k;
  return k;
}

struct Builder {
  std::vector<Ref> refs;  // the items, permuted as the splits go
  bool parallel;          // whether large nodes bin on the thread pool

  struct Task {
    Range range;
    int depth;
  };

  /// The scale that maps a centre's offset from the range's lowest centre to its bin, or 0
  /// for an axis that cannot split (all centres equal, or too close for a finite scale).
  static float bin_scale(const Box& cbox, int a) {
    const float extent = cbox.hi.c[a] - cbox.lo.c[a], scale = float(kBins) / extent;
    return extent > 0 && std::isfinite(scale) ? scale : 0.0f;
  }
  static int bin_of(float c, float cmin, float scale) { return std::min(kBins - 1, int((c - cmin) * scale)); }

  /// Bins items [begin, end) along every axis that can split (scale != 0: the splitter keeps the longest only).
  void bin(int64_t begin, int64_t end, const Box& cbox, const float* scale, Bins& out) const {
    for (int64_t k = begin; k < end; ++k) {
      const Ref& item = refs[size_t(k)];
      const vec3f c = item.centre();
      for (int a = 0; a < 3; ++a) {
        if (scale[a] == 0) continue;
        const int bin = bin_of(c.c[a], cbox.lo.c[a], scale[a]);
        out.box[a][bin].grow(item.lo, item.hi);
        out.cbox[a][bin].grow(c, c);
        ++out.count[a][bin];
      }
    }
  }

  /// Bins a range, on the thread pool when it is large: chunks of kSerialItems, merged in
  /// chunk order (min, max and counts: the same bins for any thread count).
  Bins bin_range(const Range& r, const float* scale) const {
    Bins bins = Bins::empty();
    const int64_t n = r.end - r.begin, chunks = (n + kSerialItems - 1) / kSerialItems;
    if (chunks < 2 || !parallel || ThreadPool::global().size() < 2) {
      bin(r.begin, r.end, r.cbox, scale, bins);
      return bins;
    }
    std::vector<Bins> parts(size_t(chunks), Bins::empty());
    struct Context {
      const Builder* b;
      const Range* r;
      const float* scale;
      std::vector<Bins>* parts;
    } ctx{this, &r, scale, &parts};
    // 64 pool indices a chunk (the pool's chunks are multiples of 64 indices).
    ThreadPool::global().parallel_for(64 * chunks, 64, [](void* c, int64_t begin, int64_t end) {
      auto& x = *static_cast<Context*>(c);
      for (int64_t t = begin / 64; t < (end + 63) / 64; ++t) {
        const int64_t from = x.r->begin + t * kSerialItems;
        x.b->bin(from, std::min(x.r->end, from + kSerialItems), x.r->cbox, x.scale, (*x.parts)[size_t(t)]);
      }
    }, &ctx);
    for (const Bins& p : parts) bins.merge(p);
    return bins;
  }

  /// The bounds of items [begin, end)'s boxes and centres.
  Range measure(int64_t begin, int64_t end) const {
    Range r{begin, end, Box::empty(), Box::empty()};
    for (int64_t k = begin; k < end; ++k) {
      const Ref& item = refs[size_t(k)];
      const vec3f c = item.centre();
      r.box.grow(item.lo, item.hi);
      r.cbox.grow(c, c);
    }
    return r;
  }

  /// Splits node `r` at `depth` into `left` and `right` (permuting its items so that the
  /// left child's come first), or returns false for a leaf: at most kBvhLeafItems items.
  bool split(const Range& r, int depth, Range& left, Range& right) {
    const int64_t n = r.end - r.begin;
    if (n <= kBvhLeafItems) return false;
    float scale[3];
    for (int a = 0; a < 3; ++a) scale[a] = bin_scale(r.cbox, a);
    // Past this depth a node splits at the median: each level then takes at most
    // ceil(log2(n)) down by one, so no leaf lies deeper than kBvhMaxDepth (the stack bound).
    if (depth + ceil_log2(n) >= kBvhMaxDepth || (scale[0] == 0 && scale[1] == 0 && scale[2] == 0))
      return median_split(r, left, right);
    // Binned SAH on the centres' longest axis only: a third of the binning, for trees whose
    // traversals cost within a few percent of all three axes' (docs/BENCHMARKS.md, "Meshes").
    int longest = 0;
    for (int a = 1; a < 3; ++a)
      if (r.cbox.hi.c[a] - r.cbox.lo.c[a] > r.cbox.hi.c[longest] - r.cbox.lo.c[longest]) longest = a;
    for (int a = 0; a < 3; ++a)
      if (a != longest) scale[a] = 0;
    // The plane between bins that minimizes area x items over both sides.
    const Bins bins = bin_range(r, scale);
    int best_axis = -1, best_plane = 0;
    float best_cost = INFINITY;
    for (int a = 0; a < 3; ++a) {
      if (scale[a] == 0) continue;
      float right_area[kBins];
      Box acc = Box::empty();
      for (int p = kBins - 1; p > 0; --p) {  // the right side of plane p: bins p .. kBins - 1
        acc.grow(bins.box[a][p]);
        right_area[p] = acc.area();
      }
      acc = Box::empty();
      int64_t count = 0;
      for (int p = 1; p < kBins; ++p) {
        acc.grow(bins.box[a][p - 1]);
        count += bins.count[a][p - 1];
        if (count == 0 || count == n) continue;
        const float cost = acc.area() * float(count) + right_area[p] * float(n - count);
        if (cost < best_cost) best_cost = cost, best_axis = a, best_plane = p;
      }
    }
    if (best_axis < 0) return median_split(r, left, right);
    left = {r.begin, r.begin, Box::empty(), Box::empty()};
    right = {r.begin, r.end, Box::empty(), Box::empty()};
    for (int p = 0; p < kBins; ++p) {
      Range& side = p < best_plane ? left : right;
      side.box.grow(bins.box[best_axis][p]);
      side.cbox.grow(bins.cbox[best_axis][p]);
      if (p < best_plane) left.end += bins.count[best_axis][p];
    }
    right.begin = left.end;
    // The binning's arithmetic, so that each item goes to the side its bin was counted on.
    const float cmin = r.cbox.lo.c[best_axis], s = scale[best_axis];
    std::partition(refs.begin() + r.begin, refs.begin() + r.end,
                   [&](const Ref& item) { return bin_of(item.centre().c[best_axis], cmin, s) < best_plane; });
    return true;
  }

  /// The median split on the centres' longest axis (ties by item index: the same tree every run).
  bool median_split(const Range& r, Range& left, Range& right) {
    int axis = 0;
    for (int a = 1; a < 3; ++a)
      if (r.cbox.hi.c[a] - r.cbox.lo.c[a] > r.cbox.hi.c[axis] - r.cbox.lo.c[axis]) axis = a;
    const int64_t mid = r.begin + (r.end - r.begin) / 2;
    std::nth_element(refs.begin() + r.begin, refs.begin() + mid, refs.begin() + r.end, [&](const Ref& x, const Ref& y) {
      const float cx = x.centre().c[axis], cy = y.centre().c[axis];
      return cx < cy || (cx == cy && x.id < y.id);
    });
    left = measure(r.begin, mid);
    right = measure(mid, r.end);
    return true;
  }

  /// Appends node `r` and its subtree to `out` in depth-first order (children's indices
  /// relative to out's start). With `tasks`, a subtree over fewer than kSerialItems items is
  /// not built but queued as a task, a kTaskNode in its place.
  void build(std::vector<Node>& out, const Range& r, int depth, std::vector<Task>* tasks) {
    const size_t me = out.size();
    if (tasks && r.end - r.begin < kSerialItems) {
      out.push_back({Box{}, kTaskNode, int32_t(tasks->size())});
      tasks->push_back({r, depth});
      return;
    }
    out.push_back({r.box, int32_t(-r.begin - 1), int32_t(r.end - r.begin)});
    Range left, right;
    if (!split(r, depth, left, right)) return;
    build(out, left, depth + 1, tasks);
    const size_t second = out.size();
    build(out, right, depth + 1, tasks);
    out[me].a = int32_t(me + 1);
    out[me].b = int32_t(second);
  }
};

/// Writes `src`'s nodes from index `at` on into the tree at `base` on, as the tree links them
/// (items_at: where the item lists start in links).
void place(const std::vector<Node>& src, BvhTree& tree, int64_t base, int64_t items_at) {
  for (size_t k = 0; k < src.size(); ++k) {
    const Node& s = src[k];
    const int64_t at = base + int64_t(k);
    tree.bounds[size_t(2 * at)] = s.box.lo;
    tree.bounds[size_t(2 * at + 1)] = s.box.hi;
    tree.links[size_t(2 * at)] = s.a < 0 ? int32_t(s.a - items_at) : int32_t(s.a + base);
    tree.links[size_t(2 * at + 1)] = s.a < 0 ? s.b : int32_t(s.b + base);
  }
}

}  // namespace

BvhTree bvh_build(const vec3f* lo, const vec3f* hi, int64_t n, bool parallel) {
  Builder b{std::vector<Ref>(size_t(n)), parallel};
  for (int64_t i = 0; i < n; ++i) b.refs[size_t(i)] = {lo[i], int32_t(i), hi[i], 0};
  const Range root = b.measure(0, n);
  // The top of the tree splits serially down to subtrees under kSerialItems items; those
  // build in parallel on the thread pool, each into a node list of its own. The tree is the
  // same for any thread count: every split depends on its node's items alone.
  std::vector<Node> top;
  std::vector<Builder::Task> tasks;
  ThreadPool& pool = ThreadPool::global();
  if (n < kSerialItems || !parallel || pool.size() < 2) {
    b.build(top, root, 0, nullptr);
  } else {
    b.build(top, root, 0, &tasks);
  }
  std::vector<std::vector<Node>> subtrees(tasks.size());
  if (!tasks.empty()) {
  struct Context {
    Builder* b;
    std::vector<Builder::Task>* tasks;
    std::vector<std::vector<Node>>* subtrees;
  } ctx{&b, &tasks, &subtrees};
  // The pool's chunks are multiples of 64 indices: 64 indices a task.
  pool.parallel_for(64 * int64_t(tasks.size()), 64, [](void* c, int64_t begin, int64_t end) {
    auto& x = *static_cast<Context*>(c);
    for (int64_t t = begin / 64; t < (end + 63) / 64; ++t) {
      const Builder::Task& task = (*x.tasks)[size_t(t)];
      x.b->build((*x.subtrees)[size_t(t)], task.range, task.depth, nullptr);
    }
  }, &ctx);
  }
  // Splices the subtrees into the top's depth-first order: each goes where its kTaskNode is.
  std::vector<int64_t> base(top.size() + 1, 0);  // each top node's index in the tree
  std::vector<int64_t> task_base(tasks.size(), 0);
  for (size_t k = 0; k < top.size(); ++k) {
    const bool task = top[k].a == kTaskNode;
    if (task) task_base[size_t(top[k].b)] = base[k];
    base[k + 1] = base[k] + (task ? int64_t(subtrees[size_t(top[k].b)].size()) : 1);
  }
  BvhTree tree;
  tree.nodes = base[top.size()];
  const int64_t items_at = 2 * tree.nodes;
  tree.links.assign(size_t(items_at + n), 0);
  tree.bounds.resize(size_t(items_at));
  for (size_t k = 0; k < top.size(); ++k) {
    if (top[k].a == kTaskNode) {
      place(subtrees[size_t(top[k].b)], tree, base[k], items_at);
      continue;
    }
    Node s = top[k];  // children indices within top: their tree indices are base[...]
    if (s.a >= 0) s.a = int32_t(base[size_t(s.a)] - base[k]), s.b = int32_t(base[size_t(s.b)] - base[k]);
    place({s}, tree, base[k], items_at);
  }
  for (int64_t k = 0; k < n; ++k) tree.links[size_t(items_at + k)] = b.refs[size_t(k)].id;
  return tree;
}

void bvh_refit(BvhTree& tree, const vec3f* lo, const vec3f* hi) {
  // The arrays' data in locals and the axes spelled out: the stores into the node bounds may
  // alias the items' boxes for all the compiler knows, and GCC at -O2 kept loops over the axes.
  const int32_t* links = tree.links.data();
  vec3f* bounds = tree.bounds.data();
  for (int64_t node = tree.nodes - 1; node >= 0; --node) {
    const int32_t l = links[2 * node], r = links[2 * node + 1];
    vec3f blo, bhi;
    if (l < 0) {
      blo = vec3f(INFINITY, INFINITY, INFINITY);
      bhi = vec3f(-INFINITY, -INFINITY, -INFINITY);
      for (int32_t k = -l - 1; k < -l - 1 + r; ++k) {
        const vec3f il = lo[links[k]], ih = hi[links[k]];
        blo.c[0] = std::min(blo.c[0], il.c[0]);
        blo.c[1] = std::min(blo.c[1], il.c[1]);
        blo.c[2] = std::min(blo.c[2], il.c[2]);
        bhi.c[0] = std::max(bhi.c[0], ih.c[0]);
        bhi.c[1] = std::max(bhi.c[1], ih.c[1]);
        bhi.c[2] = std::max(bhi.c[2], ih.c[2]);
      }
    } else {
      const vec3f ll = bounds[2 * l], lh = bounds[2 * l + 1], rl = bounds[2 * r], rh = bounds[2 * r + 1];
      blo = vec3f(std::min(ll.c[0], rl.c[0]), std::min(ll.c[1], rl.c[1]), std::min(ll.c[2], rl.c[2]));
      bhi = vec3f(std::max(lh.c[0], rh.c[0]), std::max(lh.c[1], rh.c[1]), std::max(lh.c[2], rh.c[2]));
    }
    bounds[2 * node] = blo;
    bounds[2 * node + 1] = bhi;
  }
}

}  // namespace kjit::detail
