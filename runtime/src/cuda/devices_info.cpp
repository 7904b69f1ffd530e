// The public description of the CUDA driver and devices (kjit/runtime/devices.hpp).
#include "kjit/runtime/devices.hpp"

#include "cuda/driver_api.hpp"

namespace kjit {

CudaInfo cuda_info() {
  cuda::Driver& d = cuda::driver();
  CudaInfo info;
  info.available = d.reason.empty();
  info.unavailable_reason = d.reason;
  info.driver_path = d.path;
  info.driver_version = d.version;
  if (!info.available) return info;
  for (const auto& dev : d.devices) {
    CudaDeviceInfo out;
    const cuda::DeviceProperties& p = dev->props;
    out.ordinal = dev->ordinal;
    out.name = p.name;
    out.compute_major = p.major;
    out.compute_minor = p.minor;
    out.sm_count = p.sm_count;
    out.total_memory = p.total_memory;
    out.max_threads_per_block = p.max_threads_per_block;
    out.max_blocks_per_sm = p.max_blocks_per_sm;
    if (dev->target_error.empty()) out.target = dev->target.name();
    out.target_error = dev->target_error;
    info.devices.push_back(out);
  }
  return info;
}

}  // namespace kjit
