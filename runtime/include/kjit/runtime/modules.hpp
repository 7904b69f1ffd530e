// kjit/runtime/modules.hpp — building modules for targets and loading them on devices ahead
// of their first launch, with what each step did (compiled or cached, how long).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kjit/module_options.hpp"
#include "kjit/runtime/device.hpp"

namespace kjit::compiler {
class Cache;
}

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

/// Makes the tangent kernels (forward mode, kjit::tangent_of) of every kernel of module
/// `module_name` that has one, and returns the name of the module holding them,
/// "<module>.tangent", or "" when no kernel has a tangent. Building that module is what
/// `kjit precompile --tangent` adds; the kernels' first launch_tangent then compiles nothing.
std::string make_tangent_module(const std::string& module_name);

/// Builds module `module_name` for `target` ("sm_90", "compute_90", "cpu") into the disk
/// cache without loading it (for deployment, and for GPUs this machine does not have).
ModuleBuild build_module_for(const std::string& module_name, const std::string& target);

/// One (module, target) pair for build_modules_for.
struct ModuleBuildRequest {
  std::string module;
  std::string target;                    ///< "cpu", "sm_90", "compute_90"
  std::optional<ModuleOptions> options;  ///< instead of the module's own (e.g. no adjoints)
};

/// What build_modules_for did with one request.
struct ModuleBuildResult {
  bool ok = false;
  /// module and target always (the target as parsed when it parses); the key as soon as the
  /// module traced; the rest when ok. `milliseconds` is the request's wall time: the cache
  /// lookup for a hit, code generation + compile + publish for a miss.
  ModuleBuild build;
  std::string error;  ///< when !ok: the whole message (a compile error carries the log)
};

/// Called once per finished request, by one thread at a time, as builds finish (progress).
/// It must not throw.
using ModuleBuildCallback = std::function<void(size_t index, const ModuleBuildResult& result)>;

/// Builds many (module, target) pairs into `cache` at once, on `jobs` threads (0: one per
/// hardware thread), without loading them: what `kjit precompile` does. Results are in
/// request order. A failure (unknown module or target, tracing error, compile error) is
/// reported in its result and does not stop the others; nothing throws.
std::vector<ModuleBuildResult> build_modules_for(const std::vector<ModuleBuildRequest>& requests,
                                                 compiler::Cache& cache, unsigned jobs = 0,
                                                 const ModuleBuildCallback& on_done = {});

}  // namespace kjit
