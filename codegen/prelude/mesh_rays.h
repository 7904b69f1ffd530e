// kjit prelude: mesh_rays — the first-hit ray query (Warp's mesh_query_ray's discrete part):
// the walk of a mesh's ray tree (the Mesh struct's bvh_rays, which kjit::Mesh writes at the
// build of a large mesh), on the cpu several rays' walks at once, and the binary BVH's walk
// where a mesh has none. No gradient flows here (kjit/dsl/mesh.hpp).
//@chunk mesh_rays requires mesh
namespace kj {
// The ray tree (the Mesh struct's bvh_rays, kjit/dsl/mesh.hpp; kjit::Mesh writes it at the build
// of a large mesh): the binary tree taken two levels at a time, for the first-hit ray query.
// Int32 words, floats as their bit patterns; nodes and leaves start on 16-word (64-byte)
// boundaries. Word 0: the root's reference, word 1 its block word. A reference r > 0 is the
// node at word r, r < 0 the leaf at word -r - 1, 0 none. A node (32 words, two cache lines) stands for an inner node of
// the binary tree with children A and B: its four slots hold A's children then B's (a child
// that is a leaf stands for itself in its pair's first slot, the second slot empty with the
// same box), their boxes as four-lane rows lower x, y, z, upper x, y, z (words 0-23), and the
// slots' references (24-27), and the block words of the slots that are nodes (28-31). A's box is
// the union of its slots' boxes (the builder's boxes are unions, exactly). A node's children
// (leaves, then nodes) lie side by side in its block; a block word is the block's first line
// (its word / 16) shifted left by kRayBlockLineBits, above its count of lines. A leaf of n
// faces (1 to 4, in the binary leaf's order): n, then its faces' vertices as nine rows of n
// lanes (a's x, y, z, b's, c's: face k's in lane k), then the n faces' indices (10 n + 1 words).
constexpr int kRayBoxWords = 24;
constexpr int kRayRefs = 24;    // where a node's slot references start
constexpr int kRayBlocks = 28;  // where its slots' block words start
constexpr int kRayBlockLineBits = 4;
/// The deepest the ray tree's traversal stack gets: a node popped pushes at most four slots,
/// and the tree is at most 25 nodes deep (the binary tree's 48 levels, two at a time).
constexpr int kRayStack = 96;

/// The floats whose bit patterns words w[0, N) hold.
template <int N> struct RayFloats {
  float f[N];
  KJ_FUNC explicit RayFloats(const kj_int32* w) {
    kj_int32 bits[N];
    for (int i = 0; i < N; ++i) bits[i] = w[i];
    copy_bytes(f, bits);
  }
};

/// Asks the cpu for the cache lines of the block whose block word is `block` (0: none) ahead of
/// their use: the walk asks for a node's block when the node is next to pop (RayWalk), so its
/// children load side by side while it is tested, and a child's record came with it.
KJ_FUNC void ray_prefetch(const kj_int32* words, kj_int32 block) {
#if !KJ_CUDA
  const kj_int32* w = words + kj_int64(block >> kRayBlockLineBits) * 16;
  for (int i = 0; i < (block & ((1 << kRayBlockLineBits) - 1)); ++i) __builtin_prefetch(w + 16 * i);
#else
  (void)words, (void)block;
#endif
}

/// Asks the cpu for what the query's caller reads of a face the walk found: its indices at the
/// hit (stage 0), its three points a step later (stage 1), when the indices have had time to
/// come. The walk's last hit is mostly its first, and little of the walk is left after it: the
/// caller's loads of the indices, then the points, were two memory latencies one after the
/// other (a sixth of the 1 M-ray bench's time).
KJ_FUNC void ray_prefetch_face(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices, kj_int32 f,
                               int stage) {
#if !KJ_CUDA
  if (stage == 0) __builtin_prefetch(&elem(indices, 3 * kj_int64(f)));
  else
    for (int k = 0; k < 3; ++k) __builtin_prefetch(&mesh_face_point(points, indices, f, k));
#else
  (void)points, (void)indices, (void)f, (void)stage;
#endif
}

/// Where the ray (o, 1/d per axis) enters each of N boxes stored as rows of N lanes (lower x,
/// y, z, upper x, y, z), or past tmax for a box it misses: bvh_box_enter's operations, lane by
/// lane.
template <int N, class S>
KJ_FUNC void ray_boxes_enter(const float* rows, const vec_t<3, S>& o, const vec_t<3, S>& inv, S tmax, S* enter) {
  S t0[N], t1[N];
  for (int j = 0; j < N; ++j) { t0[j] = S(0); t1[j] = tmax; }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < N; ++j) ray_slab(S(rows[i * N + j]), S(rows[(3 + i) * N + j]), o.c[i], inv.c[i], tmax, t0[j], t1[j]);
  for (int j = 0; j < N; ++j) enter[j] = t0[j] <= t1[j] ? t0[j] : ray_box_missed(tmax);
}

