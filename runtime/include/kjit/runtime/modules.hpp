// kjit/runtime/modules.hpp — building modules for targets and loading them on devices ahead
// of their first launch, with what each step did (compiled or cached, how long).
#pragma once

#include <string>
#include <vector>

#include "kjit/runtime/device.hpp"

namespace kjit {

/// What building one module for one target did.
struct ModuleBuild {
  std::string module;
  std::string target;     ///< "cpu", "sm_90", "compute_90"
  std::string key;        ///< the module key (64 hex digits)
  bool from_cache = false;
  double milliseconds = 0;  ///< compile time, or the cache lookup when from_cache
  size_t bytes = 0;         ///< size of the artifact
};

/// What loading a module on a device did.
struct ModuleLoad {
  ModuleBuild build;
  std::string device;
  double load_milliseconds = 0;  ///< tracing, key, cache or compile, load: the whole first call
};

/// Builds (or finds in the disk cache) and loads module `module_name` on `device`, so that
/// no launch of its kernels there compiles or loads anything. Idempotent: later calls
/// return what the first one did.
ModuleLoad load_module(const std::string& module_name, const Device& device);

/// Which devices to load a module on ahead of its first launch.
enum class PreloadMode { None, CurrentDevice, AllDevices };
/// Loads the module on the devices `mode` names (CurrentDevice: default_device();
/// AllDevices: every CUDA device, or the cpu when there is none).
std::vector<ModuleLoad> preload_module(const std::string& module_name, PreloadMode mode);

/// Builds module `module_name` for `target` ("sm_90", "compute_90", "cpu") into the disk
/// cache without loading it (for deployment, and for GPUs this machine does not have).
ModuleBuild build_module_for(const std::string& module_name, const std::string& target);

}  // namespace kjit
