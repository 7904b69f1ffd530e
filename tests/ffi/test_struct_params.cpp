// Value struct parameters through the cpu handlers: a kjit::dsl::Mesh passed as its five field
// arrays (and a struct of plain values and an array, as attributes and a buffer), against the
// C++ launch of the same kernel with a kjit::Mesh, bit for bit, forward and adjoint; the mesh
// BVH handler against kjit::Mesh's own tree; the signature's fields; malformed calls.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "frame_builder.hpp"
#include "jax_struct_kernels.hpp"
#include "kernel_info.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"
#include "test_support.hpp"

using namespace kjit;
using kjit::test::call;
using kjit::test::FrameBuilder;

namespace {

/// A bumpy height field over [0, 1]^2 of g x g vertices: 2 (g - 1)^2 triangles.
struct Grid {
  std::vector<vec3f> points;
  std::vector<int32_t> indices;
  explicit Grid(int g) {
    for (int j = 0; j < g; ++j)
      for (int i = 0; i < g; ++i) {
        const float x = float(i) / float(g - 1), y = float(j) / float(g - 1);
        points.push_back(vec3f(x, y, 0.2f * std::sin(5.0f * x) * std::cos(4.0f * y)));
      }
    for (int j = 0; j + 1 < g; ++j)
      for (int i = 0; i + 1 < g; ++i) {
        const int32_t a = j * g + i, b = a + 1, c = a + g, d = c + 1;
        for (int32_t v : {a, b, d, a, d, c}) indices.push_back(v);
      }
  }
  int64_t faces() const { return int64_t(indices.size() / 3); }
};

std::vector<vec3f> queries(int n) {
  std::vector<vec3f> q;
  for (int i = 0; i < n; ++i)
    q.push_back(vec3f(-0.2f + 1.4f * float((i * 37) % 101) / 100.0f, -0.2f + 1.4f * float((i * 53) % 97) / 96.0f,
                      -0.3f + 0.6f * float((i * 17) % 31) / 30.0f));
  return q;
}

/// The BVH arrays of the mesh handler (its fixed sizes: capacity C = 2 F - 1).
struct HandlerBvh {
  std::vector<vec3f> bounds;
  std::vector<int32_t> links;
};

HandlerBvh handler_bvh(Grid& m) {
  const int64_t f = m.faces(), c = 2 * f - 1;
  HandlerBvh h{std::vector<vec3f>(size_t(2 * c), vec3f(9, 9, 9)), std::vector<int32_t>(size_t(2 * c + f), 7)};
  FrameBuilder b;
  b.arg(xla::kF32, {int64_t(m.points.size()), 3}, m.points.data()).arg(xla::kS32, {int64_t(m.indices.size())}, m.indices.data());
  b.ret(xla::kF32, {2 * c, 3}, h.bounds.data()).ret(xla::kS32, {2 * c + f}, h.links.data());
  auto o = call(&kjit_xla_mesh_bvh_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  return h;
}

/// The mesh's seven fields as operands: points, indices, velocities (empty), bvh_bounds, bvh_nodes,
/// bvh_winding (empty: no winding-number support), bvh_rays (empty: rays walk the binary tree).
void mesh_args(FrameBuilder& b, Grid& m, HandlerBvh& h) {
  b.arg(xla::kF32, {int64_t(m.points.size()), 3}, m.points.data());
  b.arg(xla::kS32, {int64_t(m.indices.size())}, m.indices.data());
  b.arg(xla::kF32, {0, 3}, nullptr);
  b.arg(xla::kF32, {int64_t(h.bounds.size()), 3}, h.bounds.data());
  b.arg(xla::kS32, {int64_t(h.links.size())}, h.links.data());
  b.arg(xla::kF32, {0, 3}, nullptr);
  b.arg(xla::kS32, {0}, nullptr);
}

}  // namespace

TEST_CASE("the mesh BVH handler writes kjit::Mesh's tree, zeros after it, into its fixed-size results") {
  Grid m(9);
  HandlerBvh h = handler_bvh(m);
  Mesh mesh(from_vector(m.points), from_vector(m.indices));
  const std::vector<vec3f> bounds = mesh.node_bounds().to_vector<vec3f>();
  const std::vector<int32_t> links = mesh.node_links().to_vector<int32_t>();
  REQUIRE(bounds.size() <= h.bounds.size());
  REQUIRE(links.size() <= h.links.size());
  CHECK(std::memcmp(bounds.data(), h.bounds.data(), bounds.size() * sizeof(vec3f)) == 0);
  CHECK(std::equal(links.begin(), links.end(), h.links.begin()));
  for (size_t i = bounds.size(); i < h.bounds.size(); ++i) CHECK(h.bounds[i].c[0] == 0.0f);
  for (size_t i = links.size(); i < h.links.size(); ++i) CHECK(h.links[i] == 0);
}

TEST_CASE("the mesh BVH handler refuses bad indices, NaN points and wrong result shapes, naming them") {
  Grid m(3);
  m.indices[4] = 99;
  std::vector<vec3f> bounds(size_t(2 * 15)); std::vector<int32_t> links(size_t(2 * 15 + 8));
  FrameBuilder b;
  b.arg(xla::kF32, {9, 3}, m.points.data()).arg(xla::kS32, {24}, m.indices.data());
  b.ret(xla::kF32, {30, 3}, bounds.data()).ret(xla::kS32, {38}, links.data());
  auto o = call(&kjit_xla_mesh_bvh_cpu, b.frame());
  CHECK(o.code == xla::kInvalidArgument);
  CHECK(o.message == "kjit_mesh_bvh: kjit.jax.mesh: indices[4] = 99 is outside the points array (9 points)");
  m.indices[4] = 4;
  m.points[2].c[1] = NAN;
  o = call(&kjit_xla_mesh_bvh_cpu, b.frame());
  CHECK(o.message == "kjit_mesh_bvh: kjit.jax.mesh: points[2] has a NaN component; a mesh's points must be numbers");
  FrameBuilder w;
  w.arg(xla::kF32, {9, 3}, m.points.data()).arg(xla::kS32, {24}, m.indices.data());
  w.ret(xla::kF32, {29, 3}, bounds.data()).ret(xla::kS32, {38}, links.data());
  o = call(&kjit_xla_mesh_bvh_cpu, w.frame());
  CHECK(o.message == "kjit.jax.mesh: bvh_bounds must be float32 of shape (30, 3), got float32 of shape (29, 3)");
}

TEST_CASE("the signature flattens a value struct of arrays and plain values into its fields") {
  const auto& k = ffi::detail::kernel_info("meshk::closest");
  nlohmann::json j = nlohmann::json::parse(k.json);
  REQUIRE(j["params"].size() == 11);  // mesh's seven fields, pts, max_dist, face, uvr
  const char* fields[] = {"points", "indices", "velocities", "bvh_bounds", "bvh_nodes", "bvh_winding", "bvh_rays"};
  for (int f = 0; f < 7; ++f) {
    const auto& p = j["params"][f];
    CHECK(p["name"] == std::string("mesh.") + fields[f]);
    CHECK(p["kind"] == "array");
    CHECK(p["field_of"]["param"] == "mesh");
    CHECK(p["field_of"]["index"] == 0);
    CHECK(p["field_of"]["field"] == fields[f]);
    CHECK(p["field_of"]["struct"] == "kjit::dsl::Mesh");
  }
  CHECK(j["params"][0]["loads"] == true);
  CHECK(j["params"][0]["differentiable"] == true);
  CHECK(j["params"][1]["differentiable"] == false);
  CHECK(j["params"][6]["differentiable"] == false);
  CHECK(j["params"][7]["name"] == "pts");
  CHECK_FALSE(j["params"][7].contains("field_of"));
  nlohmann::json a = nlohmann::json::parse(ffi::detail::kernel_info("tests::structs::affine").json);
  CHECK(a["params"][1]["name"] == "a.scale");
  CHECK(a["params"][1]["kind"] == "value");
  CHECK(a["params"][3]["name"] == "a.weights");
  CHECK(a["params"][3]["kind"] == "array");
}

TEST_CASE("a mesh passed as its fields gives the C++ launch's results bit for bit, forward and adjoint") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  Grid m(9);
  HandlerBvh h = handler_bvh(m);
  const int n = 61;
  std::vector<vec3f> q = queries(n);
  std::vector<int32_t> face(size_t(n), -5);
  std::vector<vec3f> uvr(static_cast<size_t>(n));
  FrameBuilder b;
  mesh_args(b, m, h);
  b.arg(xla::kF32, {n, 3}, q.data());
  b.ret(xla::kS32, {n}, face.data()).ret(xla::kF32, {n, 3}, uvr.data());
  b.attr_string("kjit_kernel", "meshk::closest").attr_scalar("max_dist", xla::kF32, 0.25f);
  auto o = call(&kjit_xla_launch_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);

