// Type rules of the mesh and BVH traversal builtins (builtins.def, "Geometry: meshes and
// BVHs"): a mesh's arrays, then the query's values.
#include "builtin_rules.hpp"

namespace kjit::ir::rules {
namespace {
/// A 1-D array of float32 3-vectors (a mesh's points, a BVH's node bounds).
bool vec3f_array(const Type& t) { return t == Type::array(Type::vector(3, Scalar::F32), 1); }
/// A 1-D array of int32 (a mesh's triangle indices, a BVH's node links).
bool int_array(const Type& t) { return t == Type::array(Type::scalar_of(Scalar::I32), 1); }
/// points, indices, node bounds, node links: the arrays of a Mesh (kjit/dsl/mesh.hpp).
bool mesh_arrays(const Type* a) {
  return vec3f_array(a[0]) && int_array(a[1]) && vec3f_array(a[2]) && int_array(a[3]);
}
}  // namespace

KJIT_RULE(mesh_point_query) {
  if (n == 6 && mesh_arrays(a) && vec_of(a[4], 3) && a[5] == scalar_like(a[4])) return Type::scalar_of(Scalar::I32);
  return fail(error, fn, "a mesh's points, indices, node bounds and node links, a 3-vector point and a distance of its scalar type", a, n);
}

KJIT_RULE(mesh_ray_query) {
  if (n == 7 && mesh_arrays(a) && vec_of(a[4], 3) && a[5] == a[4] && a[6] == scalar_like(a[4]))
    return Type::scalar_of(Scalar::I32);
  return fail(error, fn, "a mesh's points, indices, node bounds and node links, a ray's start and direction (3-vectors) and a length of their scalar type", a, n);
}

KJIT_RULE(mesh_first_hit_query) {
  if (n == 8 && mesh_arrays(a) && int_array(a[4]) && vec_of(a[5], 3) &&
      a[6] == a[5] && a[7] == scalar_like(a[5]))
    return Type::scalar_of(Scalar::I32);
  return fail(error, fn, "a mesh's points, indices, node bounds, node links and ray tree, a ray's start and direction (3-vectors) and a length of their scalar type", a, n);
}

KJIT_RULE(mesh_sign_query) {
  if (n == 5 && mesh_arrays(a) && vec_of(a[4], 3)) return scalar_like(a[4]);
  return fail(error, fn, "a mesh's points, indices, node bounds and node links and a 3-vector point", a, n);
}

KJIT_RULE(mesh_signed_point_query) {
  if (n == 7 && mesh_arrays(a) && vec_of(a[4], 3) && a[5] == scalar_like(a[4]) && a[6] == scalar_like(a[4]))
    return Type::scalar_of(Scalar::I32);
  return fail(error, fn, "a mesh's points, indices, node bounds and node links, a 3-vector point, a distance and a tolerance of its scalar type", a, n);
}

KJIT_RULE(mesh_winding_query) {
  if (n == 6 && vec3f_array(a[0]) && int_array(a[1]) && int_array(a[2]) && vec3f_array(a[3]) && vec_of(a[4], 3) &&
      a[5] == scalar_like(a[4]))
    return scalar_like(a[4]);
  return fail(error, fn, "a mesh's points, indices, node links and winding data, a 3-vector point and an accuracy of its scalar type", a, n);
}

KJIT_RULE(bvh_leaf_box_walk) {
  if (n == 5 && vec3f_array(a[0]) && int_array(a[1]) && vec_of(a[2], 3) && a[3] == a[2] &&
      a[4] == Type::scalar_of(Scalar::I32))
    return Type::scalar_of(Scalar::I32);
  return fail(error, fn, "a BVH's node bounds and node links, a box's lower and upper corners (3-vectors) and the leaf to resume after (int32)", a, n);
}

KJIT_RULE(bvh_leaf_ray_walk) {
  if (n == 6 && vec3f_array(a[0]) && int_array(a[1]) && vec_of(a[2], 3) && a[3] == a[2] &&
      a[4] == scalar_like(a[2]) && a[5] == Type::scalar_of(Scalar::I32))
    return Type::scalar_of(Scalar::I32);
  return fail(error, fn, "a BVH's node bounds and node links, a ray's start and direction (3-vectors), a length of their scalar type and the leaf to resume after (int32)", a, n);
}

}  // namespace kjit::ir::rules
