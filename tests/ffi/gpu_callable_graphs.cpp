// The callables' CUDA graph modes on a real GPU (ctest label gpu): through the CUDA handler with
// hand-built frames, every mode gives exactly what the eager launches (GraphMode::None) give,
// call after call, with new buffer addresses and a changing static value. Exits 77 (skipped),
// saying why, without a usable GPU.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "frame_builder.hpp"
#include "kjit/ffi.hpp"
#include "saxpy.hpp"

using namespace kjit;

namespace {

const bool kGpuUsable = [] {
  if (cuda::device_count() > 0) return true;
  std::fprintf(stderr, "SKIPPED: the ffi_graphs_gpu test needs a usable CUDA GPU (%s)\n",
               cuda::unavailable_reason().c_str());
  std::exit(77);
}();

constexpr int64_t kN = 1 << 16;

/// out = a x + y (a kernel), then x_copy = x (a copy on the stream).
const ffi::CallableRegistration g_step(
    "gpu_graphs::step",
    ffi::params<dsl::Array<float>, dsl::Array<float>, dsl::Float, dsl::Array<float>, dsl::Array<float>>(
        {"x", "y", "a", "out", "x_copy"}),
    [](const ffi::CallContext& ctx) {
      const NdArray& x = ctx.array("x");
      ctx.launch(demo::saxpy, x.shape(0), {x, ctx.arg("y"), ctx.arg("a"), ctx.array("out")});
      NdArray copy = ctx.array("x_copy");
      copy.copy_from(x, ctx.stream());
    },
    [] {
      ffi::CallableOptions o;
      o.preload_kernels = {"demo::saxpy"};
      return o;
    }());

struct Result {
  std::vector<float> out, x_copy;
};

/// Call `i` of a sequence: inputs whose contents depend on i, in one of three buffer sets (so
/// addresses change between calls, and come back), and a static value that changes once.
Result call(ffi::GraphMode mode, int i, const Device& d, const Stream& s, std::vector<std::vector<NdArray>>& sets) {
  std::vector<NdArray>& b = sets[size_t(i % 3)];
  std::vector<float> x(static_cast<size_t>(kN)), y(static_cast<size_t>(kN));
  for (int64_t j = 0; j < kN; ++j) {
    x[size_t(j)] = float(j % 1000) * 0.001f + float(i);
    y[size_t(j)] = 1.0f / float(1 + j % 7);
  }
  b[0].copy_from(NdArray::from_vector(x, {kN}, d));
  b[1].copy_from(NdArray::from_vector(y, {kN}, d));
  kjit::test::FrameBuilder f;
  f.arg(xla::kF32, {kN}, b[0].data()).arg(xla::kF32, {kN}, b[1].data());
  f.ret(xla::kF32, {kN}, b[2].data()).ret(xla::kF32, {kN}, b[3].data());
  f.attr_scalar("a", xla::kF32, i == 4 ? 3.0f : 2.0f);
  auto o = kjit::test::call(ffi::callable_handler("gpu_graphs::step", mode, ffi::Platform::Cuda), f.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  s.synchronize();
  return {b[2].to_vector<float>(), b[3].to_vector<float>()};
}

}  // namespace

TEST_CASE("every graph mode gives the eager launches' results on a GPU") {
  REQUIRE(kGpuUsable);
  Device d = Device::cuda(0);
  Stream s = Stream::create(d);
  kjit::test::set_execution_context(s.handle(), 0);
  auto make_sets = [&] {
    std::vector<std::vector<NdArray>> sets(3);
    for (auto& b : sets)
      for (int k = 0; k < 4; ++k) b.push_back(NdArray::zeros(ir_type_of<float>(), {kN}, d));
    return sets;
  };
  auto eager_sets = make_sets();
  std::vector<Result> want;
  for (int i = 0; i < 8; ++i) want.push_back(call(ffi::GraphMode::None, i, d, s, eager_sets));
  for (ffi::GraphMode mode : {ffi::GraphMode::Kjit, ffi::GraphMode::KjitStagedEx, ffi::GraphMode::KjitStaged}) {
    CAPTURE(ffi::to_string(mode));
    ffi::clear_graph_cache("gpu_graphs::step");
    auto sets = make_sets();
    for (int i = 0; i < 8; ++i) {
      CAPTURE(i);
      Result r = call(mode, i, d, s, sets);
      CHECK(r.out == want[size_t(i)].out);  // bit for bit: the same kernels on the same inputs
      CHECK(r.x_copy == want[size_t(i)].x_copy);
    }
    // Kjit: one graph per buffer set and static value; staged: one per static value.
    CHECK(ffi::graph_cache_size("gpu_graphs::step") == (mode == ffi::GraphMode::Kjit ? 4u : 2u));
  }
  ffi::clear_graph_cache("gpu_graphs::step");
  kjit::test::set_execution_context(nullptr, 0);
}
