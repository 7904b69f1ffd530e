// Nested value structs through the cpu handlers: a struct of structs of arrays and plain values
// (tests::structs::Scene, three deep) passed as its leaves, named by their paths
// ("s.body.spring.rest"), against the C++ launch of the same kernel with the host struct, bit
// for bit, forward and adjoint; the signature's paths; malformed calls naming the full path.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "frame_builder.hpp"
#include "jax_struct_kernels.hpp"
#include "kernel_info.hpp"
#include "kjit/kjit.hpp"
#include "test_support.hpp"

namespace nested_tests {
using namespace kjit::dsl;
KJIT_MODULE(ffi_nested_structs)
KJIT_STRUCT(TwoMeshes, (Mesh, a), (Mesh, b));  // too large for one packed value
KJIT_KERNEL(two_meshes, (Value<TwoMeshes> m, Array<float> out)) { out[tid()] = m.a().points()[0][0]; }
}  // namespace nested_tests

using namespace kjit;
using kjit::test::call;
using kjit::test::FrameBuilder;

namespace {

/// The scene's arrays and plain values, as the FFI call and the C++ launch both take them.
struct SceneData {
  int n;
  std::vector<vec3f> x, rest, pull;
  std::vector<float> weights;
  vec3f offset{0.25f, -0.5f, 1.0f};
  float scale = 0.75f, k = 1.5f, pull_k = -0.625f;
  explicit SceneData(int count) : n(count) {
    for (int i = 0; i < n; ++i) {
      const float t = float(i);
      x.push_back(vec3f(0.1f * t, 0.3f - 0.05f * t, 0.2f * std::sin(t)));
      rest.push_back(vec3f(0.02f * t, -0.1f, 0.15f * std::cos(t)));
      pull.push_back(vec3f(0.3f + 0.01f * t, 0.2f * std::sin(2.0f * t), -0.4f));
      weights.push_back(1.0f + 0.125f * t);
    }
  }
  /// The input operands in the call's order: x, s.body.spring.rest, s.body.weights, s.pull.rest.
  void inputs(FrameBuilder& b) {
    b.arg(xla::kF32, {n, 3}, x.data()).arg(xla::kF32, {n, 3}, rest.data());
    b.arg(xla::kF32, {n}, weights.data()).arg(xla::kF32, {n, 3}, pull.data());
  }
  /// The FFI launch with every plain leaf an attribute: its output.
  std::vector<vec3f> static_call() {
    std::vector<vec3f> out(size_t(n), vec3f(7, 7, 7));
    FrameBuilder b;
    inputs(b);
    b.ret(xla::kF32, {n, 3}, out.data());
    statics(b);
    auto o = call(&kjit_xla_launch_cpu, b.frame());
    REQUIRE_MESSAGE(o.ok, o.message);
    return out;
  }
  /// The C++ launch's struct over arrays `rest`, `w` and `pull`.
  tests::structs::Scene host(const NdArray& rest, const NdArray& w, const NdArray& pull) const {
    tests::structs::Scene s;
    s.offset = offset;
    s.body.scale = scale;
    s.body.spring.k = k;
    s.pull.k = pull_k;
    s.body.spring.rest = rest;
    s.body.weights = w;
    s.pull.rest = pull;
    return s;
  }
  /// The plain leaves as attributes, each named by its path.
  void statics(FrameBuilder& b, bool with_spring_k = true) {
    b.attr_string("kjit_kernel", "tests::structs::scene_force");
    b.attr_array<float>("s.offset", xla::kF32, {offset.c[0], offset.c[1], offset.c[2]});
    b.attr_scalar("s.body.scale", xla::kF32, scale).attr_scalar("s.pull.k", xla::kF32, pull_k);
    if (with_spring_k) b.attr_scalar("s.body.spring.k", xla::kF32, k);
  }
};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

}  // namespace

