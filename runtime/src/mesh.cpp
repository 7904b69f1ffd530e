// kjit::Mesh and kjit::Bvh: their checks, host builds and refits, and the structs a launch
// passes (kjit/runtime/mesh.hpp).
#include "kjit/runtime/mesh.hpp"

#include <cmath>
#include <cstdint>
#include <string>

#include "bvh_build.hpp"
#include "mesh_ray_tree.hpp"
#include "mesh_winding.hpp"
#include "kjit/error.hpp"
#include "kjit/runtime/internal/mesh_bvh_into.hpp"

namespace kjit::detail {

/// What kjit::Bvh and kjit::Mesh hold: the user's arrays, their host copies (the build's input),
/// the tree and its arrays on the user's device.
struct BvhState {
  NdArray lowers, uppers;               // Bvh
  NdArray points, indices, velocities;  // Mesh
  BvhTree tree;
  NdArray node_bounds, node_links;
  bool winding = false;  // Mesh built with winding-number support: node_winding follows the tree
  NdArray node_winding;
  std::vector<vec3f> lo, hi;  // a Mesh's triangle boxes, kept so that a refit every step allocates nothing
  NdArray ray_tree;           // a Mesh's ray tree (bvh_rays), written at its build, dropped at a refit
  std::vector<int32_t> ray_tree_host;  // its words on the host, for a mesh off the cpu
};

}  // namespace kjit::detail

