// CUresult into kjit errors: the failing call, the driver's error name and its description.
#include "cuda/driver_api.hpp"
#include "kjit/error.hpp"

namespace kjit::cuda {

std::string describe(const DriverApi& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName) api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString) api.cuGetErrorString(result, &text);
  std::string out = name ? name : "CUresult " + std::to_string(int(result));
  if (text) out += std::string(" (") + text + ")";
  return out;
}

std::string describe(CUresult result) { return describe(driver().api, result); }

void throw_driver_error(CUresult result, const std::string& call) {
  std::string hint;
  if (result == CUDA_ERROR_OUT_OF_MEMORY)
    hint = "; free device arrays or use a smaller problem";
  else if (result == CUDA_ERROR_ILLEGAL_ADDRESS || result == CUDA_ERROR_LAUNCH_FAILED)
    hint = "; a kernel accessed memory out of bounds earlier on this device, which leaves the "
           "context unusable: run under compute-sanitizer to find it";
  else if (result == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ||
           result == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
    hint = "; only launches and asynchronous copies may run while a stream is captured";
  throw Error(ErrorKind::Driver, "CUDA driver call " + call + " failed: " + describe(result) + hint);
}

}  // namespace kjit::cuda
