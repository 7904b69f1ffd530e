// Kernels of the JAX tests that take value structs (passed from JAX as dicts of their fields):
// mesh queries over a kjit::dsl::Mesh, and a struct of an array and plain values. Defined in
// the JAX tests' kernel library and in the C++ test that checks their handlers against launches.
#pragma once

#include <kjit/dsl.hpp>
#include <kjit/dsl/mesh.hpp>

namespace tests::structs {
using namespace kjit::dsl;
KJIT_MODULE(jax_test_structs)

/// mesh_query_point_no_sign per point: face (-1 on a miss) and (u, v, result).
KJIT_KERNEL(closest, (Value<Mesh> mesh, Array<Vec3f> pts, Float max_dist, Array<int> face, Array<Vec3f> uvr)) {
  Int i = tid();
  Value<MeshQueryPoint> q = mesh_query_point_no_sign(mesh, pts[i], max_dist);
  face[i] = where(q.result(), q.face(), -1);
  uvr[i] = Vec3f(q.u(), q.v(), where(q.result(), Float(1.0f), 0.0f));
}

/// A loss of the closest point x of each query p: |x - p|^2 + 0.3 u - 0.7 v + 0.25 x.x.
KJIT_KERNEL(closest_loss, (Value<Mesh> mesh, Array<Vec3f> pts, Array<float> out)) {
  Int i = tid();
  Vec3f p = pts[i];
  Value<MeshQueryPoint> q = mesh_query_point_no_sign(mesh, p, 1.0e6f);
  Vec3f x = mesh_eval_position(mesh, q.face(), q.u(), q.v());
  Vec3f d = x - p;
  out[i] = dot(d, d) + 0.3f * q.u() - 0.7f * q.v() + 0.25f * x.x();
}

/// The velocity at each query's closest point (mesh_eval_velocity).
KJIT_KERNEL(closest_velocity, (Value<Mesh> mesh, Array<Vec3f> pts, Array<Vec3f> vel)) {
  Int i = tid();
  Value<MeshQueryPoint> q = mesh_query_point_no_sign(mesh, pts[i], 1.0e6f);
  vel[i] = mesh_eval_velocity(mesh, q.face(), q.u(), q.v());
}

KJIT_STRUCT(Affine, (Float, scale), (Vec3f, shift), (Array<Float>, weights), (Int, stride));

/// out[i] = scale * weights[stride * i] * x[i] + shift: a struct of plain values and an array.
KJIT_KERNEL(affine, (Array<Vec3f> x, Value<Affine> a, Array<Vec3f> out)) {
  Int i = tid();
  out[i] = x[i] * (a.scale() * a.weights()[a.stride() * i]) + a.shift();
}
}  // namespace tests::structs
