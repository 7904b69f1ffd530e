// kjit/compiler/artifact.hpp — the compiler's output: a loadable module image and its metadata.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjit/compiler/kernel_description.hpp"
#include "kjit/compiler/target.hpp"

namespace kjit::compiler {

/// Where an artifact came from on this request.
enum class ArtifactOrigin { Compiled, Cached };

/// A built module for one target.
struct Artifact {
  std::string module_name;
  std::string key;        ///< 64 hex digits of SHA-256 (the module key)
  Target target;
  ArtifactOrigin origin = ArtifactOrigin::Compiled;
  double compile_ms = 0;  ///< time spent compiling on this request (0 on a hit)

  /// Cubin or PTX bytes, ready for cuModuleLoadData (PTX is NUL-terminated). Empty for `cpu`.
  std::vector<char> image;
  /// `cpu`: the path of the shared object to dlopen (a cache file, or an in-memory file when
  /// the cache folder cannot be used). Empty for GPU targets.
  std::string library_path;
  /// `cpu`: what to dlopen. On a hit, `/proc/self/fd/N` of the descriptor the artifact was
  /// verified through (so the file loaded is the file checked, whatever replaces the path in
  /// between); else `library_path`. Keep the Artifact alive while the library is loaded: the
  /// descriptor must not be reused for another file under the same name.
  std::string load_path;
  /// Keeps load_path's descriptor open (null when load_path is a plain path).
  std::shared_ptr<const int> load_fd;
  /// The content of meta.json (see docs/CACHE.md).
  nlohmann::json meta;
  /// meta.json's `kernels`, parsed and validated (and on a hit, cross-checked with codegen).
  std::vector<KernelDescription> kernels;
};

}  // namespace kjit::compiler
