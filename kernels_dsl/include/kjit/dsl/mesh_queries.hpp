// kjit/dsl/mesh_queries.hpp — the signed and furthest point queries, ray hit counts and the box
// and ray loops over meshes and BVHs (Warp's names; docs/GEOMETRY.md). As in kjit/dsl/mesh.hpp a
// prelude traversal picks the face (or the sign, or the next BVH leaf) without gradient, and u, v
// are recomputed in DSL arithmetic from the face's vertices. Brought in by <kjit/dsl/mesh.hpp>.
#pragma once

#include "kjit/dsl/control_flow.hpp"
#include "kjit/dsl/mesh.hpp"

namespace kjit::dsl {

namespace detail {
/// The length of the rays that count intersections (the prelude's kMeshRayFar): finite so that
/// the traversal's box test can prune, past any float32 mesh.
constexpr float kMeshRayFar = 3.0e38f;

/// A MeshQueryPoint from a traversal's face (-1: none) and its sign: u, v of the closest point of
/// that face, recomputed differentiably.
inline Value<MeshQueryPoint> mesh_point_result(const Value<Mesh>& m, const Int& found, const Vec3f& point,
                                               const Float& sign, Loc loc) {
  Bool hit = found >= 0;
  Int f = where(hit, found, 0);
  Vec2f uv = triangle_closest_uv(mesh_vertex(m, f, 0, loc), mesh_vertex(m, f, 1, loc), mesh_vertex(m, f, 2, loc), point);
  return Value<MeshQueryPoint>(hit, where(hit, sign, 0.0f), f, where(hit, uv.x(), 0.0f), where(hit, uv.y(), 0.0f));
}

/// The closest face strictly within max_dist, or -1 (mesh_query_point_no_sign's traversal).
inline Int mesh_closest(const Value<Mesh>& m, const Vec3f& point, Operand<float> max_dist) {
  Loc loc = max_dist.loc;
  return call<int32_t>(ir::Builtin::MeshClosestFace, loc, m.points(loc).id(), m.indices(loc).id(),
                       m.bvh_bounds(loc).id(), m.bvh_nodes(loc).id(), point.use(loc), max_dist.id);
}

/// A signed query: the closest face, then `sign(face)` (a traversal of its own) only on a hit.
template <class Sign>
Value<MeshQueryPoint> mesh_signed_query(const Value<Mesh>& m, const Vec3f& point, Operand<float> max_dist, Sign sign) {
  Loc loc = max_dist.loc;
  Int found = mesh_closest(m, point, max_dist);
  Var<float> s(0.0f, loc);
  If(found >= 0, [&] { s = sign(found, loc); }, loc);
  return mesh_point_result(m, found, point, s, loc);
}

/// The position of the first item of `leaf` and of the one past its last (0, 0 for leaf -1).
inline void leaf_items(const Array<int>& nodes, const Int& leaf, Var<int32_t>& k, Var<int32_t>& k_end) {
  Bool some = leaf >= 0;
  Int l = where(some, leaf, 0);
  Int first = -nodes[l * 2] - 1;
  k = where(some, first, 0);
  k_end = where(some, first + nodes[l * 2 + 1], 0);
}

/// Where a box or ray loop stands: the leaf it visits and the range of that leaf's items still
/// to test. Its Vars are the state, so it is not copied.
class LeafWalk {
 public:
  LeafWalk(const Array<int>& nodes, const Int& first_leaf, Loc loc) : leaf(first_leaf, loc), k(0, loc), k_end(0, loc) {
    leaf_items(nodes, first_leaf, k, k_end);
  }
  LeafWalk(const LeafWalk&) = delete;
  LeafWalk& operator=(const LeafWalk&) = delete;

