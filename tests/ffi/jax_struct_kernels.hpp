// Kernels of the JAX tests that take value structs (passed from JAX as dicts of their fields),
// besides the geometry tests' mesh kernels (mesh_kernels.hpp: meshk::closest, closest_loss): a
// velocity query over a kjit::dsl::Mesh, a struct of an array and plain values, structs nested
// three deep and a mesh inside a struct. Defined in
// the JAX tests' kernel library and in the C++ test that checks their handlers against launches.
#pragma once

#include <kjit/dsl.hpp>
#include <kjit/dsl/mesh.hpp>

#include "mesh_kernels.hpp"

namespace tests::structs {
using namespace kjit::dsl;
KJIT_MODULE(jax_test_structs)

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
KJIT_STRUCT(Spring, (Array<Vec3f>, rest), (Float, k));
KJIT_STRUCT(Body, (Float, scale), (Spring, spring), (Array<Float>, weights));
KJIT_STRUCT(Scene, (Vec3f, offset), (Body, body), (Spring, pull));  // structs three deep

/// out[i] = scale w_i k |d|^2 d + pull.k sin(p . p) p + offset, with d = x_i - body.spring.rest_i
/// and p = pull.rest_i: array and plain fields at every depth of a nested struct.
KJIT_KERNEL(scene_force, (Array<Vec3f> x, Value<Scene> s, Array<Vec3f> out)) {
  Int i = tid();
  Value<Body> b = s.body();
  Vec3f d = x[i] - b.spring().rest()[i];
  Vec3f p = s.pull().rest()[i];
  out[i] = d * (b.scale() * b.spring().k() * b.weights()[i] * dot(d, d)) + p * (s.pull().k() * sin(dot(p, p))) +
           s.offset();
}

KJIT_STRUCT(Target, (Float, weight), (Mesh, mesh));

/// weight * meshk::closest_loss's loss: a kjit::dsl::Mesh inside a struct (t.mesh.points, ...).
KJIT_KERNEL(target_loss, (Value<Target> t, Array<Vec3f> pts, Array<float> out)) {
  Int i = tid();
  out[i] = t.weight() * meshk::closest_point_loss(t.mesh(), pts[i]);
}
}  // namespace tests::structs
