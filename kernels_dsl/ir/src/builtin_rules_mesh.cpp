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

}  // namespace kjit::ir::rules
