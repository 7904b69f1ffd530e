// C++ callables (several kernel launches as one FFI target) and generic callbacks, driven
// with hand-built frames on the cpu; the LRU graph cache of GraphMode::Kjit.
#include <doctest/doctest.h>

#include "frame_builder.hpp"
#include "graph_cache.hpp"
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

TEST_CASE("the graph cache keeps the most recently used graphs within its bound") {
  std::vector<intptr_t> destroyed;
  ffi::detail::GraphCache cache([&](void* g) { destroyed.push_back(intptr_t(g)); }, 2);
  cache.insert({1}, reinterpret_cast<void*>(11));
  cache.insert({2}, reinterpret_cast<void*>(22));
  CHECK(cache.find({1}) == reinterpret_cast<void*>(11));  // 1 is now the most recent
  cache.insert({3}, reinterpret_cast<void*>(33));         // evicts 2
  CHECK(destroyed == std::vector<intptr_t>{22});
  CHECK(cache.find({2}) == nullptr);
  CHECK(cache.size() == 2);
  cache.set_max(1);
  CHECK(cache.size() == 1);
  CHECK(cache.find({3}) == reinterpret_cast<void*>(33));
  cache.clear();
  CHECK(cache.size() == 0);
  CHECK(destroyed.size() == 3);
}
