// The CUDA driver as the backend calls it: the table of entry points resolved at run time from
// driver_symbols.def, the per-device state, CUresult checking and the context guard.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/compiler/target.hpp"
#include "cuda/driver_types.hpp"

namespace kjit::cuda {

/// The oldest driver kjit accepts: the newest ABI version among the entry points it calls
/// (driver_symbols.def), below which cuGetProcAddress cannot hand them all out. Code built by
/// a newer NVRTC needs a driver of at least its major release too (checked per device).
constexpr int kMinDriverVersion = [] {
  int newest = 0;
#define KJIT_CUDA_SYMBOL(name, version, exported, parameters) newest = newest > version ? newest : version;
#include "cuda/driver_symbols.def"
#undef KJIT_CUDA_SYMBOL
  return newest;
}();

/// "12.8" for a CUDA version number (12080), as cuDriverGetVersion and NVRTC report them.
inline std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

/// Every driver entry point kjit calls, typed by the exact ABI version it was resolved for
/// (`api.cuMemAlloc(...)` calls the cuMemAlloc_v2 ABI).
struct DriverApi {
#define KJIT_CUDA_SYMBOL(name, version, exported, parameters) CUresult(CUDAAPI* name) parameters = nullptr;
#include "cuda/driver_symbols.def"
#undef KJIT_CUDA_SYMBOL
};

/// One device: what it is, what kjit compiles for it, and its primary context (retained on
/// first use, once, and released when the driver state goes away).
struct DeviceState {
  int ordinal = 0;
  CUdevice handle = 0;
  DeviceProperties props;
  /// What to compile for it; `target_error` says why there is none (too old for NVRTC).
  compiler::Target target;
  std::string target_error;

  std::once_flag context_once;
  std::atomic<CUcontext> context{nullptr};
};

/// The opened driver. Built once per process (or per reset_for_testing), never throws:
/// `reason` says why CUDA is unusable, and is empty when it is usable.
struct Driver {
  std::string reason;
  std::string path;         ///< what was dlopen-ed
  void* library = nullptr;  ///< the dlopen handle (never closed: see driver_loader.cpp)
  int version = 0;          ///< cuDriverGetVersion, e.g. 13000
  bool via_proc_address = false;  ///< entry points came from cuGetProcAddress (else dlsym)
  DriverApi api;
  std::vector<std::unique_ptr<DeviceState>> devices;

  ~Driver();
};

/// The driver, opened and initialised on first use; thread-safe, never throws.
Driver& driver();
/// The entry points; throws the Driver error unavailable_reason() describes when unusable.
const DriverApi& api();
/// Device `ordinal`; a Driver error when CUDA is unusable or the ordinal is out of range.
DeviceState& device(int ordinal);
/// The primary context of `dev`, retained on first use (thread-safe).
CUcontext primary_context(DeviceState& dev);

/// Throws a Driver error naming `call` with the driver's own error name and description.
[[noreturn]] void throw_driver_error(CUresult result, const std::string& call);
/// Throws (as above) unless `result` is CUDA_SUCCESS.
inline void check(CUresult result, const char* call) {
  if (result != CUDA_SUCCESS) throw_driver_error(result, call);
}
/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a result code.
std::string describe(CUresult result);
/// The same with an explicit entry point table (while the driver is being opened).
std::string describe(const DriverApi& api, CUresult result);

/// Checks a driver call and names it in the error: KJIT_CU(api.cuMemAlloc(&p, bytes)).
#define KJIT_CU(call) ::kjit::cuda::check((call), #call)

/// Makes a device's primary context current on this thread for the object's lifetime, and
/// restores the caller's context afterwards. Costs one cuCtxGetCurrent when the context is
/// already current (XLA and repeat launches), a push and a pop otherwise.
class ContextScope {
 public:
  explicit ContextScope(DeviceState& dev);
  explicit ContextScope(int ordinal) : ContextScope(device(ordinal)) {}
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  bool pushed_ = false;
};

/// The stream handle the driver gets for a kjit stream: the per-thread default stream for
/// nullptr (so that threads launching on "the default stream" do not serialise each other).
inline CUstream to_cu_stream(void* stream) {
  return stream ? static_cast<CUstream>(stream) : CU_STREAM_PER_THREAD;
}

/// The stream the calling thread is capturing (nullptr when none).
void* this_thread_capture_stream();

namespace detail {
/// Forgets the opened driver and its devices (releasing primary contexts) so that the next
/// call opens the driver again, re-reading KJIT_CUDA_DRIVER. For tests only: nothing may hold
/// device memory, modules or streams of the old state, and no other thread may use CUDA.
void reset_for_testing();
}  // namespace detail

}  // namespace kjit::cuda