/// Where the ray enters the four slots' boxes of the ray tree node at `node` and its two pairs'
/// boxes (the unions of their slots'): ray_boxes_enter's operations.
template <class S>
KJ_FUNC void ray_node_enter(const kj_int32* node, const vec_t<3, S>& o, const vec_t<3, S>& inv, S tmax, S* slot, S* pair) {
  const RayFloats<kRayBoxWords> box(node);
  float pairs[12];
  for (int i = 0; i < 3; ++i)
    for (int p = 0; p < 2; ++p) {
      pairs[i * 2 + p] = mesh_min(box.f[i * 4 + 2 * p], box.f[i * 4 + 2 * p + 1]);
      pairs[(3 + i) * 2 + p] = mesh_max(box.f[(3 + i) * 4 + 2 * p], box.f[(3 + i) * 4 + 2 * p + 1]);
    }
  ray_boxes_enter<4>(box.f, o, inv, tmax, slot);
  ray_boxes_enter<2>(pairs, o, inv, tmax, pair);
}

#if !KJ_CUDA && defined(__GNUC__)
// The float node test on eight-lane vectors: lanes 0-3 the slots' rows as stored, lanes 4-7
// the pairs' (each row's min or max with its lane-swapped self: lanes 4 and 6 hold pair 0's
// and pair 1's), one vector operation per step for all six boxes. The scalar test of six
// boxes was most of a cache-resident mesh's walk (Warp's 12,200-face bunny: 1.6x the binary
// traversal's time); two four-lane tests were a third of the 1 M-ray bench's walk. Same
// operations lane by lane; the selects are bit blends, so min, max and the NaN replacements
// give the scalar code's values exactly.
typedef float RayF4 __attribute__((vector_size(16)));
typedef float RayF8 __attribute__((vector_size(32)));
typedef kj_int32 RayI8 __attribute__((vector_size(32)));
/// m ? a : b lane by lane (m's lanes all ones or all zeros, as comparisons give).
KJ_FUNC RayF8 ray_pick(RayI8 m, RayF8 a, RayF8 b) { return (RayF8)((m & (RayI8)a) | (~m & (RayI8)b)); }
KJ_FUNC RayF8 ray_splat(float x) { return RayF8{x, x, x, x, x, x, x, x}; }
#if defined(__AVX__)
// minps(a, b) is a < b ? a : b lane by lane, NaNs and signed zeros included (the second operand
// unless the first is less): mesh_min's and mesh_max's selects in one instruction, where the
// blend took three (3 % of the 1 M-ray bench's kernel cpu).
KJ_FUNC RayF8 ray_min(RayF8 a, RayF8 b) { return __builtin_ia32_minps256(a, b); }  // mesh_min
KJ_FUNC RayF8 ray_max(RayF8 a, RayF8 b) { return __builtin_ia32_maxps256(b, a); }  // mesh_max
#else
KJ_FUNC RayF8 ray_min(RayF8 a, RayF8 b) { return ray_pick(a < b, a, b); }  // mesh_min
KJ_FUNC RayF8 ray_max(RayF8 a, RayF8 b) { return ray_pick(a < b, b, a); }  // mesh_max
#endif
/// Row r's lanes 0-3 twice (`a`) and with its lanes swapped in pairs (`b`): min(a, b) and
/// max(a, b) hold the slots' values in lanes 0-3 (a lane's min or max with itself) and the
/// pairs' in lanes 4 and 6, the operands in the order mesh_min and mesh_max take them.
KJ_FUNC RayF8 ray_row_twice(RayF4 r) { return __builtin_shufflevector(r, r, 0, 1, 2, 3, 0, 1, 2, 3); }
KJ_FUNC RayF8 ray_row_paired(RayF4 r) { return __builtin_shufflevector(r, r, 0, 1, 2, 3, 1, 0, 3, 2); }
/// ray_slab on eight lanes: t0, t1 narrowed by the slab between lo and hi.
KJ_FUNC void ray_slab8(RayF8 lo, RayF8 hi, float o, float inv, float tmax, RayF8& t0, RayF8& t1) {
  const RayF8 vo = ray_splat(o), vinv = ray_splat(inv);
  RayF8 a = (lo - vo) * vinv, b = (hi - vo) * vinv;
  a = ray_pick(a != a, ray_splat(-tmax - 1.0f), a);
  b = ray_pick(b != b, ray_splat(tmax + 1.0f), b);
  t0 = ray_max(t0, ray_min(a, b));
  t1 = ray_min(t1, ray_max(a, b) * ray_splat(1.00000072f));
}
KJ_FUNC void ray_node_enter(const kj_int32* node, const vec_t<3, float>& o, const vec_t<3, float>& inv, float tmax,
                            float* slot, float* pair) {
  RayF8 t0 = ray_splat(0.0f), t1 = ray_splat(tmax);
  for (int i = 0; i < 3; ++i) {
    RayF4 lo4, hi4;
    __builtin_memcpy(&lo4, node + 4 * i, sizeof lo4);
    __builtin_memcpy(&hi4, node + 4 * (3 + i), sizeof hi4);
    const RayF8 lo = ray_min(ray_row_twice(lo4), ray_row_paired(lo4));
    const RayF8 hi = ray_max(ray_row_twice(hi4), ray_row_paired(hi4));
    ray_slab8(lo, hi, o.c[i], inv.c[i], tmax, t0, t1);
  }
  const RayF8 e = ray_pick(t0 <= t1, t0, ray_splat(ray_box_missed(tmax)));
  for (int j = 0; j < 4; ++j) slot[j] = e[j];
  pair[0] = e[4];
  pair[1] = e[6];
}
#endif