  NdArray points = from_vector(m.points);
  points.requires_grad();
  Mesh mesh(points, from_vector(m.indices));
  NdArray pts = from_vector(q), cf = zeros<int32_t>({n}), cu = zeros<vec3f>({n});
  launch(meshk::closest, n, mesh, pts, 0.25f, cf, cu);
  CHECK(cf.to_vector<int32_t>() == face);
  const std::vector<vec3f> want = cu.to_vector<vec3f>();
  CHECK(std::memcmp(want.data(), uvr.data(), want.size() * sizeof(vec3f)) == 0);
  int hits = 0, misses = 0;
  for (int32_t f : face) (f >= 0 ? hits : misses) += 1;
  CHECK(hits > 10);
  CHECK(misses > 3);

  // The loss's adjoint: the points' gradient (through the struct) and the queries'.
  std::vector<float> loss(static_cast<size_t>(n)), seed(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) seed[size_t(i)] = 1.0f + 0.01f * float(i);
  FrameBuilder fb;
  mesh_args(fb, m, h);
  fb.arg(xla::kF32, {n, 3}, q.data()).ret(xla::kF32, {n}, loss.data());
  fb.attr_string("kjit_kernel", "meshk::closest_loss");
  o = call(&kjit_xla_launch_cpu, fb.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  const int64_t np = int64_t(m.points.size());
  // Gradients of the differentiable input arrays: points, velocities, bvh_bounds, bvh_winding, pts.
  std::vector<vec3f> gp(size_t(np), vec3f(5, 5, 5)), gv, gb(h.bounds.size(), vec3f(5, 5, 5)), gq(size_t(n), vec3f(5, 5, 5));
  FrameBuilder ab;
  mesh_args(ab, m, h);
  ab.arg(xla::kF32, {n, 3}, q.data()).arg(xla::kF32, {n}, loss.data()).arg(xla::kF32, {n}, seed.data());
  ab.ret(xla::kF32, {np, 3}, gp.data()).ret(xla::kF32, {0, 3}, nullptr);
  ab.ret(xla::kF32, {int64_t(gb.size()), 3}, gb.data()).ret(xla::kF32, {0, 3}, nullptr).ret(xla::kF32, {n, 3}, gq.data());
  ab.attr_string("kjit_kernel", "meshk::closest_loss");
  o = call(&kjit_xla_adjoint_cpu, ab.frame());
  REQUIRE_MESSAGE(o.ok, o.message);

  NdArray out = zeros<float>({n}), g_pts = zeros<vec3f>({n});
  launch(meshk::closest_loss, n, mesh, pts, out);
  const std::vector<float> lw = out.to_vector<float>();
  CHECK(std::memcmp(lw.data(), loss.data(), lw.size() * sizeof(float)) == 0);
  launch_adjoint(meshk::closest_loss, n, {mesh, pts, out}, {{}, g_pts, from_vector(seed)});
  const std::vector<vec3f> wq = g_pts.to_vector<vec3f>(), wp = points.grad().to_vector<vec3f>();
  CHECK(std::memcmp(wq.data(), gq.data(), wq.size() * sizeof(vec3f)) == 0);
  CHECK(std::memcmp(wp.data(), gp.data(), wp.size() * sizeof(vec3f)) == 0);
  double norm = 0;
  for (const vec3f& g : gp) norm += std::fabs(g.c[0]) + std::fabs(g.c[1]) + std::fabs(g.c[2]);
  CHECK(norm > 1.0);
  for (const vec3f& g : gb) CHECK((g.c[0] == 0.0f && g.c[1] == 0.0f && g.c[2] == 0.0f));  // zeroed, never written
}

TEST_CASE("a struct of plain values and an array: the values as attributes, the array as a buffer") {
  const int n = 5;
  std::vector<vec3f> x, out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) x.push_back(vec3f(float(i), 1.0f, -float(i)));
  std::vector<float> w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  FrameBuilder b;
  b.arg(xla::kF32, {n, 3}, x.data()).arg(xla::kF32, {10}, w.data()).ret(xla::kF32, {n, 3}, out.data());
  b.attr_string("kjit_kernel", "tests::structs::affine").attr_scalar("a.scale", xla::kF32, 0.5f);
  b.attr_array<float>("a.shift", xla::kF32, {1.0f, 2.0f, 3.0f}).attr_scalar("a.stride", xla::kS32, int32_t(2));
  auto o = call(&kjit_xla_launch_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c)
      CHECK(out[size_t(i)].c[c] == x[size_t(i)].c[c] * (0.5f * w[size_t(2 * i)]) + float(c + 1));