TEST_CASE("the signature flattens nested structs depth first, each leaf named by its path") {
  nlohmann::json j = nlohmann::json::parse(ffi::detail::kernel_info("tests::structs::scene_force").json);
  const char* names[] = {"x",       "s.offset",       "s.body.scale", "s.body.spring.rest", "s.body.spring.k",
                         "s.body.weights", "s.pull.rest", "s.pull.k",     "out"};
  REQUIRE(j["params"].size() == 9);
  for (size_t i = 0; i < 9; ++i) CHECK(j["params"][i]["name"] == names[i]);
  const auto& rest = j["params"][3];
  CHECK(rest["kind"] == "array");
  CHECK(rest["differentiable"] == true);
  CHECK(rest["loads"] == true);  // read through s.body().spring(): a use of the leaf
  CHECK(rest["field_of"]["param"] == "s");
  CHECK(rest["field_of"]["index"] == 1);
  CHECK(rest["field_of"]["field"] == "body.spring.rest");
  CHECK(rest["field_of"]["path"] == nlohmann::json::array({"body", "spring", "rest"}));
  CHECK(rest["field_of"]["struct"] == "tests::structs::Scene");
  CHECK(rest["field_of"]["structs"] ==
        nlohmann::json::array({"tests::structs::Scene", "tests::structs::Body", "tests::structs::Spring"}));
  CHECK(j["params"][7]["kind"] == "value");
  CHECK(j["params"][7]["field_of"]["field"] == "pull.k");
  CHECK_FALSE(j["params"][8].contains("field_of"));

  // A kjit::dsl::Mesh inside a struct flattens the same way: t.weight, then the mesh's seven arrays.
  nlohmann::json t = nlohmann::json::parse(ffi::detail::kernel_info("tests::structs::target_loss").json);
  REQUIRE(t["params"].size() == 10);
  CHECK(t["params"][1]["name"] == "t.mesh.points");
  CHECK(t["params"][6]["name"] == "t.mesh.bvh_winding");
  CHECK(t["params"][7]["name"] == "t.mesh.bvh_rays");
  CHECK(t["params"][1]["field_of"]["structs"] == nlohmann::json::array({"tests::structs::Target", "kjit::dsl::Mesh"}));
}

TEST_CASE("nested struct leaves give the C++ launch's results bit for bit, forward and adjoint") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  for (int n : {5, 37}) {
    CAPTURE(n);
    SceneData d(n);
    std::vector<vec3f> out = d.static_call();
    NdArray xa = from_vector(d.x), rest = from_vector(d.rest), w = from_vector(d.weights), pull = from_vector(d.pull);
    rest.requires_grad();
    w.requires_grad();
    pull.requires_grad();
    const tests::structs::Scene s = d.host(rest, w, pull);
    NdArray oc = zeros<vec3f>({n});
    launch(tests::structs::scene_force, n, xa, s, oc);
    CHECK(same_bits(oc.to_vector<vec3f>(), out));
    // An independent check of the formula in float64 (the packing put every leaf in its place).
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) {
        double dd[3], pp[3], d2 = 0, p2 = 0;
        for (int e = 0; e < 3; ++e) {
          dd[e] = double(d.x[size_t(i)].c[e]) - double(d.rest[size_t(i)].c[e]);
          pp[e] = double(d.pull[size_t(i)].c[e]);
          d2 += dd[e] * dd[e];
          p2 += pp[e] * pp[e];
        }
        const double want = dd[c] * double(d.scale) * double(d.k) * double(d.weights[size_t(i)]) * d2 +
                            pp[c] * double(d.pull_k) * std::sin(p2) + double(d.offset.c[c]);
        CHECK(double(out[size_t(i)].c[c]) == doctest::Approx(want).epsilon(1e-5));
      }

    // The adjoint: one gradient per differentiable input array, the leaves' among them.
    std::vector<vec3f> seed;
    for (int i = 0; i < n; ++i) seed.push_back(vec3f(1.0f, -0.5f + 0.01f * float(i), 0.25f));
    std::vector<vec3f> gx(size_t(n), vec3f(5, 5, 5)), grest(gx), gpull(gx);
    std::vector<float> gw(size_t(n), 5.0f);
    FrameBuilder ab;
    d.inputs(ab);
    ab.arg(xla::kF32, {n, 3}, out.data()).arg(xla::kF32, {n, 3}, seed.data());
    ab.ret(xla::kF32, {n, 3}, gx.data()).ret(xla::kF32, {n, 3}, grest.data());
    ab.ret(xla::kF32, {n}, gw.data()).ret(xla::kF32, {n, 3}, gpull.data());
    d.statics(ab);
    auto o = call(&kjit_xla_adjoint_cpu, ab.frame());
    REQUIRE_MESSAGE(o.ok, o.message);

    NdArray gxa = zeros<vec3f>({n});
    launch_adjoint(tests::structs::scene_force, n, {xa, s, oc}, {gxa, {}, from_vector(seed)});
    CHECK(same_bits(gxa.to_vector<vec3f>(), gx));
    CHECK(same_bits(rest.grad().to_vector<vec3f>(), grest));
    CHECK(same_bits(w.grad().to_vector<float>(), gw));
    CHECK(same_bits(pull.grad().to_vector<vec3f>(), gpull));
    double norm = 0;
    for (int i = 0; i < n; ++i) norm += std::fabs(gw[size_t(i)]) + std::fabs(grest[size_t(i)].c[0]) + std::fabs(gpull[size_t(i)].c[1]);
    CHECK(norm > 0.1);
  }
}

