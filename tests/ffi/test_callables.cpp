// C++ callables (several kernel launches as one FFI target) and generic callbacks, driven
// with hand-built frames on the cpu, where every graph mode runs the callable directly (the
// CUDA graph modes are tested on the fake driver in test_callable_graphs.cpp).
#include <doctest/doctest.h>

#include <map>

#include "frame_builder.hpp"
#include "saxpy.hpp"

using namespace kjit;
using kjit::test::FrameBuilder;
using kjit::test::call;

namespace {

const ffi::CallableRegistration twice(
    "tests::saxpy_twice", ffi::params<dsl::Array<float>, dsl::Array<float>, dsl::Float, dsl::Array<float>>(
                              {"x", "y", "a", "out"}),
    [](const ffi::CallContext& ctx) {
      const NdArray& x = ctx.array("x");
      const NdArray& out = ctx.array("out");
      float a = 0;
      std::memcpy(&a, ctx.arg("a").bytes(), sizeof a);
      ctx.launch(demo::saxpy, x.shape(0), {x, ctx.arg("y"), a, out});
      ctx.launch(demo::saxpy, x.shape(0), {out, ctx.arg("y"), a, out});
    });

}  // namespace

TEST_CASE("a callable launches several kernels on XLA's buffers") {
  xla::Handler* h = ffi::callable_handler("tests::saxpy_twice", ffi::GraphMode::Xla, ffi::Platform::Cpu);
  REQUIRE(reinterpret_cast<void*>(h) != nullptr);
  std::vector<float> x{1, 2, 3}, y{10, 20, 30}, out(3);
  FrameBuilder b;
  b.arg(xla::kF32, {3}, x.data()).arg(xla::kF32, {3}, y.data()).ret(xla::kF32, {3}, out.data());
  b.attr_scalar("a", xla::kF32, 2.f);
  auto o = call(h, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  for (int i = 0; i < 3; ++i) CHECK(out[size_t(i)] == 2 * (2 * x[size_t(i)] + y[size_t(i)]) + y[size_t(i)]);

  FrameBuilder c;  // the same validation as kernels
  std::vector<int32_t> xi{1, 2, 3};
  c.arg(xla::kS32, {3}, xi.data()).arg(xla::kF32, {3}, y.data()).ret(xla::kF32, {3}, out.data());
  c.attr_scalar("a", xla::kF32, 2.f);
  auto e = call(h, c.frame());
  CHECK(e.code == xla::kInvalidArgument);
  CHECK(e.message.find("kjit callable 'tests::saxpy_twice': Invalid data type for array argument 'x', expected "
                       "float32, got int32") != std::string::npos);
}

TEST_CASE("callable traits follow the graph mode; one handler per callable and mode") {
  auto probe = [](xla::Handler* h) {
    xla::Metadata md{};
    xla::MetadataExtension ext{};
    ext.extension_base = {sizeof ext, xla::kExtensionMetadata, nullptr};
    ext.metadata = &md;
    FrameBuilder b;
    b.frame()->extension_start = &ext.extension_base;
    REQUIRE(call(h, b.frame()).ok);
    return md.traits;
  };
  auto* xla_mode = ffi::callable_handler("tests::saxpy_twice", ffi::GraphMode::Xla, ffi::Platform::Cuda);
  auto* none = ffi::callable_handler("tests::saxpy_twice", ffi::GraphMode::None, ffi::Platform::Cuda);
  CHECK(reinterpret_cast<void*>(xla_mode) != reinterpret_cast<void*>(none));
  CHECK(reinterpret_cast<void*>(xla_mode) ==
        reinterpret_cast<void*>(ffi::callable_handler("tests::saxpy_twice", ffi::GraphMode::Xla, ffi::Platform::Cuda)));
  CHECK(probe(xla_mode) == 1u);
  CHECK(probe(none) == 0u);
  CHECK(reinterpret_cast<void*>(ffi::callable_handler("tests::nope", ffi::GraphMode::Xla, ffi::Platform::Cpu)) == nullptr);
}

TEST_CASE("a callback gets typed views of buffers, attributes and context") {
  std::map<std::string, ffi::AttrValue> seen;
  ffi::register_callback("tests::double_it", [&](ffi::CallbackContext& ctx) {
    seen = ctx.attrs;
    REQUIRE(ctx.inputs.size() == 1);
    REQUIRE(ctx.outputs.size() == 1);
    CHECK(ctx.inputs[0].dtype_name == "float32");
    CHECK(ctx.platform == ffi::Platform::Cpu);
    NdArray in = ctx.inputs[0].as_array(ir::Type::scalar_of(ir::Scalar::F32), ctx.device);
    NdArray out = ctx.outputs[0].as_array(ir::Type::scalar_of(ir::Scalar::F32), ctx.device);
    float scale = float(ctx.attrs.at("scale").f);
    auto* src = static_cast<float*>(in.data());
    auto* dst = static_cast<float*>(out.data());
    for (int64_t i = 0; i < in.size(); ++i) dst[i] = scale * src[i];
  });
  xla::Handler* h = ffi::callback_handler("tests::double_it", ffi::Platform::Cpu);
  REQUIRE(reinterpret_cast<void*>(h) != nullptr);
  std::vector<float> in{1, 2}, out(2);
  FrameBuilder b;
  b.arg(xla::kF32, {2}, in.data()).ret(xla::kF32, {2}, out.data());
  b.attr_scalar("scale", xla::kF64, 3.0).attr_string("tag", "hello");
  b.attr_array<int32_t>("dims", xla::kS32, {4, 5});
  REQUIRE(call(h, b.frame()).ok);
  CHECK(out == std::vector<float>{3, 6});
  CHECK(seen.at("tag").str == "hello");
  CHECK(seen.at("dims").ints == std::vector<int64_t>{4, 5});

  ffi::register_callback("tests::throws", [](ffi::CallbackContext&) { throw Error(ErrorKind::User, "bad input"); });
  auto o = call(ffi::callback_handler("tests::throws", ffi::Platform::Cpu), b.frame());
  CHECK(o.code == xla::kInvalidArgument);
  CHECK(o.message == "kjit callback 'tests::throws': bad input");
  CHECK(ffi::unregister_callback("tests::throws"));
  CHECK(reinterpret_cast<void*>(ffi::callback_handler("tests::throws", ffi::Platform::Cpu)) == nullptr);
}

TEST_CASE("on the cpu platform every graph mode runs the callable as None does") {
  std::vector<float> x{1, 2, 3}, y{10, 20, 30};
  for (ffi::GraphMode mode : {ffi::GraphMode::None, ffi::GraphMode::Xla, ffi::GraphMode::Kjit,
                              ffi::GraphMode::KjitStagedEx, ffi::GraphMode::KjitStaged}) {
    CAPTURE(ffi::to_string(mode));
    xla::Handler* h = ffi::callable_handler("tests::saxpy_twice", mode, ffi::Platform::Cpu);
    REQUIRE(reinterpret_cast<void*>(h) != nullptr);
    for (int call_no = 0; call_no < 2; ++call_no) {  // a second call runs again: nothing is replayed
      std::vector<float> out(3, -1.f);
      FrameBuilder b;
      b.arg(xla::kF32, {3}, x.data()).arg(xla::kF32, {3}, y.data()).ret(xla::kF32, {3}, out.data());
      b.attr_scalar("a", xla::kF32, float(call_no + 2));
      auto o = call(h, b.frame());
      REQUIRE_MESSAGE(o.ok, o.message);
      const float a = float(call_no + 2);
      for (size_t i = 0; i < 3; ++i) CHECK(out[i] == a * (a * x[i] + y[i]) + y[i]);
    }
  }
  CHECK(ffi::graph_cache_size("tests::saxpy_twice") == 0);  // no graph on the cpu
}

TEST_CASE("staging options must name array parameters") {
  ffi::CallableOptions o;
  o.stage_in = std::vector<std::string>{"a"};
  auto params = ffi::params<dsl::Array<float>, dsl::Float>({"x", "a"});
  CHECK_THROWS_WITH_AS(ffi::register_callable("tests::bad_stage", params, [](const ffi::CallContext&) {}, o),
                       "register_callable('tests::bad_stage'): CallableOptions::stage_in names 'a', which is not an "
                       "array parameter of the callable",
                       Error);
  o.stage_in.reset();
  o.stage_out = std::vector<std::string>{"nope"};
  CHECK_THROWS_AS(ffi::register_callable("tests::bad_stage", params, [](const ffi::CallContext&) {}, o), Error);
  o.stage_out.reset();
  o.graph_cache_max = -1;
  CHECK_THROWS_AS(ffi::register_callable("tests::bad_stage", params, [](const ffi::CallContext&) {}, o), Error);
  CHECK_FALSE(ffi::unregister_callable("tests::bad_stage"));
}