/// Face k's vertices in the ray tree leaf `leaf` (its rows of n lanes).
KJ_FUNC void ray_leaf_face(const kj_int32* leaf, kj_int32 k, vec_t<3, float>* v) {
  const kj_int32 n = leaf[0];
  for (int r = 0; r < 9; ++r) {
    const RayFloats<1> x(leaf + 1 + r * n + k);
    v[r / 3].c[r % 3] = x.f[0];
  }
}

/// The nearest of the ray tree leaf's faces that the ray meets at t in [0, best) (the first of
/// them in the leaf at equal t, as the binary traversal's face by face test), best narrowed to
/// its t; -1 when none.
template <class S>
KJ_FUNC kj_int32 ray_leaf_hit(const WoopRay<S>& ray, const kj_int32* leaf, S& best) {
  const kj_int32 n = leaf[0];
  kj_int32 hit = -1;
  for (kj_int32 k = 0; k < n; ++k) {
    vec_t<3, float> v[3];
    ray_leaf_face(leaf, k, v);
    S t;
    if (ray_triangle(ray, v[0], v[1], v[2], best, t)) {
      best = t;
      hit = leaf[1 + 9 * n + k];
    }
  }
  return hit;
}

#if !KJ_CUDA && defined(__GNUC__) && defined(__FMA__)
// The float leaf test on four-lane vectors, a face a lane: ray_triangle_woop's operations lane
// by lane (its fmas as fma instructions, as __builtin_fmaf compiles with FMA), so each lane's t
// is the scalar test's bit for bit; a leaf where an edge function is exactly 0 in a face's lane
// takes the scalar test, which decides those in float64. Lanes past the leaf's faces read the
// words after their row (the next rows, the indices, the padding to the next line) and are
// masked off. Testing the faces one at a time took 5-10 % more of the 1 M-ray bench's cpu time.
typedef kj_int32 RayI4 __attribute__((vector_size(16)));
KJ_FUNC RayF4 ray_splat4(float x) { return RayF4{x, x, x, x}; }
KJ_FUNC RayF4 ray_fma4(RayF4 a, RayF4 b, RayF4 c) { return __builtin_ia32_vfmaddps(a, b, c); }
/// mesh_diff_product on four lanes.
KJ_FUNC RayF4 ray_diff_product4(RayF4 a, RayF4 b, RayF4 c, RayF4 d) {
  const RayF4 cd = c * d;
  return ray_fma4(a, b, -cd) + ray_fma4(-c, d, cd);
}
KJ_FUNC kj_int32 ray_leaf_hit(const WoopRay<float>& ray, const kj_int32* leaf, float& best) {
  const kj_int32 n = leaf[0];
  auto row = [&](int r) {
    RayF4 x;
    __builtin_memcpy(&x, leaf + 1 + r * n, sizeof x);
    return x;
  };
  const RayF4 oz = ray_splat4(ray.oz), ox = ray_splat4(ray.ox), oy = ray_splat4(ray.oy);
  const RayF4 sx = ray_splat4(ray.sx), sy = ray_splat4(ray.sy), sz = ray_splat4(ray.sz);
  const RayF4 az = row(ray.kz) - oz, bz = row(3 + ray.kz) - oz, cz = row(6 + ray.kz) - oz;
  const RayF4 ax = (row(ray.kx) - ox) - sx * az, ay = (row(ray.ky) - oy) - sy * az;
  const RayF4 bx = (row(3 + ray.kx) - ox) - sx * bz, by = (row(3 + ray.ky) - oy) - sy * bz;
  const RayF4 cx = (row(6 + ray.kx) - ox) - sx * cz, cy = (row(6 + ray.ky) - oy) - sy * cz;
  const RayF4 eu = ray_diff_product4(cx, by, cy, bx), ev = ray_diff_product4(ax, cy, ay, cx),
              ew = ray_diff_product4(bx, ay, by, ax);
  const RayF4 zero = ray_splat4(0.0f);
  const RayI4 live = RayI4{0, 1, 2, 3} < RayI4{n, n, n, n};
  const RayI4 on_edge = (eu == zero) | (ev == zero) | (ew == zero);
  const RayI4 e = live & on_edge;
  if (e[0] | e[1] | e[2] | e[3]) return ray_leaf_hit<float>(ray, leaf, best);
  const RayI4 mixed = ((eu < zero) | (ev < zero) | (ew < zero)) & ((eu > zero) | (ev > zero) | (ew > zero));
  const RayF4 det = eu + ev + ew;
  const RayF4 tt = eu * (sz * az) + ev * (sz * bz) + ew * (sz * cz);
  const RayI4 flip = det < zero, behind = (flip & (-tt < zero)) | (~flip & (tt < zero));
  const RayF4 t = tt * (ray_splat4(1.0f) / det);
  const RayI4 ok = live & ~mixed & (det != zero) & ~behind & (t >= zero);
  kj_int32 hit = -1;
  for (int k = 0; k < 4; ++k)
    if (ok[k] && t[k] < best) {
      best = t[k];
      hit = leaf[1 + 9 * n + k];
    }
  return hit;
}
#endif