namespace kjit {
namespace {

using detail::BvhState;

[[noreturn]] void fail(const std::string& message) { throw Error(ErrorKind::User, message); }

/// A 1-D array of `element` named `name` of object `what`, or a User error saying what it is.
void check_array(const char* what, const char* name, const NdArray& a, const ir::Type& element) {
  if (!a.defined()) fail(std::string(what) + ": " + name + " is not an array (an empty NdArray)");
  if (a.ndim() != 1 || a.element() != element)
    fail(std::string(what) + ": " + name + " must be a 1-D array of " + element.str() + ", not " +
         ir::Type::array(a.element(), a.ndim()).str());
}

/// The boxes of a mesh's triangles, checking points (no NaN) and indices (in range). Arrays on
/// the cpu are read in place; others through host copies.
void triangle_boxes(const BvhState& s, std::vector<vec3f>& lo, std::vector<vec3f>& hi) {
  if (s.points.device().is_cpu() && s.indices.device().is_cpu() && s.points.is_contiguous() &&
      s.indices.is_contiguous()) {
    detail::triangle_boxes("kjit::Mesh", static_cast<const vec3f*>(s.points.data()), s.points.size(),
                           static_cast<const int32_t*>(s.indices.data()), s.indices.size(), lo, hi);
    return;
  }
  const std::vector<vec3f> p = s.points.to_vector<vec3f>();
  const std::vector<int32_t> idx = s.indices.to_vector<int32_t>();
  detail::triangle_boxes("kjit::Mesh", p.data(), int64_t(p.size()), idx.data(), int64_t(idx.size()), lo, hi);
}

void check_boxes(const std::vector<vec3f>& lo, const std::vector<vec3f>& hi) {
  for (size_t i = 0; i < lo.size(); ++i)
    for (int a = 0; a < 3; ++a) {
      if (std::isnan(lo[i].c[a]) || std::isnan(hi[i].c[a]))
        fail("kjit::Bvh: box " + std::to_string(i) + " has a NaN bound; a BVH's boxes must be numbers");
      if (lo[i].c[a] > hi[i].c[a])
        fail("kjit::Bvh: box " + std::to_string(i) + " has lowers > uppers on axis " + std::to_string(a));
    }
}

/// Builds the tree over boxes [lo[i], hi[i]] (or, with `build` false, refits the one built)
/// on the host and gives its arrays to the object's device. A refit copies the new bounds into
/// the node arrays in place: a loop that refits every step allocates nothing.
void fit(BvhState& s, const std::vector<vec3f>& lo, const std::vector<vec3f>& hi, const Device& device, bool build) {
  if (build) {
    s.tree = detail::bvh_build(lo.data(), hi.data(), int64_t(lo.size()));
    NdArray bounds = from_vector(s.tree.bounds), links = from_vector(s.tree.links);
    s.node_bounds = device.is_cpu() ? bounds : bounds.to(device);
    s.node_links = device.is_cpu() ? links : links.to(device);
    return;
  }
  detail::bvh_refit(s.tree, lo.data(), hi.data());
  s.node_bounds.copy_from(NdArray::view(s.tree.bounds.data(), ir_type_of<vec3f>(), {int64_t(s.tree.bounds.size())}, Device::cpu()));
}

/// A mesh with winding-number support: recomputes the nodes' winding data from the current points
/// (after a build or refit) on the host and gives it to the mesh's device, in place after a refit.
void fit_winding(BvhState& s) {
  if (!s.winding) return;
  std::vector<vec3f> w =
      detail::mesh_winding_nodes(s.tree, s.points.to_vector<vec3f>(), s.indices.to_vector<int32_t>());
  NdArray host = NdArray::view(w.data(), ir_type_of<vec3f>(), {int64_t(w.size())}, Device::cpu());
  const Device& device = s.points.device();
  if (s.node_winding.defined() && s.node_winding.size() == int64_t(w.size())) {
    s.node_winding.copy_from(host);
    return;
  }
  NdArray fresh = from_vector(w);
  s.node_winding = device.is_cpu() ? fresh : fresh.to(device);
}

/// A mesh at its build: writes its ray tree from the tree and the points and gives it to the
/// mesh's device (a refit drops it: Mesh::refit). A mesh of fewer faces than
/// mesh_ray_tree_min_faces() (cache-resident: the binary walk is faster), a tree too large for the ray
/// tree's int32 word references, or whose boxes are not unions of their children's, gets none:
/// mesh_query_ray then walks the binary tree.
void fit_ray_tree(BvhState& s) {
  if (s.indices.size() / 3 < detail::mesh_ray_tree_min_faces()) {
    s.ray_tree = NdArray();
    return;
  }
  const int64_t words = detail::mesh_ray_tree_words(s.tree);
  if (words > INT32_MAX) {
    s.ray_tree = NdArray();
    return;
  }
  std::vector<vec3f> p_host;
  std::vector<int32_t> i_host;
  const vec3f* p = static_cast<const vec3f*>(s.points.data());
  const int32_t* idx = static_cast<const int32_t*>(s.indices.data());
  if (!s.points.device().is_cpu() || !s.points.is_contiguous()) p = (p_host = s.points.to_vector<vec3f>()).data();
  if (!s.indices.device().is_cpu() || !s.indices.is_contiguous())
    idx = (i_host = s.indices.to_vector<int32_t>()).data();
  const Device& device = s.points.device();
  s.ray_tree = empty<int32_t>({words}, device);
  if (device.is_cpu()) {
    if (!detail::mesh_ray_tree(s.tree, p, idx, static_cast<int32_t*>(s.ray_tree.data()))) s.ray_tree = NdArray();
    return;
  }
  s.ray_tree_host.resize(size_t(words));
  if (!detail::mesh_ray_tree(s.tree, p, idx, s.ray_tree_host.data())) {
    s.ray_tree = NdArray();
    return;
  }
  s.ray_tree.copy_from(NdArray::view(s.ray_tree_host.data(), ir_type_of<int32_t>(), {words}, Device::cpu()));
}

const BvhState& live(const std::shared_ptr<BvhState>& s, const char* what) {
  if (!s) fail(std::string(what) + " is empty (default-constructed, moved from or released): build one before passing it to a launch");
  return *s;
}

}  // namespace

// ---- Bvh ----

Bvh::Bvh(const NdArray& lowers, const NdArray& uppers) {
  const ir::Type v3 = ir_type_of<vec3f>();
  check_array("kjit::Bvh", "lowers", lowers, v3);
  check_array("kjit::Bvh", "uppers", uppers, v3);
  if (lowers.size() != uppers.size())
    fail("kjit::Bvh: lowers has " + std::to_string(lowers.size()) + " boxes but uppers " + std::to_string(uppers.size()));
  if (lowers.size() == 0) fail("kjit::Bvh: no boxes (lowers is empty); a BVH needs at least one");
  if (lowers.device() != uppers.device())
    fail("kjit::Bvh: lowers is on " + lowers.device().name() + " but uppers on " + uppers.device().name());
  auto s = std::make_shared<BvhState>();
  s->lowers = lowers;
  s->uppers = uppers;
  const std::vector<vec3f> lo = lowers.to_vector<vec3f>(), hi = uppers.to_vector<vec3f>();
  check_boxes(lo, hi);
  fit(*s, lo, hi, lowers.device(), true);
  state_ = std::move(s);
}

void Bvh::refit() {
  live(state_, "kjit::Bvh");
  BvhState& s = *state_;
  const std::vector<vec3f> lo = s.lowers.to_vector<vec3f>(), hi = s.uppers.to_vector<vec3f>();
  check_boxes(lo, hi);
  fit(s, lo, hi, s.lowers.device(), false);
}

void Bvh::release() { state_.reset(); }
const NdArray& Bvh::lowers() const { return live(state_, "kjit::Bvh").lowers; }
const NdArray& Bvh::uppers() const { return live(state_, "kjit::Bvh").uppers; }
const NdArray& Bvh::node_bounds() const { return live(state_, "kjit::Bvh").node_bounds; }
const NdArray& Bvh::node_links() const { return live(state_, "kjit::Bvh").node_links; }

dsl::Bvh Bvh::view() const {
  const BvhState& s = live(state_, "kjit::Bvh");
  dsl::Bvh v;
  v.lowers = s.lowers;
  v.uppers = s.uppers;
  v.bvh_bounds = s.node_bounds;
  v.bvh_nodes = s.node_links;
  return v;
}

// ---- Mesh ----

Mesh::Mesh(const NdArray& points, const NdArray& indices, const NdArray& velocities, bool support_winding_number) {
  check_array("kjit::Mesh", "points", points, ir_type_of<vec3f>());
  check_array("kjit::Mesh", "indices", indices, ir_type_of<int32_t>());
  if (indices.size() == 0 || indices.size() % 3 != 0)
    fail("kjit::Mesh: indices has " + std::to_string(indices.size()) +
         " entries; a mesh needs three per triangle and at least one triangle");
  if (points.device() != indices.device())
    fail("kjit::Mesh: points is on " + points.device().name() + " but indices on " + indices.device().name());
  if (velocities.defined()) {
    check_array("kjit::Mesh", "velocities", velocities, ir_type_of<vec3f>());
    if (velocities.size() != points.size())
      fail("kjit::Mesh: velocities has " + std::to_string(velocities.size()) + " entries but points " +
           std::to_string(points.size()) + "; give one velocity per point");
    if (velocities.device() != points.device())
      fail("kjit::Mesh: velocities is on " + velocities.device().name() + " but points on " + points.device().name());
  }
  auto s = std::make_shared<BvhState>();
  s->points = points;
  s->indices = indices;
  s->velocities = velocities;
  s->winding = support_winding_number;
  std::vector<vec3f> lo, hi;
  triangle_boxes(*s, lo, hi);
  fit(*s, lo, hi, points.device(), true);
  fit_winding(*s);
  fit_ray_tree(*s);
  state_ = std::move(s);
}

void Mesh::refit() {
  live(state_, "kjit::Mesh");
  BvhState& s = *state_;
  triangle_boxes(s, s.lo, s.hi);
  fit(s, s.lo, s.hi, s.points.device(), false);
  fit_winding(s);
  // Rewriting the ray tree would triple a refit's cost (about twice the boxes' own work): a
  // mesh that moves walks the binary tree, the same results, reading its current points.
  s.ray_tree = NdArray();
  s.ray_tree_host = {};
}

void Mesh::release() { state_.reset(); }
const NdArray& Mesh::points() const { return live(state_, "kjit::Mesh").points; }
const NdArray& Mesh::indices() const { return live(state_, "kjit::Mesh").indices; }
const NdArray& Mesh::velocities() const { return live(state_, "kjit::Mesh").velocities; }
int64_t Mesh::num_faces() const { return live(state_, "kjit::Mesh").indices.size() / 3; }
const NdArray& Mesh::node_bounds() const { return live(state_, "kjit::Mesh").node_bounds; }
const NdArray& Mesh::node_links() const { return live(state_, "kjit::Mesh").node_links; }

dsl::Mesh Mesh::view() const {
  const BvhState& s = live(state_, "kjit::Mesh");
  dsl::Mesh v;
  v.points = s.points;
  v.indices = s.indices;
  if (s.velocities.defined()) v.velocities = s.velocities;
  v.bvh_bounds = s.node_bounds;
  v.bvh_nodes = s.node_links;
  if (s.node_winding.defined()) v.bvh_winding = s.node_winding;
  if (s.ray_tree.defined()) v.bvh_rays = s.ray_tree;
  return v;
}

}  // namespace kjit
