// GPU throughput: saxpy as a fraction of the device's measured device-to-device copy bandwidth,
// and the adjoint-to-forward time ratio of elementwise and looping kernels. A plain program
// (no Google Benchmark): GPU time from CUDA events, medians of repeated runs.
#include "gpu_bench_support.hpp"
#include "loops.hpp"
#include "saxpy.hpp"

using namespace kjit;
using namespace kjit::gpu_bench;

int main() {
  Device gpu = require_gpu("bench_gpu_bandwidth");
  const cuda::DeviceProperties& props = cuda::properties(0);
  // 256 MiB per float array (three of them for saxpy, six for its adjoint), or less on small GPUs.
  int64_t n = int64_t(1) << 26;
  while (n > (1 << 20) && size_t(n) * 4 * 8 > props.total_memory / 2) n /= 2;
  const size_t bytes = size_t(n) * sizeof(float);
  const int reps = 20;
  Stream stream = Stream::create(gpu);
  LaunchOptions on_stream;
  on_stream.stream = stream;

  auto x = NdArray::zeros(ir_type_of<float>(), {n}, gpu);
  auto y = NdArray::zeros(ir_type_of<float>(), {n}, gpu);
  auto out = NdArray::zeros(ir_type_of<float>(), {n}, gpu);
  auto adj_x = NdArray::zeros(ir_type_of<float>(), {n}, gpu);
  auto adj_y = NdArray::zeros(ir_type_of<float>(), {n}, gpu);
  auto adj_out = NdArray::zeros(ir_type_of<float>(), {n}, gpu);
  stream.synchronize();

  // 1. Device-to-device copy: the bandwidth a streaming kernel can hope for (read + write).
  double copy_ms = median_gpu_ms(stream, reps, [&] {
    cuda::copy(0, out.data(), x.data(), bytes, cuda::CopyKind::DeviceToDevice, stream.handle());
  });
  double copy_gbs = 2.0 * double(bytes) / (copy_ms * 1e6);
  std::printf("device-to-device copy of %zu MiB: %.3f ms, %.1f GB/s (read + write)\n", bytes >> 20,
              copy_ms, copy_gbs);

  // 2. saxpy: reads x and y, writes out.
  std::vector<LaunchArg> args{x, y, 2.0f, out};
  double fwd_ms = median_gpu_ms(stream, reps, [&] { launch(demo::saxpy.def(), n, args, on_stream); });
  double saxpy_gbs = 3.0 * double(bytes) / (fwd_ms * 1e6);
  std::printf("saxpy forward, n = %lld: %.3f ms, %.1f GB/s = %.2f of copy bandwidth\n",
              static_cast<long long>(n), fwd_ms, saxpy_gbs, saxpy_gbs / copy_gbs);

  // 3. Its adjoint: reads adj_out (and x for a's gradient), accumulates into adj_x and adj_y.
  std::vector<LaunchArg> adj{adj_x, adj_y, {}, adj_out};
  double adj_ms = median_gpu_ms(stream, reps, [&] {
    launch_adjoint(demo::saxpy.def(), n, args, adj, on_stream);
  });
  std::printf("saxpy adjoint: %.3f ms, adjoint / forward = %.2f\n", adj_ms, adj_ms / fwd_ms);

  // 4. A loop-carried kernel (checkpointed adjoint): damp over n / 4 vec3f.
  int64_t m = n / 4;
  auto v = NdArray::zeros(ir_type_of<vec3f>(), {m}, gpu);
  auto w = NdArray::zeros(ir_type_of<vec3f>(), {m}, gpu);
  auto adj_v = NdArray::zeros(ir_type_of<vec3f>(), {m}, gpu);
  auto adj_w = NdArray::zeros(ir_type_of<vec3f>(), {m}, gpu);
  std::vector<LaunchArg> dargs{v, 0.9f, int32_t(8), w};
  std::vector<LaunchArg> dadj{adj_v, {}, {}, adj_w};
  double damp_fwd = median_gpu_ms(stream, reps, [&] { launch(demo::damp.def(), m, dargs, on_stream); });
  double damp_adj = median_gpu_ms(stream, reps, [&] {
    launch_adjoint(demo::damp.def(), m, dargs, dadj, on_stream);
  });
  std::printf("damp (8 loop steps), n = %lld: forward %.3f ms, adjoint %.3f ms, ratio %.2f\n",
              static_cast<long long>(m), damp_fwd, damp_adj, damp_adj / damp_fwd);

  report("copy_bandwidth", copy_gbs, "GB/s");
  report("saxpy_bandwidth", saxpy_gbs, "GB/s");
  report("saxpy_fraction_of_copy", saxpy_gbs / copy_gbs, "x");
  report("saxpy_adjoint_over_forward", adj_ms / fwd_ms, "x");
  report("damp_adjoint_over_forward", damp_adj / damp_fwd, "x");
  return 0;
}
