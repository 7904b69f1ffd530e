// Modules built and loaded per device, and each kernel's entry points there; the launch
// path finds them without locks once they are loaded (internal).
#pragma once

#include <atomic>
#include <map>
#include <string>

#include "kjit/compiler/artifact.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/device.hpp"

namespace kjit::detail {

struct LoadedModule;

/// What a CUDA launch of one entry point needs besides its handle, read once when its module
/// is loaded (all zero on the cpu).
struct CudaEntryFacts {
  int max_threads = 0;                ///< CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  unsigned dynamic_shared_bytes = 0;  ///< meta.json: the kernel's dynamic_shared_bytes
  unsigned static_shared_bytes = 0;   ///< meta.json: the entry's resources (cubins; else 0)
};

/// A kernel's entry points in a module loaded on one device.
struct KernelEntry {
  void* forward = nullptr;    ///< cpu: the entry function; CUDA: the CUfunction
  void* adjoint = nullptr;    ///< null when the kernel has no adjoint (see adjoint_error)
  std::string adjoint_error;  ///< why there is no adjoint, when there is none
  CudaEntryFacts forward_cuda, adjoint_cuda;  ///< CUDA: each entry point's launch facts
  const LoadedModule* module = nullptr;
  uint64_t generation = 0;    ///< the module generation the entry was built for
};

/// One module (a set of kernels compiled together) loaded on one device. Never unloaded:
/// launches may be in flight, and a stream may be capturing a graph.
struct LoadedModule {
  std::string name;
  Device device;
  uint64_t generation = 0;
  ModuleOptions options;
  compiler::Artifact artifact;
  void* library = nullptr;         ///< cpu: the dlopen handle
  void* cuda_module = nullptr;     ///< CUDA: the CUmodule
  void* status = nullptr;          ///< the module's status word (host or device address)
  bool checks = false;             ///< a kernel has device-side checks: read status after every launch
  std::map<int, std::string> loop_locations;  ///< status code -> the loop's source location
  std::map<std::string, KernelEntry> kernels;  ///< by qualified kernel name
  double load_milliseconds = 0;  ///< the whole first load: trace, key, build or cache, load
};


/// The entries of `kernel` on `device`. The first call (and the first after the kernel's
/// module changed) builds — or finds in the disk cache — and loads the module.
const KernelEntry& kernel_entry(const KernelDef& kernel, const Device& device);

/// The module `module` loaded on `device` (built or loaded on first use).
const LoadedModule& module_on(const ModuleDef& module, const Device& device);

/// The status code a failed device-side check (expect_near) reports (kj::kStatusCheckFailed).
constexpr int32_t kStatusCheckFailed = 0x7fff0001;

/// Reads and clears the module's status word after an adjoint launch of `kernel` (and after
/// any launch of a module with device-side checks; on CUDA, in order on the launch's
/// `stream`); throws a User error naming the loop when one exceeded its checkpoint bound, or
/// saying that a check failed. Skipped while the thread captures a CUDA graph (a read would
/// break it).
void check_status(const LoadedModule& module, const KernelDef& kernel, void* stream = nullptr);

}  // namespace kjit::detail
