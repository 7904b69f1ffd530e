// Modules built and loaded per device, and each kernel's entry points there; the launch
// path finds them without locks once they are loaded (internal).
#pragma once

#include <atomic>
#include <map>
#include <string>

#include "kjit/compiler/artifact.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/device.hpp"
#include "kjit/runtime/internal/cpu_dispatch.hpp"
#include "kjit/runtime/internal/shared_arrays.hpp"

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
  /// cpu: what the forward [0] and adjoint [1] entry points cost per index, measured by
  /// their launches (run_cpu_entry decides from it whether the pool pays).
  mutable CpuCost cpu_cost[2];
  /// cpu: the arrays the forward [0] and adjoint [1] entry points only add into.
  CpuPrivateAdds cpu_private[2];
  /// The adjoint's own-element plain adds (every device: where another argument shares their
  /// memory, CUDA flags them atomic and the cpu runs the launch in index order).
  OwnAdds own_adds;
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
  bool checks = false;  ///< device-side checks or bounds mode: read the status after every launch
  bool adjoint_reports = false;  ///< adjoints can report (dynamic loops too): read it after those

  /// Whether a launch (`adjoint` or forward) of this module needs a status slot.
  bool reports(bool adjoint) const { return adjoint ? adjoint_reports : checks; }
  std::map<int, std::string> loop_locations;  ///< status code -> the loop's source location
  std::map<std::string, KernelEntry> kernels;  ///< by qualified kernel name
  double load_milliseconds = 0;  ///< the whole first load: trace, key, build or cache, load
};


/// The entries of `kernel` on `device`. The first call (and the first after the kernel's
/// module changed) builds — or finds in the disk cache — and loads the module.
const KernelEntry& kernel_entry(const KernelDef& kernel, const Device& device);

/// The module `module` loaded on `device` (built or loaded on first use).
const LoadedModule& module_on(const ModuleDef& module, const Device& device);


}  // namespace kjit::detail
