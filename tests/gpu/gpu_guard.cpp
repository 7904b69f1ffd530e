// Skips the whole gpu suite, loudly, when no CUDA GPU is usable: prints the driver's reason and
// exits with 77 (ctest's SKIP_RETURN_CODE) before any test runs.
#include <cstdio>
#include <cstdlib>

#include "kjit/runtime/internal/cuda_backend.hpp"

namespace {

const bool kGpuUsable = [] {
  if (kjit::cuda::device_count() > 0) return true;
  std::fprintf(stderr,
               "\n"
               "==================================================================\n"
               " SKIPPED: the gpu suite needs a usable CUDA GPU.\n"
               " Reason: %s\n"
               "==================================================================\n\n",
               kjit::cuda::unavailable_reason().c_str());
  std::fflush(stderr);
  std::exit(77);
}();

}  // namespace
