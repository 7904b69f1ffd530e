// What the GPU benchmark programs share: the skip without a GPU, CUDA-event timing of work on a
// stream, medians, and the result lines scripts/gpu_check.sh collects.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cuda/driver_api.hpp"
#include "kjit/kjit.hpp"

namespace kjit::gpu_bench {

/// Exits cleanly (status 0, "SKIPPED" and why) when no CUDA GPU is usable; else prints what
/// the benchmark runs on and returns cuda:0.
inline Device require_gpu(const char* program) {
  if (cuda::device_count() == 0) {
    std::printf("%s: SKIPPED, no usable CUDA GPU: %s\n", program, cuda::unavailable_reason().c_str());
    std::exit(0);
  }
  const cuda::DeviceProperties& p = cuda::properties(0);
  std::printf("%s on cuda:0: %s (compute capability %d.%d, %d SMs, %.1f GiB), kjit target %s\n",
              program, p.name.c_str(), p.major, p.minor, p.sm_count,
              double(p.total_memory) / double(1ull << 30), cuda::target_for(0).name().c_str());
  return Device::cuda(0);
}

/// A result line: "KJIT_BENCH <name> <value> <unit>", what the GPU check script summarises.
inline void report(const std::string& name, double value, const char* unit) {
  std::printf("KJIT_BENCH %s %.6g %s\n", name.c_str(), value, unit);
}

/// Median GPU time in milliseconds of `work` enqueued on `stream`, over `reps` runs (each
/// timed by a pair of CUDA events), after one untimed warm-up run.
inline double median_gpu_ms(const Stream& stream, int reps, const std::function<void()>& work) {
  const cuda::DriverApi& api = cuda::api();
  cuda::ContextScope scope(stream.device().ordinal());
  CUstream s = cuda::to_cu_stream(stream.handle());
  CUevent start = nullptr, stop = nullptr;
  KJIT_CU(api.cuEventCreate(&start, CU_EVENT_DEFAULT));
  KJIT_CU(api.cuEventCreate(&stop, CU_EVENT_DEFAULT));
  work();
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    KJIT_CU(api.cuEventRecord(start, s));
    work();
    KJIT_CU(api.cuEventRecord(stop, s));
    KJIT_CU(api.cuEventSynchronize(stop));
    float ms = 0;
    KJIT_CU(api.cuEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  api.cuEventDestroy(start);
  api.cuEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace kjit::gpu_bench