  /// Sets `index` to the next item that `accept(item)` admits and returns true, or returns false
  /// when the walk is done; `advance(leaf)` is the next leaf to visit after `leaf` (or -1).
  template <class Advance, class Accept>
  Bool next(const Array<int>& nodes, Var<int32_t>& index, Advance advance, Accept accept) {
    Var<bool> found(false);
    While([&] { return !found && leaf >= 0; }, [&] {
      If(k < k_end, [&] {
        Int item = nodes[Int(k)];
        k = k + 1;
        If(accept(item), [&] {
          index = item;
          found = true;
        });
      }).Else([&] {
        leaf = advance(Int(leaf));
        leaf_items(nodes, leaf, k, k_end);
      });
    });
    return found;
  }

 private:
  Var<int32_t> leaf, k, k_end;
};

/// The same walk as nested loops whose conditions are free of effects (the idiom under
/// adjoints): a While over the leaves, a For over each leaf's items.
template <class Advance, class Accept, class Body>
void leaf_walk_for(const Array<int>& nodes, Advance advance, Accept accept, Body&& body) {
  Var<int32_t> leaf(advance(Int(-1)));
  While([&] { return leaf >= 0; }, [&] {
    Int l = leaf;
    Int first = -nodes[l * 2] - 1;
    For(first, first + nodes[l * 2 + 1], [&](Int k) {
      Int item = nodes[k];
      If(accept(item), [&] { body(item); });
    });
    leaf = advance(l);
  });
}

/// Whether the boxes [alo, ahi] and [blo, bhi] overlap (touching counts), as the prelude's node test.
inline Bool boxes_overlap(const Vec3f& alo, const Vec3f& ahi, const Vec3f& blo, const Vec3f& bhi) {
  return alo.x() <= bhi.x() && blo.x() <= ahi.x() && alo.y() <= bhi.y() && blo.y() <= ahi.y() && alo.z() <= bhi.z() &&
         blo.z() <= ahi.z();
}

/// Whether the ray start + t dir meets the box [lo, hi] at some t in [0, max_t]: the slab test
/// of the prelude's bvh_box_enter (a zero direction component keeps the slab when the start
/// lies in it, touching included).
inline Bool ray_meets_box(const Vec3f& start, const Vec3f& dir, const Float& max_t, const Vec3f& lo, const Vec3f& hi) {
  Float t0 = 0.0f, t1 = max_t;
  Bool out = false;
  Float s[3] = {start.x(), start.y(), start.z()}, d[3] = {dir.x(), dir.y(), dir.z()};
  Float l[3] = {lo.x(), lo.y(), lo.z()}, h[3] = {hi.x(), hi.y(), hi.z()};
  for (int i = 0; i < 3; ++i) {
    Bool flat = d[i] == 0.0f;
    Float inv = 1.0f / where(flat, Float(1.0f), d[i]);
    Float a = (l[i] - s[i]) * inv, b = (h[i] - s[i]) * inv;
    t0 = where(flat, t0, max(t0, min(a, b)));
    t1 = where(flat, t1, min(t1, max(a, b)));
    out = out || (flat && (s[i] < l[i] || s[i] > h[i]));
  }
  return !out && t0 <= t1;
}

/// The bounds of face f.
inline Bool face_overlaps(const Value<Mesh>& m, const Int& f, const Vec3f& lo, const Vec3f& hi, Loc loc) {
  Vec3f a = mesh_vertex(m, f, 0, loc), b = mesh_vertex(m, f, 1, loc), c = mesh_vertex(m, f, 2, loc);
  return boxes_overlap(min(min(a, b), c), max(max(a, b), c), lo, hi);
}
}  // namespace detail

/// mesh_query_point with Warp's default sign: -1 when at least two of the rays along +x, +y, +z
/// from the point first meet a face from behind (inside a closed, outward-facing mesh), else 1;
/// 0 on a miss. Face, u, v as mesh_query_point_no_sign (u, v differentiable); the sign has no
/// gradient and costs three ray casts.
inline Value<MeshQueryPoint> mesh_query_point(const Value<Mesh>& m, const Vec3f& point, Operand<float> max_dist) {
  return detail::mesh_signed_query(m, point, max_dist, [&](const Int&, Loc loc) {
    return detail::call<float>(ir::Builtin::MeshSignRays, loc, m.points(loc).id(), m.indices(loc).id(),
                               m.bvh_bounds(loc).id(), m.bvh_nodes(loc).id(), point.use(loc));
  });
}

/// mesh_query_point whose sign is the parity of the crossings of one ray from the point (along
/// a fixed direction near (1, 1, 1)): -1 for an odd count. One ray cast that visits every face
/// it crosses; right for closed meshes with any orientation, wrong where the ray meets an edge.
inline Value<MeshQueryPoint> mesh_query_point_sign_parity(const Value<Mesh>& m, const Vec3f& point,
                                                          Operand<float> max_dist) {
  return detail::mesh_signed_query(m, point, max_dist, [&](const Int&, Loc loc) {
    return detail::call<float>(ir::Builtin::MeshSignParity, loc, m.points(loc).id(), m.indices(loc).id(),
                               m.bvh_bounds(loc).id(), m.bvh_nodes(loc).id(), point.use(loc));
  });
}

/// mesh_query_point whose sign comes from the closest faces' normals: -1 when the point lies
/// behind the angle-weighted pseudo-normal of the faces as close as the closest one (within
/// epsilon times its mean edge length), so that points nearest an edge or vertex get the right
/// sign on closed, consistently oriented meshes. One traversal finds the closest face and
/// gathers those near it (the prelude's mesh_closest_sign_normal, which encodes both).
inline Value<MeshQueryPoint> mesh_query_point_sign_normal(const Value<Mesh>& m, const Vec3f& point,
                                                          Operand<float> max_dist, Operand<float> epsilon = 1.0e-3f) {
  Loc loc = max_dist.loc;
  Int code = detail::call<int32_t>(ir::Builtin::MeshClosestSignNormal, loc, m.points(loc).id(), m.indices(loc).id(),
                                   m.bvh_bounds(loc).id(), m.bvh_nodes(loc).id(), point.use(loc), max_dist.id,
                                   epsilon.id);
  Bool behind = code < -1;
  return detail::mesh_point_result(m, where(behind, -code - 2, code), point, where(behind, Float(-1.0f), Float(1.0f)), loc);
}

/// mesh_query_point whose sign comes from the mesh's generalized winding number around the point
/// (fast winding number: nodes further than `accuracy` times their radius count as dipoles):
/// -1 when it exceeds `threshold`. Right for closed and for slightly open or self-intersecting
/// meshes; needs a kjit::Mesh built with winding-number support (else the launch fails naming
/// the query). u, v as the unsigned query's.
inline Value<MeshQueryPoint> mesh_query_point_sign_winding_number(const Value<Mesh>& m, const Vec3f& point,
                                                                  Operand<float> max_dist, Operand<float> accuracy = 2.0f,
                                                                  Operand<float> threshold = 0.5f) {
  return detail::mesh_signed_query(m, point, max_dist, [&](const Int&, Loc loc) {
    Float w = detail::call<float>(ir::Builtin::MeshWindingNumber, loc, m.points(loc).id(), m.indices(loc).id(),
                                  m.bvh_nodes(loc).id(), m.bvh_winding(loc).id(), point.use(loc), accuracy.id);
    return where(w > Float(detail::BoundTag{}, threshold.id), Float(-1.0f), Float(1.0f));
  });
}

/// The generalized winding number of the mesh around `point`, which the sign above thresholds
/// (kjit's; Warp keeps it internal): about 1 inside a closed mesh whose faces turn
/// counter-clockwise seen from outside, 0 outside. Needs winding-number support. No gradient.
inline Float mesh_query_winding_number(const Value<Mesh>& m, const Vec3f& point, Operand<float> accuracy = 2.0f) {
  Loc loc = accuracy.loc;
  return detail::call<float>(ir::Builtin::MeshWindingNumber, loc, m.points(loc).id(), m.indices(loc).id(),
                             m.bvh_nodes(loc).id(), m.bvh_winding(loc).id(), point.use(loc), accuracy.id);
}

/// The point of the mesh furthest from `point`, if further than min_dist (Warp's
/// mesh_query_furthest_point_no_sign): a vertex of the face found, so u, v are 0 or 1 (its first
/// vertex on ties) and their gradient is 0; result false, face 0, u = v = 0 when none.
inline Value<MeshQueryPoint> mesh_query_furthest_point_no_sign(const Value<Mesh>& m, const Vec3f& point,
                                                               Operand<float> min_dist) {
  Loc loc = min_dist.loc;
  Int found = detail::call<int32_t>(ir::Builtin::MeshFurthestFace, loc, m.points(loc).id(), m.indices(loc).id(),
                                    m.bvh_bounds(loc).id(), m.bvh_nodes(loc).id(), point.use(loc), min_dist.id);
  Bool hit = found >= 0;
  Int f = where(hit, found, 0);
  auto dist2 = [&](int k) {
    Vec3f d = detail::mesh_vertex(m, f, k, loc) - point;
    return Float(dot(d, d));
  };
  Float da = dist2(0), db = dist2(1), dc = dist2(2);
  Bool pick_a = da >= db && da >= dc, pick_b = !pick_a && db >= dc;
  const Float zero = 0.0f, one = 1.0f;
  return Value<MeshQueryPoint>(hit, zero, f, where(hit && pick_a, one, zero), where(hit && pick_b, one, zero));
}

/// Whether the ray start + t dir meets any face at t in [0, max_t) (Warp's
/// mesh_query_ray_anyhit): the traversal stops at the first face it meets. No gradient.
inline Bool mesh_query_ray_anyhit(const Value<Mesh>& m, const Vec3f& start, const Vec3f& dir, Operand<float> max_t) {
  Loc loc = max_t.loc;
  return detail::call<int32_t>(ir::Builtin::MeshRayAny, loc, m.points(loc).id(), m.indices(loc).id(),
                               m.bvh_bounds(loc).id(), m.bvh_nodes(loc).id(), start.use(loc), dir.use(loc),
                               max_t.id) != 0;
}

/// How many faces the ray start + t dir (t >= 0) meets (Warp's
/// mesh_query_ray_count_intersections). No gradient.
inline Int mesh_query_ray_count_intersections(const Value<Mesh>& m, const Vec3f& start, const Vec3f& dir,
                                              Loc loc = Loc::here()) {
  return detail::call<int32_t>(ir::Builtin::MeshRayCount, loc, m.points(loc).id(), m.indices(loc).id(),
                               m.bvh_bounds(loc).id(), m.bvh_nodes(loc).id(), start.use(loc), dir.use(loc),
                               Float(detail::kMeshRayFar).use(loc));
}

namespace detail {
/// The next leaf after `after` whose box overlaps [lo, hi] (the prelude's bvh_next_leaf_box).
inline Int next_leaf_box(const Array<Vec3f>& bounds, const Array<int>& nodes, const Vec3f& lo, const Vec3f& hi,
                         const Int& after, Loc loc) {
  return call<int32_t>(ir::Builtin::BvhNextLeafBox, loc, bounds.id(), nodes.id(), lo.use(loc), hi.use(loc), after.use(loc));
}
/// The next leaf after `after` whose box the ray meets at t in [0, max_t].
inline Int next_leaf_ray(const Array<Vec3f>& bounds, const Array<int>& nodes, const Vec3f& start, const Vec3f& dir,
                         const Float& max_t, const Int& after, Loc loc) {
  return call<int32_t>(ir::Builtin::BvhNextLeafRay, loc, bounds.id(), nodes.id(), start.use(loc), dir.use(loc),
                       max_t.use(loc), after.use(loc));
}
}  // namespace detail

/// The state of a mesh_query_aabb loop (Warp's mesh_query_aabb_t): the faces whose bounds
/// overlap the box [lo, hi]. Not copied: `auto q = mesh_query_aabb(...)` makes it in place.
class MeshQueryAabb {
 public:
  MeshQueryAabb(const Value<Mesh>& m, const Vec3f& lo, const Vec3f& hi, Loc loc)
      : m_(m), lo_(lo), hi_(hi), loc_(loc),
        walk_(m.bvh_nodes(loc), detail::next_leaf_box(m.bvh_bounds(loc), m.bvh_nodes(loc), lo, hi, Int(-1), loc), loc) {}
  MeshQueryAabb(const MeshQueryAabb&) = delete;
  MeshQueryAabb& operator=(const MeshQueryAabb&) = delete;

