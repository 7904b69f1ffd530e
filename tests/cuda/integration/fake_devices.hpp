// The fake devices of the cuda_launch tests: set up once per process, before kjit first opens
// the driver, and never reset (kjit's module table keeps the modules it loaded on them).
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "fake_cuda_control.hpp"
#include "kjit/compiler/target.hpp"

namespace kjit::test {

/// Compute capability one minor version past the newest architecture NVRTC supports.
inline std::string newer_than_nvrtc() {
  int newest = compiler::nvrtc_supported_archs().back();
  return std::to_string(newest / 10) + "." + std::to_string(newest % 10 + 1);
}

/// Points kjit at the fake driver with devices "8.0" and newer_than_nvrtc(); call it first in
/// every test case. Idempotent.
inline void use_fake_devices() {
  static const bool done = [] {
    ::setenv("KJIT_CUDA_DRIVER", KJIT_FAKE_CUDA_LIBRARY, 1);
    ::setenv("KJIT_FAKE_CUDA_DEVICES", ("8.0," + newer_than_nvrtc()).c_str(), 1);
    fake_cuda::reset();
    return cuda::device_count() == 2;
  }();
  if (!done) throw std::runtime_error("the fake CUDA driver did not load: " + cuda::unavailable_reason());
}

}  // namespace kjit::test
