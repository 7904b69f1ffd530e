// kjit/runtime/mesh.hpp — triangle meshes and bounding-volume hierarchies for kernels (Warp's
// wp.Mesh and wp.Bvh; docs/GEOMETRY.md). Opt-in: include it where a program builds one.
#pragma once

#include <memory>

#include "kjit/dsl/mesh.hpp"
#include "kjit/runtime/launch.hpp"
#include "kjit/runtime/ndarray.hpp"

namespace kjit {

namespace detail {
struct BvhState;
}  // namespace detail

/// A BVH over boxes, built on the host (binned SAH splits on the longest axis of the boxes'
/// centres, median ones past depth 48, at most 4 boxes a leaf; subtrees in parallel on the
/// cpu's thread pool). Its node arrays live on the device of the boxes it was built from:
/// boxes on cuda:N are copied to the host for the build and the nodes copied back (a GPU
/// build is later work).
class Bvh {
 public:
  /// No BVH: refused by a launch.
  Bvh() = default;
  /// Builds over box i = [lowers[i], uppers[i]] (1-D vec3f arrays of the same length, at least
  /// one box, no NaN). The arrays are kept (not copied): refit() rereads them.
  Bvh(const NdArray& lowers, const NdArray& uppers);
  /// Recomputes every node's box after the boxes moved (the tree is kept).
  void refit();
  /// Frees the node arrays; the BVH is empty afterwards and launches refuse it.
  void release();
  bool empty() const { return !state_; }
  const NdArray& lowers() const;
  const NdArray& uppers() const;
  /// The node arrays of kjit::dsl::Bvh (bvh_bounds: lower, upper per node; bvh_nodes: two
  /// links per node, then the leaves' item lists).
  const NdArray& node_bounds() const;
  const NdArray& node_links() const;
  /// The kernel-side struct (dsl::Bvh); a User error naming the BVH when it is empty.
  dsl::Bvh view() const;
  /// The device its arrays live on (the boxes').
  const Device& device() const { return lowers().device(); }
  /// What a launch passes for a Value<dsl::Bvh> parameter: view(), through LaunchArg's object
  /// hook, which also refuses a launch on another device than the BVH's.
  dsl::Bvh launch_value() const { return view(); }
  static constexpr const char* kObjectName = "kjit::Bvh";

 private:
  std::shared_ptr<detail::BvhState> state_;
};

/// A triangle mesh with its BVH (Warp's wp.Mesh): points (1-D vec3f), indices (1-D int32, three
/// per triangle, each in [0, points)), optional velocities (vec3f, one per point). Built on the
/// host as Bvh is; the arrays are kept, not copied: after moving the points, call refit().
class Mesh {
 public:
  /// No mesh: refused by a launch.
  Mesh() = default;
  /// With support_winding_number (Warp's flag), the build and every refit also compute the
  /// nodes' winding data (3 vec3f a node, on the host) that
  /// mesh_query_point_sign_winding_number needs.
  Mesh(const NdArray& points, const NdArray& indices, const NdArray& velocities = NdArray(),
       bool support_winding_number = false);
  /// Recomputes the BVH's boxes from the current points (a User error on NaN points). The ray
  /// tree of the build is dropped: mesh_query_ray then walks the BVH (the same results).
  void refit();
  /// Frees the BVH; the mesh is empty afterwards and launches refuse it.
  void release();
  bool empty() const { return !state_; }
  const NdArray& points() const;
  const NdArray& indices() const;
  const NdArray& velocities() const;
  /// The triangles (indices / 3).
  int64_t num_faces() const;
  const NdArray& node_bounds() const;
  const NdArray& node_links() const;
  /// The kernel-side struct (dsl::Mesh); a User error naming the mesh when it is empty.
  dsl::Mesh view() const;
  /// The device its arrays live on (the points').
  const Device& device() const { return points().device(); }
  /// What a launch passes for a Value<dsl::Mesh> parameter: view(), through LaunchArg's object
  /// hook, which also refuses a launch on another device than the mesh's.
  dsl::Mesh launch_value() const { return view(); }
  static constexpr const char* kObjectName = "kjit::Mesh";

 private:
  std::shared_ptr<detail::BvhState> state_;
};

}  // namespace kjit
