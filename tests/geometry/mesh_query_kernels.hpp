// The kernels of the signed / furthest point, ray count and box / ray loop tests (module
// geometry_mesh_queries): each writes a query's results out, and a few losses for gradients.
#pragma once

#include "kjit/dsl.hpp"
#include "kjit/dsl/mesh.hpp"

namespace meshq {
using namespace kjit::dsl;
KJIT_MODULE(geometry_mesh_queries)

/// The point queries per point, kind 0..4: mesh_query_point, _sign_normal, _sign_parity,
/// mesh_query_furthest_point_no_sign, _sign_winding_number. face (-1 on a miss), (u, v, sign).
KJIT_KERNEL(point_queries, (Value<Mesh> mesh, Array<Vec3f> pts, Float dist, Int kind, Array<int> face, Array<Vec3f> uvs)) {
  Int i = tid();
  Var<int> f = -1;
  Var<Vec3f> r = Vec3f(0.0f);
  auto put = [&](const Value<MeshQueryPoint>& q) {
    f = where(q.result(), q.face(), -1);
    r = Vec3f(q.u(), q.v(), q.sign());
  };
  If(kind == 0, [&] { put(mesh_query_point(mesh, pts[i], dist)); })
      .ElseIf(kind == 1, [&] { put(mesh_query_point_sign_normal(mesh, pts[i], dist)); })
      .ElseIf(kind == 2, [&] { put(mesh_query_point_sign_parity(mesh, pts[i], dist)); })
      .ElseIf(kind == 3, [&] { put(mesh_query_furthest_point_no_sign(mesh, pts[i], dist)); })
      .Else([&] { put(mesh_query_point_sign_winding_number(mesh, pts[i], dist)); });
  face[i] = f;
  uvs[i] = r;
}

/// mesh_query_ray_count_intersections and mesh_query_ray_anyhit (within max_t) per ray.
KJIT_KERNEL(ray_counts, (Value<Mesh> mesh, Array<Vec3f> starts, Array<Vec3f> dirs, Float max_t, Array<int> count,
                         Array<int> any)) {
  Int i = tid();
  count[i] = mesh_query_ray_count_intersections(mesh, starts[i], dirs[i]);
  any[i] = where(mesh_query_ray_anyhit(mesh, starts[i], dirs[i], max_t), Int(1), 0);
}

/// The winding number of the mesh around each point (fast, with `accuracy`).
KJIT_KERNEL(winding, (Value<Mesh> mesh, Array<Vec3f> pts, Float accuracy, Array<float> out)) {
  Int i = tid();
  out[i] = mesh_query_winding_number(mesh, pts[i], accuracy);
}

/// A loss of a signed query's closest point, kind 0..2 as point_queries, 3 the winding number's:
/// sign * (0.3 u - 0.7 v) + |x - p|^2, x the closest point.
KJIT_KERNEL(signed_loss, (Value<Mesh> mesh, Array<Vec3f> pts, Int kind, Array<float> out)) {
  Int i = tid();
  Vec3f p = pts[i];
  Var<float> l = 0.0f;
  auto put = [&](const Value<MeshQueryPoint>& q) {
    Vec3f d = mesh_eval_position(mesh, q.face(), q.u(), q.v()) - p;
    l = q.sign() * (0.3f * q.u() - 0.7f * q.v()) + dot(d, d);
  };
  If(kind == 0, [&] { put(mesh_query_point(mesh, p, 1.0e6f)); })
      .ElseIf(kind == 1, [&] { put(mesh_query_point_sign_normal(mesh, p, 1.0e6f)); })
      .ElseIf(kind == 2, [&] { put(mesh_query_point_sign_parity(mesh, p, 1.0e6f)); })
      .Else([&] { put(mesh_query_point_sign_winding_number(mesh, p, 1.0e6f)); });
  out[i] = l;
}

/// Every item a loop visits, per query: hits[q * items + item] += 1, so that an item visited
/// twice shows. kind 0: bvh_query_aabb (a = lower, b = upper), 1: bvh_query_ray (a = start,
/// b = dir, within max_t), 2 and 3: the same through the _for forms.
KJIT_KERNEL(bvh_loops, (Value<Bvh> bvh, Array<Vec3f> a, Array<Vec3f> b, Float max_t, Int kind, Int items, Array<int> hits)) {
  Int q = tid();
  auto mark = [&](const Int& item) { hits[q * items + item] += 1; };
  If(kind == 0, [&] {
    auto it = bvh_query_aabb(bvh, a[q], b[q]);
    Var<int> j = 0;
    While([&] { return bvh_query_next(it, j); }, [&] { mark(j); });
  }).ElseIf(kind == 1, [&] {
    auto it = bvh_query_ray(bvh, a[q], b[q], max_t);
    Var<int> j = 0;
    While([&] { return bvh_query_next(it, j); }, [&] { mark(j); });
  }).ElseIf(kind == 2, [&] {
    bvh_query_aabb_for(bvh, a[q], b[q], mark);
  }).Else([&] { bvh_query_ray_for(bvh, a[q], b[q], max_t, mark); });
}

/// The faces whose bounds overlap [lo, hi]: hits[q * faces + f] += 1; kind 0 the While loop,
/// 1 mesh_query_aabb_for.
KJIT_KERNEL(mesh_boxes, (Value<Mesh> mesh, Array<Vec3f> lo, Array<Vec3f> hi, Int kind, Int faces, Array<int> hits)) {
  Int q = tid();
  auto mark = [&](const Int& f) { hits[q * faces + f] += 1; };
  If(kind == 0, [&] {
    auto it = mesh_query_aabb(mesh, lo[q], hi[q]);
    Var<int> f = 0;
    While([&] { return mesh_query_aabb_next(it, f); }, [&] { mark(f); });
  }).Else([&] { mesh_query_aabb_for(mesh, lo[q], hi[q], mark); });
}

/// A loss through the _for loops, for the adjoint: over the faces whose bounds overlap
/// [p - 0.3, p + 0.3], the squared distance of p to each face's first vertex; plus over the
/// BVH items the ray from p along +z meets, dot(w[item], p).
KJIT_KERNEL(loop_loss, (Value<Mesh> mesh, Value<Bvh> bvh, Array<Vec3f> pts, Array<Vec3f> w, Array<float> out)) {
  Int i = tid();
  Vec3f p = pts[i];
  Var<float> s = 0.0f;
  mesh_query_aabb_for(mesh, p - Vec3f(0.3f), p + Vec3f(0.3f), [&](const Int& f) {
    s = s + length_sq(mesh_get_point(mesh, mesh_get_index(mesh, f * 3)) - p);
  });
  bvh_query_ray_for(bvh, p, Vec3f(0.0f, 0.0f, 1.0f), Float(1.0e6f), [&](const Int& j) { s = s + dot(w[j], p); });
  out[i] = s;
}
}  // namespace meshq
