// The host BVH builder: median splits, parallel below the top levels (bvh_build.hpp).
#include "bvh_build.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "kjit/runtime/internal/thread_pool.hpp"

namespace kjit::detail {
namespace {

struct Builder {
  const vec3f* lo;
  const vec3f* hi;
  BvhTree* tree;
  std::vector<int32_t> order;  // the items, permuted as the splits go
  int64_t items_at;            // where the item lists start in links: 2 * nodes

  struct Task {
    int64_t node, begin, end;
  };

  float centre(int32_t i, int axis) const { return 0.5f * (lo[i].c[axis] + hi[i].c[axis]); }

  /// Writes node `node` over order[begin, end) and, when `spawn` is null, its whole subtree;
  /// otherwise stops `depth` levels down and queues the subtrees there into `spawn`.
  void build(int64_t node, int64_t begin, int64_t end, int depth, std::vector<Task>* spawn) {
    vec3f blo, bhi, clo, chi;
    for (int a = 0; a < 3; ++a) {
      blo.c[a] = clo.c[a] = INFINITY;
      bhi.c[a] = chi.c[a] = -INFINITY;
    }
    for (int64_t k = begin; k < end; ++k) {
      const int32_t i = order[size_t(k)];
      for (int a = 0; a < 3; ++a) {
        blo.c[a] = std::min(blo.c[a], lo[i].c[a]);
        bhi.c[a] = std::max(bhi.c[a], hi[i].c[a]);
        const float c = centre(i, a);
        clo.c[a] = std::min(clo.c[a], c);
        chi.c[a] = std::max(chi.c[a], c);
      }
    }
    tree->bounds[size_t(2 * node)] = blo;
    tree->bounds[size_t(2 * node + 1)] = bhi;
    const int64_t n = end - begin;
    if (n <= kBvhLeafItems) {
      tree->links[size_t(2 * node)] = int32_t(-(items_at + begin) - 1);
      tree->links[size_t(2 * node + 1)] = int32_t(n);
      return;
    }
    int axis = 0;
    for (int a = 1; a < 3; ++a)
      if (chi.c[a] - clo.c[a] > chi.c[axis] - clo.c[axis]) axis = a;
    const int64_t mid = begin + n / 2;
    std::nth_element(order.begin() + begin, order.begin() + mid, order.begin() + end,
                     [&](int32_t x, int32_t y) {
                       const float cx = centre(x, axis), cy = centre(y, axis);
                       return cx < cy || (cx == cy && x < y);  // a total order: same tree every run
                     });
    const int64_t left = node + 1, right = node + 1 + bvh_node_count(mid - begin);
    tree->links[size_t(2 * node)] = int32_t(left);
    tree->links[size_t(2 * node + 1)] = int32_t(right);
    if (spawn && depth == 0) {
      spawn->push_back({left, begin, mid});
      spawn->push_back({right, mid, end});
      return;
    }
    build(left, begin, mid, depth - 1, spawn);
    build(right, mid, end, depth - 1, spawn);
  }
};

}  // namespace

int64_t bvh_node_count(int64_t n) {
  // Each level of the tree holds ranges of at most two sizes (floor and ceiling of n / 2^k):
  // count the leaves level by level, as (size, how many) pairs.
  int64_t leaves = 0;
  std::vector<std::pair<int64_t, int64_t>> level{{n, 1}}, next;
  while (!level.empty()) {
    next.clear();
    auto add = [&](int64_t size, int64_t count) {
      for (auto& e : next)
        if (e.first == size) { e.second += count; return; }
      next.push_back({size, count});
    };
    for (auto [size, count] : level) {
      if (size <= kBvhLeafItems) leaves += count;
      else add(size / 2, count), add(size - size / 2, count);
    }
    level.swap(next);
  }
  return 2 * leaves - 1;
}

BvhTree bvh_build(const vec3f* lo, const vec3f* hi, int64_t n) {
  BvhTree tree;
  tree.nodes = bvh_node_count(n);
  tree.links.assign(size_t(2 * tree.nodes + n), 0);
  tree.bounds.resize(size_t(2 * tree.nodes));
  Builder b{lo, hi, &tree, std::vector<int32_t>(size_t(n)), 2 * tree.nodes};
  for (int64_t i = 0; i < n; ++i) b.order[size_t(i)] = int32_t(i);
  ThreadPool& pool = ThreadPool::global();
  // Below 64 Ki items the whole build takes a few ms: one thread. Above, the top levels split
  // serially until there are about 4 subtrees a thread, which then build in parallel.
  if (n < 65536 || pool.size() < 2) {
    b.build(0, 0, n, 0, nullptr);
  } else {
    int depth = 0;
    while ((int64_t(2) << depth) < 4 * int64_t(pool.size()) && depth < 10) ++depth;
    std::vector<Builder::Task> tasks;
    b.build(0, 0, n, depth, &tasks);
    struct Context {
      Builder* b;
      std::vector<Builder::Task>* tasks;
    } ctx{&b, &tasks};
    // The pool's chunks are multiples of 64 indices: 64 indices a subtree.
    pool.parallel_for(64 * int64_t(tasks.size()), 64, [](void* c, int64_t begin, int64_t end) {
      auto& x = *static_cast<Context*>(c);
      for (int64_t t = begin / 64; t < (end + 63) / 64; ++t) {
        const Builder::Task& task = (*x.tasks)[size_t(t)];
        x.b->build(task.node, task.begin, task.end, 0, nullptr);
      }
    }, &ctx);
  }
  std::copy(b.order.begin(), b.order.end(), tree.links.begin() + 2 * tree.nodes);
  return tree;
}

void bvh_refit(BvhTree& tree, const vec3f* lo, const vec3f* hi) {
  for (int64_t node = tree.nodes - 1; node >= 0; --node) {
    const int32_t l = tree.links[size_t(2 * node)], r = tree.links[size_t(2 * node + 1)];
    vec3f blo, bhi;
    if (l < 0) {
      for (int a = 0; a < 3; ++a) {
        blo.c[a] = INFINITY;
        bhi.c[a] = -INFINITY;
      }
      for (int32_t k = -l - 1; k < -l - 1 + r; ++k) {
        const int32_t i = tree.links[size_t(k)];
        for (int a = 0; a < 3; ++a) {
          blo.c[a] = std::min(blo.c[a], lo[i].c[a]);
          bhi.c[a] = std::max(bhi.c[a], hi[i].c[a]);
        }
      }
    } else {
      for (int a = 0; a < 3; ++a) {
        blo.c[a] = std::min(tree.bounds[size_t(2 * l)].c[a], tree.bounds[size_t(2 * r)].c[a]);
        bhi.c[a] = std::max(tree.bounds[size_t(2 * l + 1)].c[a], tree.bounds[size_t(2 * r + 1)].c[a]);
      }
    }
    tree.bounds[size_t(2 * node)] = blo;
    tree.bounds[size_t(2 * node + 1)] = bhi;
  }
}

}  // namespace kjit::detail