  FrameBuilder missing;
  missing.arg(xla::kF32, {n, 3}, x.data()).arg(xla::kF32, {10}, w.data()).ret(xla::kF32, {n, 3}, out.data());
  missing.attr_string("kjit_kernel", "tests::structs::affine").attr_scalar("a.scale", xla::kF32, 0.5f);
  missing.attr_array<float>("a.shift", xla::kF32, {1.0f, 2.0f, 3.0f});
  o = call(&kjit_xla_launch_cpu, missing.frame());
  CHECK(o.code == xla::kInvalidArgument);
  CHECK(o.message.find("Missing static argument 'a.stride' (int32)") != std::string::npos);

  FrameBuilder traced;
  int32_t stride = 1;
  traced.arg(xla::kF32, {n, 3}, x.data()).arg(xla::kF32, {10}, w.data()).arg(xla::kS32, {}, &stride);
  traced.ret(xla::kF32, {n, 3}, out.data());
  traced.attr_string("kjit_kernel", "tests::structs::affine").attr_scalar("a.scale", xla::kF32, 0.5f);
  traced.attr_array<float>("a.shift", xla::kF32, {1.0f, 2.0f, 3.0f}).attr_array<int64_t>("kjit_traced", xla::kS64, {4});
  std::fill(out.begin(), out.end(), vec3f(9, 9, 9));
  o = call(&kjit_xla_launch_cpu, traced.frame());
  REQUIRE_MESSAGE(o.ok, o.message);  // a traced integer leaf: read from its buffer (stride 1)
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c)
      CHECK(out[size_t(i)].c[c] == x[size_t(i)].c[c] * (0.5f * w[size_t(i)]) + float(c + 1));

  // A mesh field of the wrong dtype is named by its parameter and field.
  Grid m(3);
  HandlerBvh h = handler_bvh(m);
  std::vector<vec3f> q = queries(4);
  std::vector<int32_t> face(4);
  std::vector<vec3f> uvr(4);
  FrameBuilder bad;
  bad.arg(xla::kF32, {9, 3}, m.points.data()).arg(xla::kF32, {24}, m.indices.data());
  bad.arg(xla::kF32, {0, 3}, nullptr).arg(xla::kF32, {int64_t(h.bounds.size()), 3}, h.bounds.data());
  bad.arg(xla::kS32, {int64_t(h.links.size())}, h.links.data()).arg(xla::kF32, {0, 3}, nullptr);
  bad.arg(xla::kS32, {0}, nullptr).arg(xla::kF32, {4, 3}, q.data());
  bad.ret(xla::kS32, {4}, face.data()).ret(xla::kF32, {4, 3}, uvr.data());
  bad.attr_string("kjit_kernel", "meshk::closest").attr_scalar("max_dist", xla::kF32, 1.0f);
  o = call(&kjit_xla_launch_cpu, bad.frame());
  CHECK(o.message == "kjit kernel 'meshk::closest': Invalid data type for array argument 'mesh.indices', "
                     "expected int32, got float32");
}