 private:
  friend Bool mesh_query_aabb_next(MeshQueryAabb&, Var<int32_t>&);
  Value<Mesh> m_;
  Vec3f lo_, hi_;
  Loc loc_;
  detail::LeafWalk walk_;
};

/// Starts a loop over the faces whose bounds overlap the box [lo, hi] (touching counts), in the
/// tree's order; iterate it with mesh_query_aabb_next.
inline MeshQueryAabb mesh_query_aabb(const Value<Mesh>& m, const Vec3f& lo, const Vec3f& hi, Loc loc = Loc::here()) {
  return MeshQueryAabb(m, lo, hi, loc);
}

/// Sets `face` to the next face of the query and returns true, or returns false when none is
/// left. A While condition (it advances the query: under an adjoint use mesh_query_aabb_for).
inline Bool mesh_query_aabb_next(MeshQueryAabb& q, Var<int32_t>& face) {
  const Value<Mesh>& m = q.m_;
  Loc loc = q.loc_;
  return q.walk_.next(
      m.bvh_nodes(loc), face,
      [&](const Int& leaf) { return detail::next_leaf_box(m.bvh_bounds(loc), m.bvh_nodes(loc), q.lo_, q.hi_, leaf, loc); },
      [&](const Int& f) { return detail::face_overlaps(m, f, q.lo_, q.hi_, loc); });
}

/// Runs body(face) for the faces of mesh_query_aabb(m, lo, hi), in the same order, with loops
/// whose conditions have no effects: the form for kernels that need an adjoint.
template <class Body>
void mesh_query_aabb_for(const Value<Mesh>& m, const Vec3f& lo, const Vec3f& hi, Body&& body, Loc loc = Loc::here()) {
  detail::leaf_walk_for(
      m.bvh_nodes(loc), [&](const Int& leaf) { return detail::next_leaf_box(m.bvh_bounds(loc), m.bvh_nodes(loc), lo, hi, leaf, loc); },
      [&](const Int& f) { return detail::face_overlaps(m, f, lo, hi, loc); }, body);
}

/// The state of a bvh_query_aabb or bvh_query_ray loop (Warp's bvh_query_t). Not copied.
class BvhQuery {
 public:
  /// A box query: the items whose boxes overlap [lo, hi].
  BvhQuery(const Value<Bvh>& b, const Vec3f& lo, const Vec3f& hi, Loc loc)
      : b_(b), a_(lo), c_(hi), max_t_(0.0f), ray_(false), loc_(loc),
        walk_(b.bvh_nodes(loc), detail::next_leaf_box(b.bvh_bounds(loc), b.bvh_nodes(loc), lo, hi, Int(-1), loc), loc) {}
  /// A ray query: the items whose boxes the ray start + t dir meets at t in [0, max_t].
  BvhQuery(const Value<Bvh>& b, const Vec3f& start, const Vec3f& dir, const Float& max_t, Loc loc)
      : b_(b), a_(start), c_(dir), max_t_(max_t), ray_(true), loc_(loc),
        walk_(b.bvh_nodes(loc),
              detail::next_leaf_ray(b.bvh_bounds(loc), b.bvh_nodes(loc), start, dir, max_t, Int(-1), loc), loc) {}
  BvhQuery(const BvhQuery&) = delete;
  BvhQuery& operator=(const BvhQuery&) = delete;

