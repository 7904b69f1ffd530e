// Kernels of the JAX tests that take value structs (passed from JAX as dicts of their fields),
// besides the geometry tests' mesh kernels (mesh_kernels.hpp: meshk::closest, closest_loss): a
// velocity query over a kjit::dsl::Mesh, and a struct of an array and plain values. Defined in
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
}  // namespace tests::structs
