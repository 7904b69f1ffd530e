// Host cost of kjit::launch beyond a raw cuLaunchKernel of the same cubin with the same packed
// parameters: the packing, checks, module lookup and context handling kjit adds per launch.
// A plain program (no Google Benchmark): wall time of batches of asynchronous launches.
#include <chrono>

#include "gpu_bench_support.hpp"
#include "kjit/runtime/internal/module_table.hpp"
#include "param_packer.hpp"
#include "saxpy.hpp"

using namespace kjit;
using namespace kjit::gpu_bench;
using Clock = std::chrono::steady_clock;

namespace {

/// Median host nanoseconds per call of `enqueue`, in batches of `batch` calls with the stream
/// drained between batches (so a full launch queue never blocks the timed loop).
template <class F>
double median_ns_per_launch(const Stream& stream, int batches, int batch, F&& enqueue) {
  std::vector<double> per_call;
  enqueue();
  stream.synchronize();
  for (int b = 0; b < batches; ++b) {
    auto start = Clock::now();
    for (int i = 0; i < batch; ++i) enqueue();
    double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
    stream.synchronize();
    per_call.push_back(ns / batch);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

}  // namespace

int main() {
  Device gpu = require_gpu("bench_gpu_launch_overhead");
  const int batches = 31, batch = 500;
  const int64_t n = 256;  // one block: the GPU work is as small as a launch gets
  Stream stream = Stream::create(gpu);
  auto x = NdArray::zeros(ir_type_of<float>(), {n}, gpu);
  auto y = NdArray::zeros(ir_type_of<float>(), {n}, gpu);
  auto out = NdArray::zeros(ir_type_of<float>(), {n}, gpu);
  std::vector<LaunchArg> args{x, y, 2.0f, out};
  LaunchOptions options;
  options.stream = stream;
  launch(demo::saxpy.def(), n, args, options);  // build (or find) and load the module

  // The same CUfunction and the same parameter bytes kjit would pass.
  const KernelDef& k = demo::saxpy.def();
  void* fn = detail::kernel_entry(k, gpu).forward;
  detail::PackedParams packed;
  detail::pack_launch(packed, k, detail::make_bounds(k, Dims(n)), args, nullptr, gpu);
  const cuda::DriverApi& api = cuda::api();
  CUstream s = static_cast<CUstream>(stream.handle());
  auto raw = [&] {
    api.cuLaunchKernel(static_cast<CUfunction>(fn), 1, 1, 1, 256, 1, 1, 0, s, packed.pointers(),
                       nullptr);
  };
  auto kjit_prebuilt = [&] { launch(k, n, args, options); };
  auto kjit_variadic = [&] {
    launch(k, n, std::vector<LaunchArg>{x, y, 2.0f, out}, options);
  };

  double raw_ns, prebuilt_ns, variadic_ns, cold_ctx_ns;
  {
    // The application's thread holds the context already (as under XLA): kjit pushes nothing.
    cuda::ContextScope scope(0);
    raw_ns = median_ns_per_launch(stream, batches, batch, raw);
    prebuilt_ns = median_ns_per_launch(stream, batches, batch, kjit_prebuilt);
    variadic_ns = median_ns_per_launch(stream, batches, batch, kjit_variadic);
  }
  // No context current on the thread: kjit pushes and pops the primary context per launch.
  cold_ctx_ns = median_ns_per_launch(stream, batches, batch, kjit_prebuilt);

  std::printf("raw cuLaunchKernel (context current):              %8.0f ns per launch\n", raw_ns);
  std::printf("kjit::launch, argument vector built once:          %8.0f ns (+%.0f ns)\n",
              prebuilt_ns, prebuilt_ns - raw_ns);
  std::printf("kjit::launch, argument vector built per call:      %8.0f ns (+%.0f ns)\n",
              variadic_ns, variadic_ns - raw_ns);
  std::printf("kjit::launch, no context current (push/pop):       %8.0f ns (+%.0f ns)\n",
              cold_ctx_ns, cold_ctx_ns - raw_ns);
  report("raw_launch", raw_ns, "ns");
  report("kjit_launch_overhead", prebuilt_ns - raw_ns, "ns");
  report("kjit_launch_overhead_with_args", variadic_ns - raw_ns, "ns");
  report("kjit_launch_overhead_no_context", cold_ctx_ns - raw_ns, "ns");
  return 0;
}