/// mesh_first_hit's traversal over a ray tree, one ray's, a pop at a time (step): the binary
/// traversal's visits in its order, so the same face wins ties. That traversal pops the
/// nearer child first (the left one at equal entry), skips a box entered past the nearest hit
/// so far, and tests the children of a popped box with that hit as the bound. Here a node tests
/// its pairs' and its four slots' boxes at once and pushes the slots: the farther pair's, then
/// the nearer pair's, each pair's farther slot under its nearer. A slot's box lies in its
/// pair's, so it is entered no sooner: skipping slots entered past the nearest hit when popped
/// skips what skipping their pair's box did, and a box entered within a smaller bound has the
/// same entry parameter whatever the bound, so the slots visited come in the same order.
template <class S>
struct RayWalk {
  WoopRay<S> ray;
  vec_t<3, S> o, inv;
  S best;
  kj_int32 face, fetch;  // fetch: a face whose indices were asked for, not yet its points
  int top;
  kj_int32 stack[kRayStack];
  kj_int32 blocks[kRayStack];  // the block of each stacked node, 0 once asked for (ray_prefetch)
  S enter[kRayStack];

  /// Pushes ray tree reference r entered at t, with its block (r's children when r is a node;
  /// 0 for a leaf).
  KJ_FUNC void push(kj_int32 r, kj_int32 block, S t) {
    stack[top] = r;
    blocks[top] = block;
    enter[top++] = t;
  }
  /// Asks for the block of the reference on top of the stack, which the walk pops next: a
  /// block is asked for when its node is about to be popped, not when pushed (the walk stops
  /// at its hit with most pushed nodes left unvisited, and their blocks, up to 12 lines each,
  /// took the cpu's outstanding misses from the walk's).
  KJ_FUNC void prefetch_top(const kj_int32* words) {
    if (top > 0 && blocks[top - 1]) {
      ray_prefetch(words, blocks[top - 1]);
      blocks[top - 1] = 0;
    }
  }

