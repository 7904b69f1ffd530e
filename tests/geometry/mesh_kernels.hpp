// The kernels of the mesh tests (module geometry_mesh): queries writing their results out,
// and losses over them for the gradient tests.
#pragma once

#include "kjit/dsl.hpp"
#include "kjit/dsl/mesh.hpp"

namespace meshk {
using namespace kjit::dsl;
KJIT_MODULE(geometry_mesh)

/// mesh_query_point_no_sign per point: face (-1 on a miss) and (u, v, result).
KJIT_KERNEL(closest, (Value<Mesh> mesh, Array<Vec3f> pts, Float max_dist, Array<int> face, Array<Vec3f> uvr)) {
  Int i = tid();
  Value<MeshQueryPoint> q = mesh_query_point_no_sign(mesh, pts[i], max_dist);
  face[i] = where(q.result(), q.face(), -1);
  uvr[i] = Vec3f(q.u(), q.v(), where(q.result(), Float(1.0f), 0.0f));
}

/// mesh_query_ray per ray: face (-1 on a miss), (t, u, v), sign and normal.
KJIT_KERNEL(ray, (Value<Mesh> mesh, Array<Vec3f> starts, Array<Vec3f> dirs, Float max_t, Array<int> face,
                  Array<Vec3f> tuv, Array<float> sign, Array<Vec3f> normal)) {
  Int i = tid();
  Value<MeshQueryRay> q = mesh_query_ray(mesh, starts[i], dirs[i], max_t);
  face[i] = where(q.result(), q.face(), -1);
  tuv[i] = Vec3f(q.t(), q.u(), q.v());
  sign[i] = q.sign();
  normal[i] = q.normal();
}

/// mesh_query_ray on the threads whose index is not a multiple of 3 (the others write -2), each
/// ray with its own max_t: the forward lane function's batched first-hit call under a mask.
KJIT_KERNEL(ray_some, (Value<Mesh> mesh, Array<Vec3f> starts, Array<Vec3f> dirs, Array<float> max_t, Array<int> face,
                       Array<float> t)) {
  Int i = tid();
  face[i] = -2;
  t[i] = -2.0f;
  If(i % 3 != 0, [&] {
    Value<MeshQueryRay> q = mesh_query_ray(mesh, starts[i], dirs[i], max_t[i]);
    face[i] = where(q.result(), q.face(), -1);
    t[i] = q.t();
  });
}

/// mesh_eval_position, mesh_eval_face_normal, mesh_get_point and mesh_get_index.
KJIT_KERNEL(evals, (Value<Mesh> mesh, Array<int> faces, Array<Vec2f> uvs, Array<Vec3f> pos, Array<Vec3f> normal,
                    Array<Vec3f> point, Array<int> index)) {
  Int i = tid();
  pos[i] = mesh_eval_position(mesh, faces[i], uvs[i].x(), uvs[i].y());
  normal[i] = mesh_eval_face_normal(mesh, faces[i]);
  point[i] = mesh_get_point(mesh, i);
  index[i] = mesh_get_index(mesh, i);
}

/// mesh_eval_velocity and mesh_get_velocity.
KJIT_KERNEL(velocity_evals, (Value<Mesh> mesh, Array<int> faces, Array<Vec2f> uvs, Array<Vec3f> vel, Array<Vec3f> point_vel)) {
  Int i = tid();
  vel[i] = mesh_eval_velocity(mesh, faces[i], uvs[i].x(), uvs[i].y());
  point_vel[i] = mesh_get_velocity(mesh, i);
}

/// A loss of the point of the mesh closest to p: |x - p|^2 + 0.3 u - 0.7 v + 0.25 x.x, x its
/// position (traced inline: a C++ function, not a device function).
inline Float closest_point_loss(const Value<Mesh>& mesh, const Vec3f& p) {
  Value<MeshQueryPoint> q = mesh_query_point_no_sign(mesh, p, 1.0e6f);
  Vec3f x = mesh_eval_position(mesh, q.face(), q.u(), q.v());
  Vec3f d = x - p;
  return dot(d, d) + 0.3f * q.u() - 0.7f * q.v() + 0.25f * x.x();
}

/// closest_point_loss per point.
KJIT_KERNEL(closest_loss, (Value<Mesh> mesh, Array<Vec3f> pts, Array<float> out)) {
  Int i = tid();
  out[i] = closest_point_loss(mesh, pts[i]);
}

/// A loss of the ray hit: t + 0.4 u - 0.6 v + (0.5, -0.3, 0.2) . normal.
KJIT_KERNEL(ray_loss, (Value<Mesh> mesh, Array<Vec3f> starts, Array<Vec3f> dirs, Array<float> out)) {
  Int i = tid();
  Value<MeshQueryRay> q = mesh_query_ray(mesh, starts[i], dirs[i], 1.0e6f);
  out[i] = q.t() + 0.4f * q.u() - 0.6f * q.v() + dot(Vec3f(0.5f, -0.3f, 0.2f), q.normal());
}
/// closest_point_loss summed over the points into loss[0] (a tape's scalar loss).
KJIT_KERNEL(closest_total, (Value<Mesh> mesh, Array<Vec3f> pts, Array<float> loss)) {
  atomic_add(loss, 0, closest_point_loss(mesh, pts[tid()]));
}
}  // namespace meshk