TEST_CASE("malformed calls of a nested struct name the leaf by its full path") {
  SceneData d(4);
  std::vector<vec3f> out(4);
  FrameBuilder missing;
  d.inputs(missing);
  missing.ret(xla::kF32, {4, 3}, out.data());
  d.statics(missing, false);
  auto o = call(&kjit_xla_launch_cpu, missing.frame());
  CHECK(o.code == xla::kInvalidArgument);
  CHECK(o.message == "kjit kernel 'tests::structs::scene_force': Missing static argument 's.body.spring.k' (float32): "
                     "static arguments travel as typed attributes named after the parameter");

  std::vector<double> w64(4, 1.0);
  FrameBuilder dtype;
  dtype.arg(xla::kF32, {4, 3}, d.x.data()).arg(xla::kF32, {4, 3}, d.rest.data());
  dtype.arg(xla::kF64, {4}, w64.data()).arg(xla::kF32, {4, 3}, d.pull.data());
  dtype.ret(xla::kF32, {4, 3}, out.data());
  d.statics(dtype);
  o = call(&kjit_xla_launch_cpu, dtype.frame());
  CHECK(o.message == "kjit kernel 'tests::structs::scene_force': Invalid data type for array argument "
                     "'s.body.weights', expected float32, got float64");

  FrameBuilder shape;  // a traced leaf of the wrong shape
  std::vector<float> pk2(2, 1.0f);
  d.inputs(shape);
  shape.arg(xla::kF32, {2}, pk2.data()).ret(xla::kF32, {4, 3}, out.data());
  d.statics(shape);
  shape.attr_array<int64_t>("kjit_traced", xla::kS64, {7});
  o = call(&kjit_xla_launch_cpu, shape.frame());
  CHECK(o.code == xla::kInvalidArgument);
  CHECK(o.message == "kjit kernel 'tests::structs::scene_force': Invalid dimensionality for traced argument "
                     "'s.pull.k', expected 0 dimensions, got 1");
}

