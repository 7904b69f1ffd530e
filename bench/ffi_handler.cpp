// Per-call host overhead of the XLA FFI launch handler on the cpu platform, with a
// hand-built call frame: the kernel lookup alone (name attribute -> prepared kernel, a
// per-thread hash-map hit), decode + validate + pack (an empty launch), the whole call (plus
// dispatch of a 1-thread launch), and the runtime's own checked launch for comparison.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "frame.hpp"
#include "kernel_info.hpp"
#include "kjit/ffi.hpp"
#include "launch_plan.hpp"
#include "saxpy.hpp"

namespace {

using namespace kjit;

xla::Error* create_error(xla::ErrorCreateArgs*) { return reinterpret_cast<xla::Error*>(1); }

/// A minimal saxpy frame over `n` elements (XLA-owned memory stands in as vectors).
struct SaxpyFrame {
  xla::Api api{};
  std::vector<float> x, y, out;
  int64_t dims[1];
  xla::Buffer bx{}, by{}, bout{};
  void* args[2];
  void* rets[1];
  xla::ArgType arg_types[2] = {xla::kArgBuffer, xla::kArgBuffer};
  xla::RetType ret_types[1] = {xla::kRetBuffer};
  std::string kernel = "demo::saxpy", kernel_name = "kjit_kernel", a_name = "a";
  xla::ByteSpan kernel_value{}, names[2]{};
  xla::ByteSpan* name_ptrs[2];
  float a = 2.f;
  xla::Scalar a_value{};
  xla::AttrType attr_types[2] = {xla::kAttrString, xla::kAttrScalar};
  void* attrs[2];
  xla::CallFrame frame{};

  explicit SaxpyFrame(int64_t n) : x(size_t(n), 1.f), y(size_t(n), 2.f), out(size_t(n)) {
    api.struct_size = sizeof api;
    api.Error_Create = &create_error;
    dims[0] = n;
    auto buf = [&](xla::Buffer& b, std::vector<float>& v) {
      b = xla::Buffer{sizeof b, nullptr, xla::kF32, n ? v.data() : nullptr, 1, dims};
    };
    buf(bx, x);
    buf(by, y);
    buf(bout, out);
    args[0] = &bx;
    args[1] = &by;
    rets[0] = &bout;
    kernel_value = {kernel.data(), kernel.size()};
    names[0] = {kernel_name.data(), kernel_name.size()};
    names[1] = {a_name.data(), a_name.size()};
    name_ptrs[0] = &names[0];
    name_ptrs[1] = &names[1];
    a_value = {xla::kF32, &a};
    attrs[0] = &kernel_value;
    attrs[1] = &a_value;
    frame.struct_size = sizeof frame;
    frame.api = &api;
    frame.stage = xla::kExecute;
    frame.args = {sizeof(xla::Args), nullptr, 2, arg_types, args};
    frame.rets = {sizeof(xla::Rets), nullptr, 1, ret_types, rets};
    frame.attrs = {sizeof(xla::Attrs), nullptr, 2, attr_types, name_ptrs, attrs};
  }
};

void BM_ffi_kernel_info_hit(benchmark::State& state) {
  const std::string_view name = "demo::saxpy";
  ffi::detail::kernel_info(name);  // prepared once; every later lookup is a hit
  for (auto _ : state) benchmark::DoNotOptimize(&ffi::detail::kernel_info(name));
}
BENCHMARK(BM_ffi_kernel_info_hit);

void BM_ffi_kernel_lookup_from_attribute(benchmark::State& state) {
  SaxpyFrame f(0);
  auto lookup = [&] {
    ffi::detail::AttrRef a = ffi::detail::find_attr(f.frame.attrs, ffi::detail::kAttrKernel);
    return &ffi::detail::kernel_info(ffi::detail::attr_string(a, ffi::detail::kAttrKernel));
  };
  if (lookup()->name != "demo::saxpy") state.SkipWithError("wrong kernel");
  for (auto _ : state) benchmark::DoNotOptimize(lookup());
}
BENCHMARK(BM_ffi_kernel_lookup_from_attribute);

void BM_ffi_decode_validate_pack(benchmark::State& state) {
  SaxpyFrame f(0);  // an empty launch: everything but the dispatch
  if (kjit_xla_launch_cpu(&f.frame)) state.SkipWithError("handler failed");
  for (auto _ : state) benchmark::DoNotOptimize(kjit_xla_launch_cpu(&f.frame));
}
BENCHMARK(BM_ffi_decode_validate_pack);

void BM_ffi_launch_1_thread(benchmark::State& state) {
  SaxpyFrame f(1);
  if (kjit_xla_launch_cpu(&f.frame)) state.SkipWithError("handler failed");
  for (auto _ : state) benchmark::DoNotOptimize(kjit_xla_launch_cpu(&f.frame));
}
BENCHMARK(BM_ffi_launch_1_thread);

void BM_runtime_launch_1_thread(benchmark::State& state) {
  auto x = NdArray::from_vector(std::vector<float>{1.f});
  auto y = NdArray::from_vector(std::vector<float>{2.f});
  auto out = zeros<float>({1});
  kjit::launch(demo::saxpy, 1, x, y, 2.f, out);
  for (auto _ : state) kjit::launch(demo::saxpy, 1, x, y, 2.f, out);
}
BENCHMARK(BM_runtime_launch_1_thread);

void BM_ffi_metadata_probe(benchmark::State& state) {
  SaxpyFrame f(1);
  xla::Metadata md{};
  xla::MetadataExtension ext{};
  ext.extension_base = {sizeof ext, xla::kExtensionMetadata, nullptr};
  ext.metadata = &md;
  f.frame.extension_start = &ext.extension_base;
  for (auto _ : state) benchmark::DoNotOptimize(kjit_xla_launch_cuda(&f.frame));
}
BENCHMARK(BM_ffi_metadata_probe);

}  // namespace