 private:
  friend Bool bvh_query_next(BvhQuery&, Var<int32_t>&);
  Value<Bvh> b_;
  Vec3f a_, c_;  // the box's corners, or the ray's start and direction
  Float max_t_;
  bool ray_;
  Loc loc_;
  detail::LeafWalk walk_;
};

/// Starts a loop over the items whose boxes overlap [lo, hi] (touching counts); iterate it
/// with bvh_query_next.
inline BvhQuery bvh_query_aabb(const Value<Bvh>& b, const Vec3f& lo, const Vec3f& hi, Loc loc = Loc::here()) {
  return BvhQuery(b, lo, hi, loc);
}

/// Starts a loop over the items whose boxes the ray start + t dir meets at some t in
/// [0, max_t] (Warp's bvh_query_ray has no max_t: all of t >= 0, the default here).
inline BvhQuery bvh_query_ray(const Value<Bvh>& b, const Vec3f& start, const Vec3f& dir,
                              Operand<float> max_t = detail::kMeshRayFar) {
  return BvhQuery(b, start, dir, Float(detail::BoundTag{}, max_t.id), max_t.loc);
}

/// Sets `item` to the next item of a bvh_query_aabb or bvh_query_ray loop and returns true, or
/// returns false when none is left. A While condition (under an adjoint use the _for forms).
inline Bool bvh_query_next(BvhQuery& q, Var<int32_t>& item) {
  const Value<Bvh>& b = q.b_;
  Loc loc = q.loc_;
  auto advance = [&](const Int& leaf) {
    return q.ray_ ? detail::next_leaf_ray(b.bvh_bounds(loc), b.bvh_nodes(loc), q.a_, q.c_, q.max_t_, leaf, loc)
                  : detail::next_leaf_box(b.bvh_bounds(loc), b.bvh_nodes(loc), q.a_, q.c_, leaf, loc);
  };
  auto accept = [&](const Int& i) {
    Vec3f lo = b.lowers(loc)[i], hi = b.uppers(loc)[i];
    return q.ray_ ? detail::ray_meets_box(q.a_, q.c_, q.max_t_, lo, hi) : detail::boxes_overlap(lo, hi, q.a_, q.c_);
  };
  return q.walk_.next(b.bvh_nodes(loc), item, advance, accept);
}

/// Runs body(item) for the items of bvh_query_aabb(b, lo, hi), in the same order, with loops
/// whose conditions have no effects: the form for kernels that need an adjoint.
template <class Body>
void bvh_query_aabb_for(const Value<Bvh>& b, const Vec3f& lo, const Vec3f& hi, Body&& body, Loc loc = Loc::here()) {
  detail::leaf_walk_for(
      b.bvh_nodes(loc), [&](const Int& leaf) { return detail::next_leaf_box(b.bvh_bounds(loc), b.bvh_nodes(loc), lo, hi, leaf, loc); },
      [&](const Int& i) { return detail::boxes_overlap(b.lowers(loc)[i], b.uppers(loc)[i], lo, hi); }, body);
}

/// Runs body(item) for the items of bvh_query_ray(b, start, dir, max_t), in the same order, as
/// bvh_query_aabb_for.
template <class Body>
void bvh_query_ray_for(const Value<Bvh>& b, const Vec3f& start, const Vec3f& dir, const Float& max_t, Body&& body,
                       Loc loc = Loc::here()) {
  detail::leaf_walk_for(
      b.bvh_nodes(loc),
      [&](const Int& leaf) { return detail::next_leaf_ray(b.bvh_bounds(loc), b.bvh_nodes(loc), start, dir, max_t, leaf, loc); },
      [&](const Int& i) { return detail::ray_meets_box(start, dir, max_t, b.lowers(loc)[i], b.uppers(loc)[i]); }, body);
}

}  // namespace kjit::dsl