TEST_CASE("traced plain leaves at every depth give the static call's bits; their gradients launch_adjoint's") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  const int n = 37;
  SceneData d(n);
  std::vector<vec3f> want = d.static_call();
  std::vector<vec3f> out(size_t(n), vec3f(7, 7, 7));
  // s.offset (parameter 1), s.body.spring.k (4) and s.pull.k (7) traced; s.body.scale static.
  auto traced = [&](FrameBuilder& b) {
    b.arg(xla::kF32, {3}, d.offset.c).arg(xla::kF32, {}, &d.k).arg(xla::kF32, {}, &d.pull_k);
    b.attr_string("kjit_kernel", "tests::structs::scene_force").attr_scalar("s.body.scale", xla::kF32, d.scale);
    b.attr_array<int64_t>("kjit_traced", xla::kS64, {1, 4, 7});
  };
  FrameBuilder tb;
  d.inputs(tb);
  tb.ret(xla::kF32, {n, 3}, out.data());
  traced(tb);
  auto o = call(&kjit_xla_launch_cpu, tb.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  CHECK(same_bits(want, out));

  // The adjoint: the arrays' gradients, then one per traced leaf, each its part of the struct's sum.
  std::vector<vec3f> seed;
  for (int i = 0; i < n; ++i) seed.push_back(vec3f(1.0f, -0.5f + 0.01f * float(i), 0.25f));
  std::vector<vec3f> gx(size_t(n), vec3f(5, 5, 5)), grest(gx), gpull(gx);
  std::vector<float> gw(size_t(n), 5.0f);
  vec3f goffset(5, 5, 5);
  float gk = 5.0f, gpk = 5.0f;
  FrameBuilder ab;
  d.inputs(ab);
  ab.arg(xla::kF32, {n, 3}, out.data()).arg(xla::kF32, {n, 3}, seed.data());
  ab.ret(xla::kF32, {n, 3}, gx.data()).ret(xla::kF32, {n, 3}, grest.data());
  ab.ret(xla::kF32, {n}, gw.data()).ret(xla::kF32, {n, 3}, gpull.data());
  ab.ret(xla::kF32, {3}, goffset.c).ret(xla::kF32, {}, &gk).ret(xla::kF32, {}, &gpk);
  traced(ab);
  o = call(&kjit_xla_adjoint_cpu, ab.frame());
  REQUIRE_MESSAGE(o.ok, o.message);

  NdArray xa = from_vector(d.x), rest = from_vector(d.rest), w = from_vector(d.weights), pull = from_vector(d.pull);
  rest.requires_grad();
  tests::structs::Scene s = d.host(rest, w, pull), ds{};
  NdArray gxa = zeros<vec3f>({n});
  launch_adjoint(tests::structs::scene_force, n, {xa, s, from_vector(want)}, {gxa, &ds, from_vector(seed)});
  CHECK(same_bits(gxa.to_vector<vec3f>(), gx));
  CHECK(same_bits(rest.grad().to_vector<vec3f>(), grest));
  CHECK(std::memcmp(&ds.offset, &goffset, sizeof goffset) == 0);
  CHECK(std::memcmp(&ds.body.spring.k, &gk, sizeof gk) == 0);
  CHECK(std::memcmp(&ds.pull.k, &gpk, sizeof gpk) == 0);
  // Independently, in float64: d out / d offset sums the seed; d out / d pull.k sums seed . p sin(p . p).
  double so[3] = {0, 0, 0}, sp = 0, sk = 0;
  for (int i = 0; i < n; ++i) {
    double dd[3], pp[3], d2 = 0, p2 = 0, sd = 0, spp = 0;
    for (int e = 0; e < 3; ++e) {
      dd[e] = double(d.x[size_t(i)].c[e]) - double(d.rest[size_t(i)].c[e]);
      pp[e] = double(d.pull[size_t(i)].c[e]);
      d2 += dd[e] * dd[e];
      p2 += pp[e] * pp[e];
      so[e] += double(seed[size_t(i)].c[e]);
      sd += double(seed[size_t(i)].c[e]) * dd[e];
      spp += double(seed[size_t(i)].c[e]) * pp[e];
    }
    sp += spp * std::sin(p2);
    sk += sd * double(d.scale) * double(d.weights[size_t(i)]) * d2;
  }
  for (int e = 0; e < 3; ++e) CHECK(double(goffset.c[e]) == doctest::Approx(so[e]).epsilon(1e-5));
  CHECK(double(gpk) == doctest::Approx(sp).epsilon(1e-5));
  CHECK(double(gk) == doctest::Approx(sk).epsilon(1e-5));

  // A batch of two values of s.pull.k (a vmap): each item's output and gradient its own.
  float pks[2] = {d.pull_k, 2.0f * d.pull_k};
  std::vector<vec3f> outs(size_t(2 * n));
  FrameBuilder bb;
  d.inputs(bb);
  bb.arg(xla::kF32, {2}, pks).ret(xla::kF32, {2, n, 3}, outs.data());
  bb.attr_string("kjit_kernel", "tests::structs::scene_force").attr_scalar("s.body.scale", xla::kF32, d.scale);
  bb.attr_array<float>("s.offset", xla::kF32, {d.offset.c[0], d.offset.c[1], d.offset.c[2]});
  bb.attr_scalar("s.body.spring.k", xla::kF32, d.k).attr_array<int64_t>("kjit_traced", xla::kS64, {7});
  o = call(&kjit_xla_launch_cpu, bb.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  CHECK(std::memcmp(outs.data(), want.data(), size_t(n) * sizeof(vec3f)) == 0);
  s.pull.k = pks[1];
  NdArray second = zeros<vec3f>({n});
  launch(tests::structs::scene_force, n, xa, s, second);
  CHECK(std::memcmp(outs.data() + n, second.to_vector<vec3f>().data(), size_t(n) * sizeof(vec3f)) == 0);
}

TEST_CASE("a struct larger than one packed value is refused, naming it and its size") {
  const int bytes = ffi::detail::kernel_info("nested_tests::two_meshes").packed[0].struct_bytes;
  CHECK(bytes > 520);
  std::vector<float> out(4);
  FrameBuilder b;
  b.ret(xla::kF32, {4}, out.data());
  b.attr_string("kjit_kernel", "nested_tests::two_meshes").attr_array<int64_t>("kjit_launch_dims", xla::kS64, {4});
  auto o = call(&kjit_xla_launch_cpu, b.frame());
  CHECK(o.code == xla::kInvalidArgument);
  CHECK(o.message == "kjit kernel 'nested_tests::two_meshes': struct parameter 'm' (nested_tests::TwoMeshes) is " +
                         std::to_string(bytes) + " bytes, beyond the 520 bytes the XLA FFI packs for one value; pass "
                         "some of its arrays as parameters of their own");
}
