// kjit/dsl/mesh.hpp — triangle meshes in kernels (Warp's wp.Mesh queries, docs/GEOMETRY.md):
// the Mesh struct a kjit::Mesh becomes at a launch, and the queries under Warp's names. A
// query is a BVH traversal that picks a face (a builtin in the prelude, no gradient) followed
// by ordinary DSL arithmetic on that face's vertices, so that u, v, t, normals and positions
// are differentiable with respect to the query AND the mesh's points (their gradients go to
// the points array's own gradient buffer, as any read through a struct field).
#pragma once

#include "kjit/dsl/aliases.hpp"
#include "kjit/dsl/functions.hpp"
#include "kjit/dsl/math.hpp"
#include "kjit/dsl/operators.hpp"
#include "kjit/dsl/structs.hpp"
#include "kjit/dsl/utility.hpp"

namespace kjit::dsl {

/// A triangle mesh as kernels see it: `KJIT_KERNEL(k, (Value<Mesh> mesh, ...))`, launched with
/// a kjit::Mesh. points and indices are the user's arrays (face f is points[indices[3f + k]]),
/// velocities may be absent; bvh_bounds and bvh_nodes are the BVH kjit::Mesh built.
///
/// The BVH layout (the contract between the host builder and the prelude's traversals): nodes
/// in depth-first order, node 0 the root, children after their parent. bvh_bounds holds the
/// lower then the upper corner of each node's box. bvh_nodes holds two int32 per node, then
/// the items: an inner node's two are its children's node indices; a leaf's are -(first + 1)
/// and its item count, `first` indexing bvh_nodes itself (the leaves' item lists start at
/// 2 * nodes and together are a permutation of the faces, or of a Bvh's boxes).
/// bvh_winding is empty unless the mesh was built with winding-number support: then three
/// vec3f per node (its triangles' summed area vectors, their area-weighted centre, and the
/// radius of a ball about that centre holding them in x), for mesh_query_point_sign_winding_number.
/// bvh_rays is the same tree two levels a node with the leaves' vertices copied in, which
/// mesh_query_ray walks instead when it is there (kjit::Mesh writes it at the build of a mesh
/// of 131,072 faces or more and drops it at a refit; empty: the binary tree; the same faces
/// either way). Its layout is internal to kjit::Mesh and the prelude.
KJIT_STRUCT(Mesh, (Array<Vec3f>, points), (Array<int>, indices), (Array<Vec3f>, velocities),
            (Array<Vec3f>, bvh_bounds), (Array<int>, bvh_nodes), (Array<Vec3f>, bvh_winding),
            (Array<int>, bvh_rays));

/// A BVH over boxes as kernels see it (launched with a kjit::Bvh): the user's boxes
/// [lowers[i], uppers[i]] and the tree's node arrays, laid out as Mesh's.
KJIT_STRUCT(Bvh, (Array<Vec3f>, lowers), (Array<Vec3f>, uppers), (Array<Vec3f>, bvh_bounds), (Array<int>, bvh_nodes));

/// Warp's mesh_query_point_t: whether a face was found, the sign (1 outside, -1 inside; 0 for
/// the _no_sign queries), the face, and the barycentrics of the closest point (u weighs the
/// face's first vertex, v its second).
KJIT_STRUCT(MeshQueryPoint, (Bool, result), (Float, sign), (Int, face), (Float, u), (Float, v));
/// Warp's mesh_query_ray_t: hit, sign (1 on the front side: counter-clockwise as seen by the
/// ray; -1 behind), face, distance t along the ray, barycentrics u, v, the face's unit normal.
KJIT_STRUCT(MeshQueryRay, (Bool, result), (Float, sign), (Int, face), (Float, t), (Float, u), (Float, v),
            (Vec3f, normal));

namespace detail {
/// triangle_closest_uv's body.
inline Vec2f triangle_closest_uv_body(const Vec3f& a, const Vec3f& b, const Vec3f& c, const Vec3f& p) {
  const Float zero = 0.0f, one = 1.0f;
  Vec3f ab = b - a, ac = c - a, ap = p - a, bp = p - b, cp = p - c, bc = c - b;
  Float d1 = dot(ab, ap), d2 = dot(ac, ap), d3 = dot(ab, bp), d4 = dot(ac, bp), d5 = dot(ab, cp), d6 = dot(ac, cp);
  Float vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
  Float lab = d1 - d3, lac = d2 - d6, lbc = (d4 - d3) + (d5 - d6);
  Float den = va + vb + vc;
  auto safe = [&](const Float& x) { return where(x > zero, x, one); };
  // No area: the closest of the three edges (the prelude's fallback).
  Float sab = dot(ab, ab), sac = dot(ac, ac), sbc = dot(bc, bc);
  Float t0 = where(sab > zero, min(max(d1 / safe(sab), zero), one), zero);
  Float t1 = where(sac > zero, min(max(d2 / safe(sac), zero), one), zero);
  Float t2 = where(sbc > zero, min(max(dot(bc, bp) / safe(sbc), zero), one), zero);
  Vec3f e0 = ap - ab * t0, e1 = ap - ac * t1, e2 = bp - bc * t2;
  Float q0 = dot(e0, e0), q1 = dot(e1, e1), q2 = dot(e2, e2);
  Bool pick0 = q0 <= q1 && q0 <= q2, pick1 = q1 <= q2;
  Float u = where(pick0, one - t0, where(pick1, one - t1, zero));
  Float v = where(pick0, t0, where(pick1, zero, one - t2));
  // The regions, lowest priority first: each select overrides what the later tests chose.
  Float inv = one / safe(den);  // Warp's rounding: the reciprocal, then two products
  Float vf = vb * inv, wf = vc * inv;
  Bool in_face = den > 1.0e-6f * sab * sac;  // not a sliver: the prelude's test
  u = where(in_face, one - vf - wf, u);
  v = where(in_face, vf, v);
  Float wbc = (d4 - d3) / safe(lbc);
  Bool in_bc = va <= zero && d4 - d3 >= zero && d5 - d6 >= zero && lbc > zero;
  u = where(in_bc, one - (one - wbc) - wbc, u);  // 0 but for rounding, as Warp's
  v = where(in_bc, one - wbc, v);
  Float wac = d2 / safe(lac);
  Bool in_ac = vb <= zero && d2 >= zero && d6 <= zero && lac > zero;
  u = where(in_ac, one - wac, u);
  v = where(in_ac, zero, v);
  Bool in_c = d6 >= zero && d5 <= d6;
  u = where(in_c, zero, u);
  v = where(in_c, zero, v);
  Float vab = d1 / safe(lab);
  Bool in_ab = vc <= zero && d1 >= zero && d3 <= zero && lab > zero;
  u = where(in_ab, one - vab, u);
  v = where(in_ab, vab, v);
  Bool in_b = d3 >= zero && d4 <= d3;
  u = where(in_b, zero, u);
  v = where(in_b, one, v);
  Bool in_a = d1 <= zero && d2 <= zero;
  u = where(in_a, one, u);
  v = where(in_a, zero, v);
  return Vec2f(one - v - (one - u - v), v);
}
}  // namespace detail

/// Barycentrics (u, v) of the point of triangle (a, b, c) closest to p (the point is
/// u a + v b + (1 - u - v) c): the prelude's kj::triangle_closest region by region, written
/// with selects so that it differentiates in a, b, c and p. Rounded as Warp's mesh point
/// queries return them (u recomputed as 1 - v - w from w = 1 - u - v), so that a port gets
/// Warp's bits. A device function, traced once per
/// module and called: inlined, its hundred operations (and their adjoint, and the adjoint of
/// their tangent) were written out again at every query of a kernel, and a module of a few
/// signed queries became a 4 MB source that took the host compiler minutes.
inline const auto triangle_closest_uv =
    func("kjit_triangle_closest_uv", [](Vec3f a, Vec3f b, Vec3f c, Vec3f p) {
      return detail::triangle_closest_uv_body(a, b, c, p);
    });

namespace detail {
/// Vertex k (0, 1, 2) of face f.
inline Vec3f mesh_vertex(const Value<Mesh>& m, const Int& f, int k, Loc loc) {
  return m.points(loc)[m.indices(loc)[f * 3 + k]];
}
}  // namespace detail

/// Point k (an index into the points array) of the mesh: Warp's mesh_get_point.
inline Vec3f mesh_get_point(const Value<Mesh>& m, const Int& index, Loc loc = Loc::here()) {
  return m.points(loc)[index];
}
/// Entry `index` of the triangle index list (face f's vertices are 3f, 3f + 1, 3f + 2):
/// Warp's mesh_get_index.
inline Int mesh_get_index(const Value<Mesh>& m, const Int& index, Loc loc = Loc::here()) {
  return m.indices(loc)[index];
}
/// The point of face f with barycentrics (u, v): u p0 + v p1 + (1 - u - v) p2.
inline Vec3f mesh_eval_position(const Value<Mesh>& m, const Int& f, const Float& u, const Float& v,
                                Loc loc = Loc::here()) {
  return detail::mesh_vertex(m, f, 0, loc) * u + detail::mesh_vertex(m, f, 1, loc) * v +
         detail::mesh_vertex(m, f, 2, loc) * (1.0f - u - v);
}
/// The velocity at the point of face f with barycentrics (u, v): u v0 + v v1 + (1 - u - v) v2 of
/// the mesh's velocities (Warp's mesh_eval_velocity; a mesh built without velocities has none to
/// read: a bounds-checked launch reports it).
inline Vec3f mesh_eval_velocity(const Value<Mesh>& m, const Int& f, const Float& u, const Float& v,
                                Loc loc = Loc::here()) {
  auto corner = [&](int k) { return m.velocities(loc)[m.indices(loc)[f * 3 + k]]; };
  return corner(0) * u + corner(1) * v + corner(2) * (1.0f - u - v);
}
/// Velocity k (an index into the velocities array) of the mesh: Warp's mesh_get_velocity.
inline Vec3f mesh_get_velocity(const Value<Mesh>& m, const Int& index, Loc loc = Loc::here()) {
  return m.velocities(loc)[index];
}
/// The unit normal of face f: normalize(cross(p1 - p0, p2 - p0)).
inline Vec3f mesh_eval_face_normal(const Value<Mesh>& m, const Int& f, Loc loc = Loc::here()) {
  Vec3f a = detail::mesh_vertex(m, f, 0, loc);
  return normalize(cross(detail::mesh_vertex(m, f, 1, loc) - a, detail::mesh_vertex(m, f, 2, loc) - a));
}

namespace detail {
/// Component k (0, 1, 2) of v, chosen by selects so that the gradient reaches that component.
inline Float ray_axis(const Vec3f& v, const Int& k) { return where(k == 0, v.x(), where(k == 1, v.y(), v.z())); }
/// a*b - c*d with the rounding error of c*d recovered by fmas, as the prelude's.
inline Float ray_diff_product(const Float& a, const Float& b, const Float& c, const Float& d) {
  Float cd = c * d;
  return fma(a, b, -cd) + fma(-c, d, cd);
}
/// a*b - c*d of float32 operands in float64 (each product exact), rounded to float32.
inline Float ray_diff_product64(const Float& a, const Float& b, const Float& c, const Float& d) {
  return Float(Double(a) * Double(b) - Double(c) * Double(d));
}

/// mesh_query_ray's result for face f (vertices a, b, c) when `hit`: the prelude's watertight
/// test (kj::ray_triangle_woop, Woop, Benthin and Wald) that chose the face, operation for
/// operation, so that t, u and v have the bits the traversal compared (and Warp's), written with
/// selects for the axis permutation and the float64 fallback so that they differentiate in the
/// ray and the vertices. sign is 1 where the edge functions' sum is positive (the face seen
/// counter-clockwise along the ray), -1 where negative, as Warp's sign's sign. A device
/// function, as triangle_closest_uv is.
inline const auto ray_face_result = func(
    "kjit_ray_face_result", [](Bool hit, Int f, Vec3f start, Vec3f dir, Vec3f a, Vec3f b, Vec3f c) {
      const Float zero = 0.0f, one = 1.0f;
      // The dominant axis kz (the first of equals), then kx, ky cyclically, swapped when the
      // ray runs along -kz so that the sheared triangle keeps its winding.
      Float ax = abs(dir.x()), ay = abs(dir.y()), az = abs(dir.z());
      Int kz = where(ay > ax, where(az > ay, Int(2), Int(1)), where(az > ax, Int(2), Int(0)));
      Int kx0 = where(kz == 2, Int(0), kz + 1);
      Int ky0 = where(kx0 == 2, Int(0), kx0 + 1);
      Float dz = ray_axis(dir, kz);
      Bool flip = dz < zero;
      Int kx = where(flip, ky0, kx0), ky = where(flip, kx0, ky0);
      Float sx = ray_axis(dir, kx) / dz, sy = ray_axis(dir, ky) / dz, sz = one / dz;
      Vec3f pa = a - start, pb = b - start, pc = c - start;
      Float paz = ray_axis(pa, kz), pbz = ray_axis(pb, kz), pcz = ray_axis(pc, kz);
      Float Ax = ray_axis(pa, kx) - sx * paz, Ay = ray_axis(pa, ky) - sy * paz;
      Float Bx = ray_axis(pb, kx) - sx * pbz, By = ray_axis(pb, ky) - sy * pbz;
      Float Cx = ray_axis(pc, kx) - sx * pcz, Cy = ray_axis(pc, ky) - sy * pcz;
      Float U = ray_diff_product(Cx, By, Cy, Bx), V = ray_diff_product(Ax, Cy, Ay, Cx);
      Float W = ray_diff_product(Bx, Ay, By, Ax);
      Bool on_edge = U == zero || V == zero || W == zero;
      U = where(on_edge, ray_diff_product64(Cx, By, Cy, Bx), U);
      V = where(on_edge, ray_diff_product64(Ax, Cy, Ay, Cx), V);
      W = where(on_edge, ray_diff_product64(Bx, Ay, By, Ax), W);
      Float det = U + V + W;
      Float T = U * (sz * paz) + V * (sz * pbz) + W * (sz * pcz);
      Float inv = one / where(det != zero, det, one);
      Float u = U * inv, v = V * inv, t = T * inv;
      Vec3f n = cross(b - a, c - a);
      Float len = length(n);
      Vec3f normal = n / where(len > zero, len, one);
      Float sign = where(det > zero, one, -1.0f);
      return Value<MeshQueryRay>(hit, where(hit, sign, zero), f, where(hit, t, zero), where(hit, u, zero),
                                 where(hit, v, zero), where(hit, normal, Vec3f(0.0f)));
    });
}  // namespace detail

/// The point of the mesh closest to `point` strictly within `max_dist`: result false (face 0,
/// u = v = 0) when no face is that close. sign is 0. Differentiable in u, v (through the
/// face's vertices and the point); face and result carry no gradient.
inline Value<MeshQueryPoint> mesh_query_point_no_sign(const Value<Mesh>& m, const Vec3f& point,
                                                      Operand<float> max_dist) {
  Loc loc = max_dist.loc;
  Int found = detail::call<int32_t>(ir::Builtin::MeshClosestFace, loc, m.points(loc).id(), m.indices(loc).id(),
                                    m.bvh_bounds(loc).id(), m.bvh_nodes(loc).id(), point.use(loc), max_dist.id);
  Bool hit = found >= 0;
  Int f = where(hit, found, 0);
  Vec2f uv = triangle_closest_uv(detail::mesh_vertex(m, f, 0, loc), detail::mesh_vertex(m, f, 1, loc),
                                 detail::mesh_vertex(m, f, 2, loc), point);
  return Value<MeshQueryPoint>(hit, 0.0f, f, where(hit, uv.x(), 0.0f), where(hit, uv.y(), 0.0f));
}

/// The first face the ray start + t dir (0 <= t < max_t) meets: result false (face 0, every
/// other field 0) when none. t, u, v and normal are differentiable in start, dir and the
/// face's vertices; face, sign and result carry no gradient.
inline Value<MeshQueryRay> mesh_query_ray(const Value<Mesh>& m, const Vec3f& start, const Vec3f& dir,
                                          Operand<float> max_t) {
  Loc loc = max_t.loc;
  Int found = detail::call<int32_t>(ir::Builtin::MeshFirstHit, loc, m.points(loc).id(), m.indices(loc).id(),
                                    m.bvh_bounds(loc).id(), m.bvh_nodes(loc).id(), m.bvh_rays(loc).id(), start.use(loc),
                                    dir.use(loc), max_t.id);
  Bool hit = found >= 0;
  Int f = where(hit, found, 0);
  return detail::ray_face_result(hit, f, start, dir, detail::mesh_vertex(m, f, 0, loc),
                                 detail::mesh_vertex(m, f, 1, loc), detail::mesh_vertex(m, f, 2, loc));
}

}  // namespace kjit::dsl

// The signed and furthest point queries, ray counts and the box and ray loops.
#include "kjit/dsl/mesh_queries.hpp"  // IWYU pragma: export
