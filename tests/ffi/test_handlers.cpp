// The kernel launch and adjoint handlers driven with hand-built call frames on the cpu:
// correct launches, the metadata probe, stages, vmap batches and in/out aliasing.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "frame_builder.hpp"
#include "guarded_buffer.hpp"
#include "kjit/runtime/internal/private_adds.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;
using kjit::test::FrameBuilder;
using kjit::test::call;

namespace {

std::vector<float> ramp(int n, float scale, float offset = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = offset + scale * float(i % 97);
  return v;
}

FrameBuilder saxpy_frame(std::vector<float>& x, std::vector<float>& y, float a, std::vector<float>& out) {
  FrameBuilder b;
  int64_t n = int64_t(x.size());
  b.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).ret(xla::kF32, {int64_t(out.size())}, out.data());
  b.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, a);
  return b;
}

}  // namespace

namespace {

/// XLA's metadata probe of `handler`: the metadata it filled in (the probe must succeed).
xla::Metadata probe_metadata(xla::Handler* handler) {
  xla::Metadata md{};
  md.struct_size = sizeof md;
  xla::MetadataExtension ext{};
  ext.extension_base = {sizeof ext, xla::kExtensionMetadata, nullptr};
  ext.metadata = &md;
  FrameBuilder b;
  b.frame()->extension_start = &ext.extension_base;
  auto o = call(handler, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  return md;
}

}  // namespace

TEST_CASE("the metadata probe is answered with API 0.1 and the command-buffer trait on CUDA launches") {
  for (auto [handler, traits] : {std::pair{&kjit_xla_launch_cpu, 0u}, std::pair{&kjit_xla_launch_cuda, 1u},
                                 std::pair{&kjit_xla_adjoint_cpu, 0u}, std::pair{&kjit_xla_adjoint_cuda, 0u}}) {
    xla::Metadata md = probe_metadata(handler);
    CHECK(md.api_version.major_version == 0);
    CHECK(md.api_version.minor_version == 1);
    CHECK(md.traits == traits);
  }
}

TEST_CASE("the declared API version: any mirrored one, process-wide, others refused by name") {
  auto probe = [] { return probe_metadata(&kjit_xla_adjoint_cpu).api_version.minor_version; };
  CHECK(ffi::declared_api_version() == xla::kApiMinor);
  for (int minor = xla::kApiMinor; minor <= xla::kMirroredApiMinor; ++minor) {
    ffi::declare_api_version(minor);
    CHECK(ffi::declared_api_version() == minor);
    CHECK(probe() == minor);
  }
  for (int bad : {0, xla::kMirroredApiMinor + 1, -1}) {
    CHECK_THROWS_WITH(ffi::declare_api_version(bad),
                      ("kjit's XLA FFI handlers can declare API 0.1 to 0.5, not 0." + std::to_string(bad)).c_str());
    CHECK(ffi::declared_api_version() == xla::kMirroredApiMinor);  // unchanged by a refusal
  }
  ffi::declare_api_version(xla::kApiMinor);
  CHECK(probe() == 1);
}

TEST_CASE("the metadata probe writes only what every API version's metadata has") {
  // An API 0.1 XLA (jaxlib 0.7.2) hands a metadata struct that ends after `traits`; a write to
  // the 0.3 field state_type_id would land past it, on the guard page.
  constexpr size_t old_size = (xla::kMetadataSize01 + alignof(xla::Metadata) - 1) / alignof(xla::Metadata) *
                              alignof(xla::Metadata);
  static_assert(old_size == offsetof(xla::Metadata, state_type_id));
  kjit::test::GuardedBuffer memory(old_size);
  auto* md = memory.as<xla::Metadata>();
  md->struct_size = xla::kMetadataSize01;
  xla::MetadataExtension ext{};
  ext.extension_base = {sizeof ext, xla::kExtensionMetadata, nullptr};
  ext.metadata = md;
  FrameBuilder b;
  xla::CallFrame* f = b.frame();
  f->extension_start = &ext.extension_base;
  CHECK(call(&kjit_xla_launch_cuda, f).ok);
  CHECK(md->api_version.minor_version == 1);
  CHECK(md->traits == 1u);
  // A 0.3 XLA's own state_type_id is left as XLA set it (a sentinel here).
  xla::Metadata full{};
  full.struct_size = xla::kMetadataSize01;
  full.state_type_id.type_id = 42;
  ext.metadata = &full;
  CHECK(call(&kjit_xla_adjoint_cpu, f).ok);
  CHECK(full.api_version.major_version == 0);
  CHECK(full.state_type_id.type_id == 42);
}

TEST_CASE("non-EXECUTE stages are no-ops") {
  std::vector<float> x = ramp(8, 1), y = ramp(8, 2), out(8, -1.f);
  for (auto stage : {xla::kInstantiate, xla::kPrepare, xla::kInitialize}) {
    FrameBuilder b = saxpy_frame(x, y, 2.f, out);
    b.stage(stage);
    CHECK(call(&kjit_xla_launch_cpu, b.frame()).ok);
    CHECK(out[3] == -1.f);
  }
}

TEST_CASE("saxpy forward: out = a x + y") {
  const int n = 5000;
  std::vector<float> x = ramp(n, 0.5f), y = ramp(n, -1.f, 3.f), out(size_t(n), 0.f);
  FrameBuilder b = saxpy_frame(x, y, 2.5f, out);
  auto o = call(&kjit_xla_launch_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  for (int i = 0; i < n; ++i) REQUIRE(out[size_t(i)] == doctest::Approx(2.5f * x[size_t(i)] + y[size_t(i)]));
}

TEST_CASE("launch_dims from an attribute: only the first half is written") {
  std::vector<double> x(10, 1.0), y(10, 2.0), out(10, -7.0);
  FrameBuilder b;
  b.arg(xla::kF64, {10}, x.data()).arg(xla::kF64, {10}, y.data()).ret(xla::kF64, {10}, out.data());
  b.attr_string("kjit_kernel", "demo::daxpy").attr_scalar("a", xla::kF64, 3.0);
  b.attr_array<int64_t>("kjit_launch_dims", xla::kS64, {5});
  REQUIRE(call(&kjit_xla_launch_cpu, b.frame()).ok);
  CHECK(out[4] == 5.0);
  CHECK(out[5] == -7.0);
}

namespace {

struct Springs {
  int n_points = 6, n_springs = 8;
  std::vector<float> x, rest, f;
  std::vector<int32_t> pairs;
  Springs() {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1, 1);
    for (int i = 0; i < 3 * n_points; ++i) x.push_back(u(rng));
    for (int s = 0; s < n_springs; ++s) {
      pairs.push_back(s % n_points);
      pairs.push_back((s * 5 + 1) % n_points == s % n_points ? (s + 1) % n_points : (s * 5 + 1) % n_points);
      rest.push_back(0.3f + 0.05f * float(s));
    }
    f.assign(size_t(3 * n_points), 0.f);
  }
  /// The forces as the kjit runtime computes them.
  std::vector<float> reference(float k) const {
    auto X = NdArray::from_vector(std::vector<vec3f>(reinterpret_cast<const vec3f*>(x.data()),
                                                      reinterpret_cast<const vec3f*>(x.data()) + n_points));
    auto P = NdArray::from_vector(pairs);
    auto R = NdArray::from_vector(rest);
    auto F = zeros<vec3f>({n_points});
    kjit::launch(demo::springs, n_springs, X, P, R, k, F);
    auto v = F.to_vector<vec3f>();
    return std::vector<float>(&v[0][0], &v[0][0] + 3 * n_points);
  }
};

}  // namespace

TEST_CASE("springs forward: a pure output the kernel accumulates into starts at zero") {
  Springs s;
  std::vector<float> f(s.f.size(), 123.f);  // garbage XLA may leave in an output
  FrameBuilder b;
  b.arg(xla::kF32, {s.n_points, 3}, s.x.data()).arg(xla::kS32, {2 * s.n_springs}, s.pairs.data());
  b.arg(xla::kF32, {s.n_springs}, s.rest.data()).ret(xla::kF32, {s.n_points, 3}, f.data());
  b.attr_string("kjit_kernel", "demo::springs").attr_scalar("k", xla::kF32, 50.f);
  b.attr_array<int64_t>("kjit_launch_dims", xla::kS64, {s.n_springs});
  auto o = call(&kjit_xla_launch_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  auto want = s.reference(50.f);
  for (size_t i = 0; i < f.size(); ++i) CHECK(f[i] == doctest::Approx(want[i]));
}

TEST_CASE("in/out: springs accumulate onto the forces already in the aliased buffer") {
  Springs s;
  std::vector<float> f(s.f.size());
  for (size_t i = 0; i < f.size(); ++i) f[i] = float(i);
  FrameBuilder b;
  b.arg(xla::kF32, {s.n_points, 3}, s.x.data()).arg(xla::kS32, {2 * s.n_springs}, s.pairs.data());
  b.arg(xla::kF32, {s.n_springs}, s.rest.data()).arg(xla::kF32, {s.n_points, 3}, f.data());
  b.ret(xla::kF32, {s.n_points, 3}, f.data());  // XLA aliases the result to the input
  b.attr_string("kjit_kernel", "demo::springs").attr_scalar("k", xla::kF32, 50.f);
  b.attr_array<int64_t>("kjit_in_out", xla::kS64, {4});
  b.attr_array<int64_t>("kjit_launch_dims", xla::kS64, {s.n_springs});
  auto o = call(&kjit_xla_launch_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  auto want = s.reference(50.f);
  for (size_t i = 0; i < f.size(); ++i) CHECK(f[i] == doctest::Approx(want[i] + float(i)));
}

TEST_CASE("in/out springs through the handler: the same forces with private copies or atomics") {
  // The handler runs the kernel's entry through run_cpu_entry with the entry's add-only
  // arrays: forced private copies merge into XLA's aliased buffer as atomics add into it.
  Springs s;
  auto want = s.reference(50.f);
  for (auto mode : {kjit::detail::PrivatizeMode::Always, kjit::detail::PrivatizeMode::Never}) {
    kjit::detail::set_privatize_mode(mode);
    std::vector<float> f(s.f.size());
    for (size_t i = 0; i < f.size(); ++i) f[i] = float(i);
    FrameBuilder b;
    b.arg(xla::kF32, {s.n_points, 3}, s.x.data()).arg(xla::kS32, {2 * s.n_springs}, s.pairs.data());
    b.arg(xla::kF32, {s.n_springs}, s.rest.data()).arg(xla::kF32, {s.n_points, 3}, f.data());
    b.ret(xla::kF32, {s.n_points, 3}, f.data());
    b.attr_string("kjit_kernel", "demo::springs").attr_scalar("k", xla::kF32, 50.f);
    b.attr_array<int64_t>("kjit_in_out", xla::kS64, {4});
    b.attr_array<int64_t>("kjit_launch_dims", xla::kS64, {s.n_springs});
    const uint64_t before = kjit::detail::privatized_arrays();
    auto o = call(&kjit_xla_launch_cpu, b.frame());
    kjit::detail::set_privatize_mode(kjit::detail::PrivatizeMode::Auto);
    REQUIRE_MESSAGE(o.ok, o.message);
    CHECK(kjit::detail::privatized_arrays() - before == (mode == kjit::detail::PrivatizeMode::Always ? 1u : 0u));
    for (size_t i = 0; i < f.size(); ++i) CHECK(f[i] == doctest::Approx(want[i] + float(i)));
  }
}

TEST_CASE("vmap batches: leading batch dims launch once per item; size-1 and missing dims broadcast") {
  const int B = 3, n = 700;
  std::vector<float> x = ramp(B * n, 0.25f), y = ramp(n, 1.f), out(size_t(B * n));
  std::vector<float> y1 = y;
  FrameBuilder b;
  b.arg(xla::kF32, {B, n}, x.data()).arg(xla::kF32, {1, n}, y1.data()).ret(xla::kF32, {B, n}, out.data());
  b.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, -2.f);
  auto o = call(&kjit_xla_launch_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  for (int i = 0; i < B * n; ++i) REQUIRE(out[size_t(i)] == doctest::Approx(-2.f * x[size_t(i)] + y[size_t(i % n)]));

  FrameBuilder c;  // y without any batch dim
  std::vector<float> out2(size_t(B * n));
  c.arg(xla::kF32, {B, n}, x.data()).arg(xla::kF32, {n}, y.data()).ret(xla::kF32, {B, n}, out2.data());
  c.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, -2.f);
  REQUIRE(call(&kjit_xla_launch_cpu, c.frame()).ok);
  CHECK(out2 == out);
}

TEST_CASE("saxpy adjoint: gradients are zeroed first, then dx = a g, dy = g") {
  const int n = 3000;
  std::vector<float> x = ramp(n, 1), y = ramp(n, 2), out = ramp(n, 3), g = ramp(n, 0.1f, 1.f);
  std::vector<float> dx(size_t(n), 99.f), dy(size_t(n), -99.f);
  FrameBuilder b;
  b.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {n}, out.data());
  b.arg(xla::kF32, {n}, g.data()).ret(xla::kF32, {n}, dx.data()).ret(xla::kF32, {n}, dy.data());
  b.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 1.5f);
  auto o = call(&kjit_xla_adjoint_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  for (int i = 0; i < n; ++i) {
    REQUIRE(dx[size_t(i)] == doctest::Approx(1.5f * g[size_t(i)]));
    REQUIRE(dy[size_t(i)] == doctest::Approx(g[size_t(i)]));
  }
}

TEST_CASE("springs adjoint equals the runtime's launch_adjoint; int arrays get no gradient") {
  Springs s;
  std::vector<float> f(s.f.size(), 0.f), g(s.f.size());
  for (size_t i = 0; i < g.size(); ++i) g[i] = std::sin(float(i));
  std::vector<float> dx(s.x.size(), 5.f), drest(s.rest.size(), 5.f);
  FrameBuilder b;
  b.arg(xla::kF32, {s.n_points, 3}, s.x.data()).arg(xla::kS32, {2 * s.n_springs}, s.pairs.data());
  b.arg(xla::kF32, {s.n_springs}, s.rest.data()).arg(xla::kF32, {s.n_points, 3}, f.data());
  b.arg(xla::kF32, {s.n_points, 3}, g.data());
  b.ret(xla::kF32, {s.n_points, 3}, dx.data()).ret(xla::kF32, {s.n_springs}, drest.data());
  b.attr_string("kjit_kernel", "demo::springs").attr_scalar("k", xla::kF32, 20.f);
  b.attr_array<int64_t>("kjit_launch_dims", xla::kS64, {s.n_springs});
  auto o = call(&kjit_xla_adjoint_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);

  auto X = NdArray::from_vector(std::vector<vec3f>(reinterpret_cast<const vec3f*>(s.x.data()),
                                                    reinterpret_cast<const vec3f*>(s.x.data()) + s.n_points));
  auto P = NdArray::from_vector(s.pairs);
  auto R = NdArray::from_vector(s.rest);
  auto F = zeros<vec3f>({s.n_points});
  auto G = NdArray::from_vector(std::vector<vec3f>(reinterpret_cast<const vec3f*>(g.data()),
                                                    reinterpret_cast<const vec3f*>(g.data()) + s.n_points));
  auto DX = zeros<vec3f>({s.n_points});
  auto DR = zeros<float>({s.n_springs});
  kjit::launch_adjoint(demo::springs, s.n_springs, {X, P, R, 20.f, F}, {DX, {}, DR, 0.f, G});
  auto dxw = DX.to_vector<vec3f>();
  auto drw = DR.to_vector<float>();
  for (int i = 0; i < s.n_points; ++i)
    for (int c = 0; c < 3; ++c) CHECK(dx[size_t(3 * i + c)] == doctest::Approx(dxw[size_t(i)][c]));
  for (int i = 0; i < s.n_springs; ++i) CHECK(drest[size_t(i)] == doctest::Approx(drw[size_t(i)]));
}

TEST_CASE("iterate adjoint (a dynamic loop) matches finite differences") {
  const int n = 16;
  std::vector<double> x(n), c(n), out(n, 0), g(n, 1.0), dx(n, 3.0), dc(n, 3.0);
  for (int i = 0; i < n; ++i) {
    x[size_t(i)] = 0.1 * i;
    c[size_t(i)] = 0.5 + 0.01 * i;
  }
  auto forward = [&](std::vector<double>& xs, std::vector<double>& res) {
    FrameBuilder b;
    b.arg(xla::kF64, {n}, xs.data()).arg(xla::kF64, {n}, c.data()).ret(xla::kF64, {n}, res.data());
    b.attr_string("kjit_kernel", "demo::iterate").attr_scalar("n", xla::kS32, int32_t(7));
    auto o = call(&kjit_xla_launch_cpu, b.frame());
    REQUIRE_MESSAGE(o.ok, o.message);
  };
  forward(x, out);
  FrameBuilder b;
  b.arg(xla::kF64, {n}, x.data()).arg(xla::kF64, {n}, c.data()).arg(xla::kF64, {n}, out.data());
  b.arg(xla::kF64, {n}, g.data()).ret(xla::kF64, {n}, dx.data()).ret(xla::kF64, {n}, dc.data());
  b.attr_string("kjit_kernel", "demo::iterate").attr_scalar("n", xla::kS32, int32_t(7));
  auto o = call(&kjit_xla_adjoint_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  const double h = 1e-6;
  for (int i = 0; i < n; ++i) {
    std::vector<double> xp = x, xm = x, rp(n), rm(n);
    xp[size_t(i)] += h;
    xm[size_t(i)] -= h;
    forward(xp, rp);
    forward(xm, rm);
    CHECK(dx[size_t(i)] == doctest::Approx((rp[size_t(i)] - rm[size_t(i)]) / (2 * h)).epsilon(1e-5));
  }
}

TEST_CASE("an empty launch is a no-op") {
  std::vector<float> none;
  FrameBuilder b = saxpy_frame(none, none, 1.f, none);
  CHECK(call(&kjit_xla_launch_cpu, b.frame()).ok);
}