  /// Starts the walk of the ray tree `words` from its root, entered at t_root (past `best`:
  /// missed).
  KJ_FUNC void start(const kj_int32* words, const WoopRay<S>& r, const vec_t<3, S>& origin, const vec_t<3, S>& inverse,
                     S bound, S t_root) {
    ray = r;
    o = origin;
    inv = inverse;
    best = bound;
    face = fetch = -1;
    top = 0;
    if (t_root <= best) push(words[0], words[1], t_root);
    prefetch_top(words);
  }

  /// Pops one reference and tests it: a leaf's faces, or a node's boxes, pushing its slots.
  /// False when nothing was left to pop (then `face` is the walk's answer).
  KJ_FUNC bool step(const kj_int32* words, const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices) {
    if (top == 0) return false;
    --top;
    const kj_int32 ref = stack[top];
    if (enter[top] > best) return true;
    if (blocks[top]) ray_prefetch(words, blocks[top]);  // not asked for yet: another node was on top
    if (fetch >= 0) {
      ray_prefetch_face(points, indices, fetch, 1);
      fetch = -1;
    }
    if (ref < 0) {
      const kj_int32 f = ray_leaf_hit(ray, words + (-kj_int64(ref) - 1), best);
      if (f >= 0) {
        face = fetch = f;
        ray_prefetch_face(points, indices, face, 0);
      }
      return true;
    }
    const kj_int32* node = words + ref;
    S slot[4], pair[2];  // A's and B's boxes (pairs) are unions of their slots'
    ray_node_enter(node, o, inv, best, slot, pair);
    const int near_pair = pair[0] <= pair[1] ? 0 : 1;
    for (int h = 0; h < 2; ++h) {
      const int p = h == 0 ? 1 - near_pair : near_pair;
      if (!(pair[p] <= best)) continue;
      const kj_int32 r0 = node[kRayRefs + 2 * p], r1 = node[kRayRefs + 2 * p + 1];
      if (r1 == 0) {  // the child is a leaf
        push(r0, 0, pair[p]);
        continue;
      }
      const S e0 = slot[2 * p], e1 = slot[2 * p + 1];
      const bool first0 = e0 <= e1;
      const int near_s = first0 ? 2 * p : 2 * p + 1, far_s = first0 ? 2 * p + 1 : 2 * p;
      const S near_t = first0 ? e0 : e1, far_t = first0 ? e1 : e0;
      if (far_t <= best) push(node[kRayRefs + far_s], node[kRayBlocks + far_s], far_t);
      if (near_t <= best) push(node[kRayRefs + near_s], node[kRayBlocks + near_s], near_t);
    }
    prefetch_top(words);
    return true;
  }
};

/// Whether `rays` holds a ray tree mesh_first_hit walks (not empty, dense).
KJ_FUNC bool ray_tree_usable(const array_t<kj_int32>& rays) {
  return rays.data && rays.ndim == 1 && rays.shape[0] > 0 && rays.strides[0] == kj_int64(sizeof(kj_int32));
}

