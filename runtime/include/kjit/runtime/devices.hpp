// kjit/runtime/devices.hpp — the CUDA driver and devices of this machine as kjit sees them:
// what `kjit devices` prints, and what a program can check before choosing a device.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kjit {

/// One CUDA device.
struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  size_t total_memory = 0;  ///< bytes
  int max_threads_per_block = 0;
  int max_blocks_per_sm = 0;  ///< resident blocks per multiprocessor
  /// What kjit compiles for it: "sm_90" (a cubin for its exact architecture) or "compute_90"
  /// (PTX the driver JIT-compiles, when NVRTC does not know the device's architecture).
  /// Empty when the device is older than anything NVRTC compiles for (see `target_error`).
  std::string target;
  std::string target_error;
};

/// The CUDA driver and its devices.
struct CudaInfo {
  bool available = false;
  std::string unavailable_reason;  ///< why not, when !available
  std::string driver_path;         ///< the library opened (libcuda.so.1 or $KJIT_CUDA_DRIVER)
  int driver_version = 0;          ///< e.g. 13000 for CUDA 13.0 (0 when no driver was opened)
  std::vector<CudaDeviceInfo> devices;
};

/// Opens the driver if needed (never throws) and describes it and every device.
CudaInfo cuda_info();

}  // namespace kjit
