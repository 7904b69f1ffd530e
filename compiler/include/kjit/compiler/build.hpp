// kjit/compiler/build.hpp — turns a module's source into an artifact, through the disk cache.
#pragma once

#include <string>
#include <vector>

#include "kjit/compiler/artifact.hpp"
#include "kjit/compiler/compile_options.hpp"
#include "kjit/compiler/module_source.hpp"
#include "kjit/compiler/target.hpp"

namespace kjit::compiler {

class Cache;

/// The module key: SHA-256 over the kjit format version, the ABI version, the text, the
/// target, the options' fingerprint and the compiler's identity (NVRTC version or host
/// compiler). Deterministic across processes and build folders.
std::string module_key(const ModuleSource& source, const Target& target,
                       const CompileOptions& options);

/// Returns the artifact of `source` for `target`: a verified cache entry when one exists,
/// else compiles (NVRTC or the host compiler) and publishes atomically. Throws a Compile error
/// carrying the compiler log (mapped to the user's lines through #line) on failure, and a
/// User error naming the module, the target and the `kjit precompile` command when
/// KJIT_NO_COMPILE=1 and the cache misses.
Artifact build_module(const ModuleSource& source, const Target& target,
                      const CompileOptions& options);
/// As above, with an explicit cache.
Artifact build_module(const ModuleSource& source, const Target& target,
                      const CompileOptions& options, Cache& cache);

/// One request of a parallel build.
struct BuildRequest {
  const ModuleSource* source = nullptr;
  Target target;
  CompileOptions options;
};

/// The outcome of one parallel build request: an artifact, or the error message.
struct BuildResult {
  bool ok = false;
  Artifact artifact;
  std::string error;
};

/// Builds many (module, target) pairs at once on an llvm::ThreadPool of `jobs` threads
/// (0 = hardware concurrency). Results are in request order; failures do not stop others.
std::vector<BuildResult> build_modules(const std::vector<BuildRequest>& requests, Cache& cache,
                                       unsigned jobs = 0);

}  // namespace kjit::compiler