/// The face the ray o + t d (t in [0, max_t)) meets first, or -1. Warp's mesh_query_ray's
/// discrete part. With a ray tree (`rays` not empty, dense) it walks that, else the binary
/// tree: the same face either way.
template <class S>
KJ_FUNC kj_int32 mesh_first_hit(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                                const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                                const array_t<kj_int32>& rays, const vec_t<3, S>& o, const vec_t<3, S>& d, S max_t) {
  if (!nodes.data || !(max_t > S(0))) return -1;
  vec_t<3, S> inv;
  const S t_root = ray_root_enter(bounds, o, d, max_t, inv);
  const WoopRay<S> ray(o, d);
  S best = max_t;
  if (ray_tree_usable(rays)) {
    RayWalk<S> walk;
    walk.start(rays.data, ray, o, inv, best, t_root);
    while (walk.step(rays.data, points, indices)) {
    }
    return walk.face;
  }
  kj_int32 face = -1;
  kj_int32 stack[kBvhStack];
  S enter[kBvhStack];  // where the ray enters each stacked box: skipped once a hit is nearer
  int top = 0;
  if (t_root <= best) { stack[top] = 0; enter[top++] = t_root; }
  while (top > 0) {
    --top;
    const kj_int32 n = stack[top];
    if (enter[top] > best) continue;
    const kj_int32 l = elem(nodes, 2 * kj_int64(n)), r = elem(nodes, 2 * kj_int64(n) + 1);
    if (l < 0) {
      for (kj_int32 k = -l - 1; k < -l - 1 + r; ++k) {
        const kj_int32 f = elem(nodes, kj_int64(k));
        S t;
        if (ray_triangle(ray, mesh_face_point(points, indices, f, 0), mesh_face_point(points, indices, f, 1),
                         mesh_face_point(points, indices, f, 2), best, t)) {
          best = t;
          face = f;
        }
      }
      continue;
    }
    const S tl = bvh_box_enter(bounds, l, o, inv, best), tr = bvh_box_enter(bounds, r, o, inv, best);
    const bool left_first = tl <= tr;  // the nearer box is popped first
    const kj_int32 near_n = left_first ? l : r, far_n = left_first ? r : l;
    const S near_t = left_first ? tl : tr, far_t = left_first ? tr : tl;
    if (far_t <= best) { stack[top] = far_n; enter[top++] = far_t; }
    if (near_t <= best) { stack[top] = near_n; enter[top++] = near_t; }
  }
  return face;
}

#if !KJ_CUDA
/// Rays the batched first-hit query walks at once, a pop of each in turn: the walks wait on
/// memory (a node or leaf a level, a miss for the nodes and leaves that no cache holds), and
/// the cpu overlaps the waits of independent walks.
constexpr int kRayWalks = 4;

/// mesh_first_hit for the N lanes of a lane function at once (lane l's ray o[l] + t d[l], t in
/// [0, max_t[l]); lanes whose `on` is 0 get 0): each lane's face is mesh_first_hit's, the walks
/// of the ray tree interleaved, kRayWalks at a time.
template <int N, class S>
KJ_FUNC void mesh_first_hit_lanes(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                                  const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                                  const array_t<kj_int32>& rays, const vec_t<3, S>* o, const vec_t<3, S>* d,
                                  const S* max_t, const kj_int32* on, kj_int32* face) {
  if (!ray_tree_usable(rays) || !nodes.data) {
    for (int l = 0; l < N; ++l) face[l] = on[l] ? mesh_first_hit(points, indices, bounds, nodes, rays, o[l], d[l], max_t[l]) : 0;
    return;
  }
  RayWalk<S> walk[kRayWalks];
  int lane[kRayWalks];
  int next = 0;
  // Starts the next active lane's walk as walk g; false when no lane is left.
  auto start = [&](int g) {
    for (; next < N; ++next) {
      const int l = next;
      face[l] = on[l] ? -1 : 0;
      if (!on[l] || !(max_t[l] > S(0))) continue;
      vec_t<3, S> inv;
      const S t_root = ray_root_enter(bounds, o[l], d[l], max_t[l], inv);
      walk[g].start(rays.data, WoopRay<S>(o[l], d[l]), o[l], inv, max_t[l], t_root);
      lane[g] = l;
      ++next;
      return true;
    }
    return false;
  };
  bool busy[kRayWalks];
  int live = 0;
  for (int g = 0; g < kRayWalks; ++g) live += (busy[g] = start(g));
  while (live > 0)
    for (int g = 0; g < kRayWalks; ++g) {
      if (!busy[g] || walk[g].step(rays.data, points, indices)) continue;
      face[lane[g]] = walk[g].face;
      if (!(busy[g] = start(g))) --live;
    }
}
#endif
}  // namespace kj
